package otelsink_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ctxfit/ctxfit/telemetry"
	"github.com/ctxfit/ctxfit/telemetry/otelsink"
)

func ptr[T any](v T) *T { return &v }

// collect reads every metric of the sink's scope, by name.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(t.Context(), &rm))
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, otelsink.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sums returns the points of an int64 counter, keyed by their attributes.
func sums(t *testing.T, data metricdata.Aggregation) map[attribute.Distinct]int64 {
	t.Helper()
	sum, ok := data.(metricdata.Sum[int64])
	require.True(t, ok, "%T is not an int64 sum", data)
	assert.True(t, sum.IsMonotonic)
	out := map[attribute.Distinct]int64{}
	for _, p := range sum.DataPoints {
		out[p.Attributes.Equivalent()] = p.Value
	}
	return out
}

func set(kv ...attribute.KeyValue) attribute.Distinct {
	s := attribute.NewSet(kv...)
	return s.Equivalent()
}

func newSink(t *testing.T) (*otelsink.Sink, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	sink, err := otelsink.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	return sink, reader
}

func TestSinkRecordsMetrics(t *testing.T) {
	sink, reader := newSink(t)
	ctx := t.Context()
	shaped := telemetry.Record{
		Endpoint: "/orders", Strategy: telemetry.StrategyPagination, Outcome: telemetry.OutcomeShaped,
		TokensBefore: 9000, TokensAfter: 3000, BytesBefore: 36000, BytesAfter: 12000,
		Latency: 2 * time.Millisecond, EstimateError: ptr(-0.1), CacheHit: ptr(true),
	}
	oversized := telemetry.Record{
		Endpoint: "/logs", Strategy: telemetry.StrategyCut, Outcome: telemetry.OutcomeFallback, Fallback: "timeout",
		HardCap: 12000, TokensBefore: 20000, TokensAfter: 12000, BytesBefore: 80000, BytesAfter: 48000,
		Latency: 4 * time.Millisecond, CacheHit: ptr(false),
	}
	grown := telemetry.Record{
		Endpoint: "/orders", Strategy: telemetry.StrategyPagination, Outcome: telemetry.OutcomeShaped,
		TokensBefore: 100, TokensAfter: 120, BytesBefore: 400, BytesAfter: 480, Latency: time.Millisecond,
	}
	for _, r := range []telemetry.Record{shaped, shaped, oversized, grown} {
		require.NoError(t, sink.Record(ctx, r))
	}
	got := collect(t, reader)

	orders := set(otelsink.KeyEndpoint.String("/orders"), otelsink.KeyStrategy.String("pagination"), otelsink.KeyOutcome.String("shaped"))
	logsKV := []attribute.KeyValue{otelsink.KeyEndpoint.String("/logs"), otelsink.KeyStrategy.String("cut"), otelsink.KeyOutcome.String("fallback")}
	logs := set(logsKV...)

	tests := []struct {
		name   string
		metric string
		want   map[attribute.Distinct]int64
	}{
		{"responses are counted by endpoint, strategy and outcome", "ctxfit.responses", map[attribute.Distinct]int64{orders: 3, logs: 1}},
		{"tokens before are summed", "ctxfit.tokens.before", map[attribute.Distinct]int64{orders: 18100, logs: 20000}},
		{"tokens after are summed", "ctxfit.tokens.after", map[attribute.Distinct]int64{orders: 6120, logs: 12000}},
		{"tokens saved never go down", "ctxfit.tokens.saved", map[attribute.Distinct]int64{orders: 12000, logs: 8000}},
		{"bytes before are summed", "ctxfit.bytes.before", map[attribute.Distinct]int64{orders: 72400, logs: 80000}},
		{"bytes after are summed", "ctxfit.bytes.after", map[attribute.Distinct]int64{orders: 24480, logs: 48000}},
		{"oversized attempts are counted", "ctxfit.oversize.attempts", map[attribute.Distinct]int64{logs: 1}},
		{"fallbacks are counted with their reason", "ctxfit.fallbacks", map[attribute.Distinct]int64{set(append(logsKV, otelsink.KeyReason.String("timeout"))...): 1}},
		{"cache lookups are counted by hit", "ctxfit.cache.lookups", map[attribute.Distinct]int64{
			set(otelsink.KeyEndpoint.String("/orders"), otelsink.KeyStrategy.String("pagination"), otelsink.KeyOutcome.String("shaped"), otelsink.KeyHit.Bool(true)): 2,
			set(append(logsKV, otelsink.KeyHit.Bool(false))...): 1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, got, tt.metric)
			assert.Equal(t, tt.want, sums(t, got[tt.metric]))
		})
	}

	t.Run("latency is a histogram in seconds", func(t *testing.T) {
		h, ok := got["ctxfit.response.latency"].(metricdata.Histogram[float64])
		require.True(t, ok)
		points := map[attribute.Distinct]metricdata.HistogramDataPoint[float64]{}
		for _, p := range h.DataPoints {
			points[p.Attributes.Equivalent()] = p
		}
		assert.Equal(t, uint64(3), points[orders].Count)
		assert.InDelta(t, 0.005, points[orders].Sum, 1e-12)
		assert.Equal(t, uint64(1), points[logs].Count)
		assert.InDelta(t, 0.004, points[logs].Sum, 1e-12)
	})
	t.Run("tokens sent are a histogram", func(t *testing.T) {
		h, ok := got["ctxfit.response.tokens"].(metricdata.Histogram[int64])
		require.True(t, ok)
		var count uint64
		var sum int64
		for _, p := range h.DataPoints {
			count += p.Count
			sum += p.Sum
		}
		assert.Equal(t, uint64(4), count)
		assert.Equal(t, int64(3000+3000+12000+120), sum)
	})
	t.Run("sampled estimate errors are a histogram of absolute values", func(t *testing.T) {
		h, ok := got["ctxfit.estimate.error"].(metricdata.Histogram[float64])
		require.True(t, ok)
		require.Len(t, h.DataPoints, 1)
		p := h.DataPoints[0]
		assert.Equal(t, set(otelsink.KeyEndpoint.String("/orders")), p.Attributes.Equivalent())
		assert.Equal(t, uint64(2), p.Count)
		assert.InDelta(t, 0.2, p.Sum, 1e-12)
	})
}

func TestSinkIsSafeForConcurrentUse(t *testing.T) {
	sink, reader := newSink(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 250 {
				assert.NoError(t, sink.Record(t.Context(), telemetry.Record{Endpoint: "/e", TokensBefore: 2, TokensAfter: 1}))
			}
		})
	}
	wg.Wait()
	var total int64
	for _, v := range sums(t, collect(t, reader)["ctxfit.tokens.saved"]) {
		total += v
	}
	assert.Equal(t, int64(2000), total)
}

var errInstrument = errors.New("instrument refused")

type failingMeter struct{ noop.Meter }

func (failingMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return noop.Int64Counter{}, errInstrument
}

func (failingMeter) Float64Histogram(string, ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return noop.Float64Histogram{}, errInstrument
}

type failingProvider struct{ noop.MeterProvider }

func (failingProvider) Meter(string, ...metric.MeterOption) metric.Meter { return failingMeter{} }

func TestNew(t *testing.T) {
	t.Run("instrument creation errors are returned", func(t *testing.T) {
		sink, err := otelsink.New(failingProvider{})
		assert.Nil(t, sink)
		require.ErrorIs(t, err, errInstrument)
		assert.ErrorContains(t, err, "otelsink: counter ctxfit.responses")
		assert.ErrorContains(t, err, "otelsink: histogram ctxfit.response.latency")
	})
	t.Run("a nil provider means the global one", func(t *testing.T) {
		sink, err := otelsink.New(nil)
		require.NoError(t, err)
		assert.NoError(t, sink.Record(context.Background(), telemetry.Record{}))
	})
	t.Run("a no-op provider works", func(t *testing.T) {
		sink, err := otelsink.New(noop.NewMeterProvider())
		require.NoError(t, err)
		assert.NoError(t, sink.Record(t.Context(), telemetry.Record{CacheHit: ptr(true), Fallback: "x", EstimateError: ptr(0.5)}))
	})
}
