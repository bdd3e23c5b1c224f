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
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

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
		Endpoint: "GET /orders", Strategy: telemetry.StrategyPagination, Outcome: telemetry.OutcomeShaped,
		TokensBefore: 9000, TokensAfter: 3000, BytesBefore: 36000, BytesAfter: 12000,
		Latency: 2 * time.Millisecond, EstimateError: ptr(-0.1), CacheHit: ptr(true),
	}
	oversized := telemetry.Record{
		Endpoint: "read_log", Strategy: telemetry.StrategyCut, Outcome: telemetry.OutcomeFallback, Fallback: "timeout",
		HardCap: 12000, TokensBefore: 20000, TokensAfter: 12000, BytesBefore: 80000, BytesAfter: 48000,
		Latency: 4 * time.Millisecond, CacheHit: ptr(false),
	}
	grown := telemetry.Record{
		Endpoint: "GET /orders", Strategy: telemetry.StrategyPagination, Outcome: telemetry.OutcomeShaped,
		TokensBefore: 100, TokensAfter: 120, BytesBefore: 400, BytesAfter: 480, Latency: time.Millisecond,
	}
	storeDown := telemetry.Record{
		Endpoint: "GET /orders", Strategy: telemetry.StrategyError, Outcome: telemetry.OutcomeRejected, ErrorType: "store_unavailable",
	}
	for _, r := range []telemetry.Record{shaped, shaped, oversized, grown, storeDown} {
		require.NoError(t, sink.Record(ctx, r))
	}
	got := collect(t, reader)

	ordersKV := []attribute.KeyValue{otelsink.KeyHTTPMethod.String("GET"), otelsink.KeyHTTPRoute.String("/orders"),
		otelsink.KeyStrategy.String("pagination"), otelsink.KeyOutcome.String("shaped")}
	logsKV := []attribute.KeyValue{otelsink.KeyToolName.String("read_log"), otelsink.KeyStrategy.String("cut"), otelsink.KeyOutcome.String("fallback")}
	orders, logs := set(ordersKV...), set(logsKV...)
	with := func(kv []attribute.KeyValue, more ...attribute.KeyValue) attribute.Distinct {
		return set(append(append([]attribute.KeyValue(nil), kv...), more...)...)
	}
	original, sent, saved := otelsink.KeyTokenType.String("original"), otelsink.KeyTokenType.String("sent"), otelsink.KeyTokenType.String("saved")
	erroredKV := []attribute.KeyValue{otelsink.KeyHTTPMethod.String("GET"), otelsink.KeyHTTPRoute.String("/orders"),
		otelsink.KeyStrategy.String("error"), otelsink.KeyOutcome.String("rejected")}
	errored := with(erroredKV, otelsink.KeyErrorType.String("store_unavailable"))

	tests := []struct {
		name   string
		metric string
		want   map[attribute.Distinct]int64
	}{
		{"responses are counted by route or tool, strategy and outcome, errors by error.type", "ctxfit.responses",
			map[attribute.Distinct]int64{orders: 3, logs: 1, errored: 1}},
		{"tokens are counted as original, sent and saved; saved never goes down", "ctxfit.tokens", map[attribute.Distinct]int64{
			with(ordersKV, original): 18100, with(ordersKV, sent): 6120, with(ordersKV, saved): 12000,
			with(logsKV, original): 20000, with(logsKV, sent): 12000, with(logsKV, saved): 8000,
			with(erroredKV, original): 0, with(erroredKV, sent): 0, with(erroredKV, saved): 0,
		}},
		{"bytes are counted as original and sent", "ctxfit.response.size", map[attribute.Distinct]int64{
			with(ordersKV, original): 72400, with(ordersKV, sent): 24480,
			with(logsKV, original): 80000, with(logsKV, sent): 48000,
			with(erroredKV, original): 0, with(erroredKV, sent): 0,
		}},
		{"oversized attempts are counted", "ctxfit.oversize.attempts", map[attribute.Distinct]int64{logs: 1}},
		{"fallbacks are counted with their reason as error.type", "ctxfit.fallbacks",
			map[attribute.Distinct]int64{with(logsKV, otelsink.KeyErrorType.String("timeout")): 1}},
		{"cache lookups are counted by hit", "ctxfit.cache.lookups", map[attribute.Distinct]int64{
			with(ordersKV, otelsink.KeyCacheHit.Bool(true)): 2,
			with(logsKV, otelsink.KeyCacheHit.Bool(false)):  1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, got, tt.metric)
			assert.Equal(t, tt.want, sums(t, got[tt.metric]))
		})
	}

	t.Run("the shaping duration is a histogram in seconds", func(t *testing.T) {
		h, ok := got["ctxfit.shaping.duration"].(metricdata.Histogram[float64])
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
		assert.Equal(t, uint64(5), count)
		assert.Equal(t, int64(3000+3000+12000+120), sum)
	})
	t.Run("sampled estimate errors are a histogram of absolute values", func(t *testing.T) {
		h, ok := got["ctxfit.estimate.error_ratio"].(metricdata.Histogram[float64])
		require.True(t, ok)
		require.Len(t, h.DataPoints, 1)
		p := h.DataPoints[0]
		assert.Equal(t, set(otelsink.KeyHTTPMethod.String("GET"), otelsink.KeyHTTPRoute.String("/orders")), p.Attributes.Equivalent())
		assert.Equal(t, uint64(2), p.Count)
		assert.InDelta(t, 0.2, p.Sum, 1e-12)
	})
}

func TestEndpointAttributes(t *testing.T) {
	tests := []struct {
		name, endpoint string
		want           []attribute.KeyValue
	}{
		{"a pattern with a method is http.request.method and http.route", "GET /api/v1/bookings/{id}",
			[]attribute.KeyValue{otelsink.KeyHTTPMethod.String("GET"), otelsink.KeyHTTPRoute.String("/api/v1/bookings/{id}")}},
		{"a pattern without a method is http.route alone", "/api/", []attribute.KeyValue{otelsink.KeyHTTPRoute.String("/api/")}},
		{"a pattern with a host is http.route alone", "example.com/x", []attribute.KeyValue{otelsink.KeyHTTPRoute.String("example.com/x")}},
		{"a tool name is gen_ai.tool.name", "list_bookings", []attribute.KeyValue{otelsink.KeyToolName.String("list_bookings")}},
		{"a dotted tool name is still a tool", "files.read", []attribute.KeyValue{otelsink.KeyToolName.String("files.read")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, otelsink.EndpointAttributes(tt.endpoint))
		})
	}
}

func TestErrorTypeKeepsFewValues(t *testing.T) {
	sink, reader := newSink(t)
	for _, reason := range []string{"timeout", "panic: runtime error: index out of range [3] with length 3", "canceled"} {
		require.NoError(t, sink.Record(t.Context(), telemetry.Record{Endpoint: "t", Strategy: "cut", Outcome: telemetry.OutcomeFallback, Fallback: reason}))
	}
	sum, ok := collect(t, reader)["ctxfit.fallbacks"].(metricdata.Sum[int64])
	require.True(t, ok)
	got := map[string]int64{}
	for _, p := range sum.DataPoints {
		et, _ := p.Attributes.Value(otelsink.KeyErrorType)
		got[et.AsString()] += p.Value
	}
	assert.Equal(t, map[string]int64{"timeout": 1, "canceled": 1, "_OTHER": 1}, got)
}

func TestSinkSetsSpanAttributes(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, span := tp.Tracer("test").Start(t.Context(), "GET /orders")
	sink, _ := newSink(t)
	require.NoError(t, sink.Record(ctx, telemetry.Record{Endpoint: "GET /orders", Strategy: "pagination", Outcome: "shaped", TokensBefore: 9000, TokensAfter: 3000}))
	span.End()
	require.Len(t, rec.Ended(), 1)
	assert.ElementsMatch(t, []attribute.KeyValue{
		otelsink.KeyStrategy.String("pagination"), otelsink.KeyOutcome.String("shaped"),
		otelsink.KeyTokensOriginal.Int(9000), otelsink.KeyTokensSent.Int(3000),
	}, rec.Ended()[0].Attributes())
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
	for _, v := range sums(t, collect(t, reader)["ctxfit.tokens"]) {
		total += v
	}
	assert.Equal(t, int64(2000*(2+1+1)), total, "original 2, sent 1 and saved 1 per record, none lost")
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
		assert.ErrorContains(t, err, "otelsink: histogram ctxfit.shaping.duration")
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
