module github.com/ctxfit/ctxfit/examples/httpserver

go 1.26.0

require (
	github.com/ctxfit/ctxfit v0.0.0-00010101000000-000000000000
	github.com/ctxfit/ctxfit/gateway v0.0.0-00010101000000-000000000000
	github.com/ctxfit/ctxfit/store/redisstore v0.0.0-00010101000000-000000000000
	github.com/ctxfit/ctxfit/telemetry/otelsink v0.0.0-00010101000000-000000000000
	github.com/prometheus/client_golang v1.25.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/stretchr/testify v1.12.1
	go.opentelemetry.io/otel/exporters/prometheus v0.69.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/ctxfit/ctxfit/mcpfit v0.0.0-00010101000000-000000000000 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/gabriel-vasile/mimetype v1.4.16 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-playground/locales v0.14.2 // indirect
	github.com/go-playground/universal-translator v0.18.2 // indirect
	github.com/go-playground/validator/v10 v10.30.6 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/itchyny/gojq v0.12.20 // indirect
	github.com/itchyny/timefmt-go v0.1.9 // indirect
	github.com/leodido/go-urn v1.5.0 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/otlptranslator v1.0.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/redis/go-redis/v9 v9.23.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	go.yaml.in/yaml/v4 v4.0.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/oauth2 v0.37.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// The ctxfit modules of this repository, as go.work joins them, so that a build outside the workspace
// (GOWORK=off, as test.sh tidies each module) uses this checkout too. A release tags the modules and
// drops these lines: go install ...@version refuses a go.mod with replace directives.
replace (
	github.com/ctxfit/ctxfit => ../..
	github.com/ctxfit/ctxfit/cache/rediscache => ../../cache/rediscache
	github.com/ctxfit/ctxfit/cmd/ctxfit => ../../cmd/ctxfit
	github.com/ctxfit/ctxfit/e2e => ../../e2e
	github.com/ctxfit/ctxfit/examples/agent => ../agent
	github.com/ctxfit/ctxfit/examples/mcpgoserver => ../mcpgoserver
	github.com/ctxfit/ctxfit/examples/mcpserver => ../mcpserver
	github.com/ctxfit/ctxfit/gateway => ../../gateway
	github.com/ctxfit/ctxfit/mcpclientfit => ../../mcpclientfit
	github.com/ctxfit/ctxfit/mcpfit => ../../mcpfit
	github.com/ctxfit/ctxfit/mcpgoclientfit => ../../mcpgoclientfit
	github.com/ctxfit/ctxfit/mcpgofit => ../../mcpgofit
	github.com/ctxfit/ctxfit/openaifit => ../../openaifit
	github.com/ctxfit/ctxfit/proxy => ../../proxy
	github.com/ctxfit/ctxfit/store/redisstore => ../../store/redisstore
	github.com/ctxfit/ctxfit/telemetry/otelsink => ../../telemetry/otelsink
)
