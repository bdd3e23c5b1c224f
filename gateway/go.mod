module github.com/ctxfit/ctxfit/gateway

go 1.26.0

require (
	github.com/ctxfit/ctxfit v0.0.0-00010101000000-000000000000
	github.com/ctxfit/ctxfit/mcpfit v0.0.0-00010101000000-000000000000
	github.com/google/jsonschema-go v0.4.3
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v4 v4.0.0
)

require (
	github.com/gabriel-vasile/mimetype v1.4.16 // indirect
	github.com/go-playground/locales v0.14.2 // indirect
	github.com/go-playground/universal-translator v0.18.2 // indirect
	github.com/go-playground/validator/v10 v10.30.6 // indirect
	github.com/itchyny/gojq v0.12.20 // indirect
	github.com/itchyny/timefmt-go v0.1.9 // indirect
	github.com/leodido/go-urn v1.5.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/oauth2 v0.37.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

// The ctxfit modules of this repository, as go.work joins them, so that a build outside the workspace
// (GOWORK=off, as test.sh tidies each module) uses this checkout too. A release tags the modules and
// drops these lines: go install ...@version refuses a go.mod with replace directives.
replace (
	github.com/ctxfit/ctxfit => ..
	github.com/ctxfit/ctxfit/cache/rediscache => ../cache/rediscache
	github.com/ctxfit/ctxfit/cmd/ctxfit => ../cmd/ctxfit
	github.com/ctxfit/ctxfit/e2e => ../e2e
	github.com/ctxfit/ctxfit/examples/agent => ../examples/agent
	github.com/ctxfit/ctxfit/examples/httpserver => ../examples/httpserver
	github.com/ctxfit/ctxfit/examples/mcpgoserver => ../examples/mcpgoserver
	github.com/ctxfit/ctxfit/examples/mcpserver => ../examples/mcpserver
	github.com/ctxfit/ctxfit/mcpclientfit => ../mcpclientfit
	github.com/ctxfit/ctxfit/mcpfit => ../mcpfit
	github.com/ctxfit/ctxfit/mcpgoclientfit => ../mcpgoclientfit
	github.com/ctxfit/ctxfit/mcpgofit => ../mcpgofit
	github.com/ctxfit/ctxfit/openaifit => ../openaifit
	github.com/ctxfit/ctxfit/proxy => ../proxy
	github.com/ctxfit/ctxfit/store/redisstore => ../store/redisstore
	github.com/ctxfit/ctxfit/telemetry/otelsink => ../telemetry/otelsink
)
