package otelsink_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.yaml.in/yaml/v3"

	"github.com/ctxfit/ctxfit/telemetry"
	"github.com/ctxfit/ctxfit/telemetry/otelsink"
)

// exported records one response of every kind and one gateway record of
// every event through the Prometheus exporter and returns the metric
// families, the label names and the histogram bucket bounds (as le reads
// them) it serves.
func exported(t *testing.T) (names, labels, bounds map[string]bool) {
	t.Helper()
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	require.NoError(t, err)
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(t.Context()) })
	sink, err := otelsink.New(provider)
	require.NoError(t, err)
	for _, r := range []telemetry.Record{
		{Endpoint: "GET /api/v1/bookings", Strategy: "pagination", Outcome: "shaped", TokensBefore: 50000, TokensAfter: 3900, HardCap: 12000,
			Latency: time.Millisecond, EstimateError: ptr(0.1), CacheHit: ptr(true)},
		{Endpoint: "read_log", Strategy: "cut", Outcome: "fallback", Fallback: "timeout", TokensBefore: 9000, TokensAfter: 4000},
		{Endpoint: "GET /api/v1/bookings", Strategy: "error", Outcome: "rejected", ErrorType: "store_unavailable"},
	} {
		require.NoError(t, sink.Record(t.Context(), r))
	}
	for _, r := range []telemetry.GatewayRecord{
		{Event: telemetry.GatewayStartup, Duration: 80 * time.Millisecond, Tools: 12},
		{Event: telemetry.GatewaySessionOpened},
		{Event: telemetry.GatewayDiscovery, Duration: 3 * time.Millisecond},
		{Event: telemetry.GatewayValidationFailed, Tool: "getBooking", Parameter: "id"},
		{Event: telemetry.GatewayValidationOK, Tool: "getBooking"},
		{Event: telemetry.GatewayRetry, Tool: "getBooking"},
		{Event: telemetry.GatewayCacheMiss, Tool: "getBooking"},
		{Event: telemetry.GatewayCacheHit, Tool: "getBooking"},
		{Event: telemetry.GatewayAPICall, Tool: "getBooking", Method: "GET", Status: 200, Duration: 40 * time.Millisecond},
		{Event: telemetry.GatewayAPICall, Tool: "getBooking", Method: "GET", Status: 503, Duration: 2 * time.Second},
		{Event: telemetry.GatewayAPICall, Tool: "listBookings", Method: "GET", Duration: 30 * time.Second},
		{Event: telemetry.GatewayShaped, Tool: "listBookings", Strategy: "summary", Reduction: 0.82},
		{Event: telemetry.GatewaySessionClosed},
	} {
		require.NoError(t, r.Validate())
		require.NoError(t, sink.RecordGateway(t.Context(), r))
	}
	families, err := registry.Gather()
	require.NoError(t, err)
	names, labels, bounds = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
			for _, b := range m.GetHistogram().GetBucket() {
				bounds[strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)] = true
			}
		}
	}
	return names, labels, bounds
}

// expressions returns the PromQL of monitoring/alerts.yml and of the
// Grafana dashboard's panels.
func expressions(t *testing.T) map[string]string {
	t.Helper()
	dir := filepath.Join("..", "..", "monitoring")
	out := map[string]string{}

	b, err := os.ReadFile(filepath.Join(dir, "alerts.yml"))
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Rules []struct {
				Record, Alert, Expr string
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(b, &rules))
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			out["alerts.yml "+r.Record+r.Alert] = r.Expr
		}
	}

	b, err = os.ReadFile(filepath.Join(dir, "grafana-dashboard.json"))
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(b, &dash))
	require.NotEmpty(t, dash.Panels)
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Targets, p.Title)
		for i, tg := range p.Targets {
			out["dashboard "+p.Title+" "+string(rune('A'+i))] = tg.Expr
		}
	}
	return out
}

var (
	metricRef  = regexp.MustCompile(`\bctxfit[_:][a-z0-9_:]+`)
	notMetric  = regexp.MustCompile(`\{[^}]*\}|\bby \([^)]*\)|"[^"]*"`)
	byClause   = regexp.MustCompile(`\bby \(([^)]*)\)`)
	matcherRef = regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)\s*"`)
	leRef      = regexp.MustCompile(`\ble\s*=\s*"([^"]*)"`)
)

func TestMonitoringUsesTheExportedNames(t *testing.T) {
	names, labels, bounds := exported(t)
	for _, want := range []string{"ctxfit_responses_total", "ctxfit_tokens_total", "ctxfit_response_size_bytes_total",
		"ctxfit_oversize_attempts_total", "ctxfit_fallbacks_total", "ctxfit_cache_lookups_total",
		"ctxfit_shaping_duration_seconds", "ctxfit_response_tokens", "ctxfit_estimate_error_ratio",
		"ctxfit_gateway_startup_duration_seconds", "ctxfit_gateway_discovery_duration_seconds",
		"ctxfit_gateway_validations_total", "ctxfit_gateway_retries_total", "ctxfit_gateway_cache_requests_total",
		"ctxfit_gateway_sessions", "ctxfit_gateway_api_duration_seconds", "ctxfit_gateway_reduction_ratio"} {
		assert.True(t, names[want], "%s is exported (units at the end of the name)", want)
	}
	for _, want := range []string{"http_request_method", "http_route", "gen_ai_tool_name", "error_type", "ctxfit_strategy", "ctxfit_outcome",
		"http_response_status_code", "ctxfit_validation_result"} {
		assert.True(t, labels[want], "the label %s is exported", want)
	}
	assert.True(t, bounds["0.69999"], "the reduction ratio has the bucket le=\"0.69999\" the 70%% target is read from")
	assert.False(t, labels["endpoint"], "no label mixes the method and the route")

	known := func(series string) bool {
		for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(series, suffix); ok && names[base] {
				return true
			}
		}
		return false
	}
	allowed := append(slices.Collect(func(yield func(string) bool) {
		for l := range labels {
			if !yield(l) {
				return
			}
		}
	}), "job", "le", "instance")
	exprs := expressions(t)
	recorded := map[string]bool{} // the recording rules of alerts.yml
	for where := range exprs {
		if name, ok := strings.CutPrefix(where, "alerts.yml "); ok && strings.Contains(name, ":") {
			recorded[name] = true
		}
	}
	for where, expr := range exprs {
		refs := metricRef.FindAllString(notMetric.ReplaceAllString(expr, ""), -1)
		assert.NotEmpty(t, refs, "%s: %s", where, expr)
		for _, m := range refs {
			assert.True(t, known(m) || recorded[m], "%s uses %s, which ctxfit does not export", where, m)
		}
		var used []string
		for _, by := range byClause.FindAllStringSubmatch(expr, -1) {
			for _, l := range strings.Split(by[1], ",") {
				used = append(used, strings.TrimSpace(l))
			}
		}
		for _, m := range matcherRef.FindAllStringSubmatch(expr, -1) {
			used = append(used, m[1])
		}
		for _, l := range used {
			assert.Contains(t, allowed, l, "%s uses the label %s, which ctxfit does not export", where, l)
		}
		for _, le := range leRef.FindAllStringSubmatch(expr, -1) {
			assert.True(t, bounds[le[1]], "%s uses the bucket le=%q, which no histogram of ctxfit has", where, le[1])
		}
	}
}
