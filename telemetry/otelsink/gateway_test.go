package otelsink_test

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ctxfit/ctxfit/telemetry"
	"github.com/ctxfit/ctxfit/telemetry/otelsink"
)

// gatewayRecords are one gateway's events of every kind.
var gatewayRecords = []telemetry.GatewayRecord{
	{Event: telemetry.GatewayStartup, Duration: 1200 * time.Millisecond, Tools: 9},
	{Event: telemetry.GatewaySessionOpened}, {Event: telemetry.GatewaySessionOpened}, {Event: telemetry.GatewaySessionClosed},
	{Event: telemetry.GatewayDiscovery, Duration: 20 * time.Millisecond},
	{Event: telemetry.GatewayValidationFailed, Tool: "getOrder", Parameter: "id"},
	{Event: telemetry.GatewayValidationOK, Tool: "getOrder"},
	{Event: telemetry.GatewayRetry, Tool: "getOrder"},
	{Event: telemetry.GatewayValidationOK, Tool: "getOrder"},
	{Event: telemetry.GatewayCacheMiss, Tool: "getOrder"},
	{Event: telemetry.GatewayCacheHit, Tool: "getOrder"},
	{Event: telemetry.GatewayCacheHit, Tool: "getOrder"},
	{Event: telemetry.GatewayAPICall, Tool: "getOrder", Method: "GET", Status: 200, Duration: 30 * time.Millisecond},
	{Event: telemetry.GatewayAPICall, Tool: "getOrder", Method: "GET", Status: 404, Duration: 10 * time.Millisecond},
	{Event: telemetry.GatewayAPICall, Tool: "getOrder", Method: "GET"},
	{Event: telemetry.GatewayShaped, Tool: "listOrders", Strategy: "summary", Reduction: 0.7},
	{Event: telemetry.GatewayShaped, Tool: "listOrders", Strategy: "summary", Reduction: 0.5},
}

func TestSinkExportsTheGatewayInstruments(t *testing.T) {
	sink, reader := newSink(t)
	for _, r := range gatewayRecords {
		require.NoError(t, sink.RecordGateway(t.Context(), r))
	}
	got := collect(t, reader)
	getOrder := otelsink.KeyToolName.String("getOrder")

	t.Run("validations are counted by result and tool", func(t *testing.T) {
		assert.Equal(t, map[attribute.Distinct]int64{
			set(getOrder, otelsink.KeyValidationResult.String("ok")):     2,
			set(getOrder, otelsink.KeyValidationResult.String("failed")): 1,
		}, sums(t, got["ctxfit.gateway.validations"]))
		assert.Equal(t, map[attribute.Distinct]int64{set(getOrder): 1}, sums(t, got["ctxfit.gateway.retries"]))
	})
	t.Run("cache requests are counted by hit", func(t *testing.T) {
		assert.Equal(t, map[attribute.Distinct]int64{
			set(getOrder, otelsink.KeyCacheHit.Bool(true)):  2,
			set(getOrder, otelsink.KeyCacheHit.Bool(false)): 1,
		}, sums(t, got["ctxfit.gateway.cache.requests"]))
	})
	t.Run("sessions go up and down", func(t *testing.T) {
		sum, ok := got["ctxfit.gateway.sessions"].(metricdata.Sum[int64])
		require.True(t, ok)
		assert.False(t, sum.IsMonotonic)
		require.Len(t, sum.DataPoints, 1)
		assert.Equal(t, int64(1), sum.DataPoints[0].Value)
	})
	t.Run("start-up and discovery are histograms in seconds", func(t *testing.T) {
		for name, want := range map[string]float64{"ctxfit.gateway.startup.duration": 1.2, "ctxfit.gateway.discovery.duration": 0.02} {
			h, ok := got[name].(metricdata.Histogram[float64])
			require.True(t, ok, name)
			require.Len(t, h.DataPoints, 1, name)
			assert.Equal(t, uint64(1), h.DataPoints[0].Count, name)
			assert.InDelta(t, want, h.DataPoints[0].Sum, 1e-9, name)
		}
	})
	t.Run("API calls have the method, the status and error.type for errors", func(t *testing.T) {
		h, ok := got["ctxfit.gateway.api.duration"].(metricdata.Histogram[float64])
		require.True(t, ok)
		counts := map[attribute.Distinct]uint64{}
		for _, p := range h.DataPoints {
			counts[p.Attributes.Equivalent()] = p.Count
		}
		get := otelsink.KeyHTTPMethod.String("GET")
		assert.Equal(t, map[attribute.Distinct]uint64{
			set(getOrder, get, otelsink.KeyHTTPStatus.Int(200)):                                      1,
			set(getOrder, get, otelsink.KeyHTTPStatus.Int(404), otelsink.KeyErrorType.String("404")): 1,
			set(getOrder, get, otelsink.KeyErrorType.String("_OTHER")):                               1,
		}, counts)
	})
	t.Run("reductions tell the summaries that reached 70% from the others", func(t *testing.T) {
		h, ok := got["ctxfit.gateway.reduction_ratio"].(metricdata.Histogram[float64])
		require.True(t, ok)
		require.Len(t, h.DataPoints, 1)
		p := h.DataPoints[0]
		assert.Equal(t, set(otelsink.KeyToolName.String("listOrders"), otelsink.KeyStrategy.String("summary")), p.Attributes.Equivalent())
		i := slices.Index(p.Bounds, 0.69999)
		require.GreaterOrEqual(t, i, 0)
		var below uint64
		for _, c := range p.BucketCounts[:i+1] {
			below += c
		}
		assert.Equal(t, uint64(1), below, "0.5 is below the target")
		assert.Equal(t, uint64(1), p.Count-below, "0.7 reached it")
	})
}

func TestGatewayInstrumentsThroughThePrometheusExporter(t *testing.T) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	require.NoError(t, err)
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { _ = provider.Shutdown(t.Context()) })
	sink, err := otelsink.New(provider)
	require.NoError(t, err)
	for _, r := range gatewayRecords {
		require.NoError(t, sink.RecordGateway(t.Context(), r))
	}
	families, err := registry.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	assert.Subset(t, names, []string{
		"ctxfit_gateway_startup_duration_seconds",
		"ctxfit_gateway_discovery_duration_seconds",
		"ctxfit_gateway_validations_total",
		"ctxfit_gateway_retries_total",
		"ctxfit_gateway_cache_requests_total",
		"ctxfit_gateway_sessions",
		"ctxfit_gateway_api_duration_seconds",
		"ctxfit_gateway_reduction_ratio",
	}, "all of %v", names)
}
