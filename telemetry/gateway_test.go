package telemetry_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/telemetry"
)

// gatewayCollector keeps the responses' and the gateway's records, in the
// order they arrive.
type gatewayCollector struct {
	mu    sync.Mutex
	order []string // "record" or the gateway event
	gw    []telemetry.GatewayRecord
}

func (c *gatewayCollector) Record(context.Context, telemetry.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order = append(c.order, "record")
	return nil
}

func (c *gatewayCollector) RecordGateway(_ context.Context, r telemetry.GatewayRecord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order = append(c.order, string(r.Event))
	c.gw = append(c.gw, r)
	return nil
}

func (c *gatewayCollector) events() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.order...)
}

func TestGatewayRecordValidate(t *testing.T) {
	tests := []struct {
		name    string
		r       telemetry.GatewayRecord
		wantErr string
	}{
		{"an API call with a status is valid", telemetry.GatewayRecord{Event: telemetry.GatewayAPICall, Status: 404, Duration: time.Millisecond}, ""},
		{"an API call without an answer is valid", telemetry.GatewayRecord{Event: telemetry.GatewayAPICall}, ""},
		{"a shaping that added tokens is valid", telemetry.GatewayRecord{Event: telemetry.GatewayShaped, Reduction: -0.1}, ""},
		{"the zero record has no event", telemetry.GatewayRecord{}, "without an event"},
		{"a negative duration is refused", telemetry.GatewayRecord{Event: telemetry.GatewayStartup, Duration: -1}, "negative"},
		{"a status that is not HTTP's is refused", telemetry.GatewayRecord{Event: telemetry.GatewayAPICall, Status: 42}, "not an HTTP status"},
		{"a reduction over 1 is refused", telemetry.GatewayRecord{Event: telemetry.GatewayShaped, Reduction: 1.5}, "over 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.r.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, telemetry.ErrInvalidRecord)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestGatewayRecordAPIError(t *testing.T) {
	for _, c := range []struct {
		name string
		r    telemetry.GatewayRecord
		want bool
	}{
		{"a 200 is not an error", telemetry.GatewayRecord{Event: telemetry.GatewayAPICall, Status: 200}, false},
		{"a 404 is", telemetry.GatewayRecord{Event: telemetry.GatewayAPICall, Status: 404}, true},
		{"no answer is", telemetry.GatewayRecord{Event: telemetry.GatewayAPICall}, true},
		{"another event is not", telemetry.GatewayRecord{Event: telemetry.GatewayCacheHit}, false},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, c.r.APIError()) })
	}
}

func TestMultiSendsGatewayRecordsToTheSinksThatTakeThem(t *testing.T) {
	plain := &collector{}
	first, second := &gatewayCollector{}, &gatewayCollector{}
	boom := errors.New("boom")
	failingGateway := struct {
		telemetry.Sink
		telemetry.GatewaySink
	}{failing(nil), gatewaySinkFunc(func(context.Context, telemetry.GatewayRecord) error { panic(boom) })}
	sink := telemetry.Multi(first, plain, failingGateway, second)

	err := telemetry.RecordGateway(t.Context(), sink, telemetry.GatewayRecord{Event: telemetry.GatewayCacheHit, Tool: "getOrder"})
	assert.ErrorContains(t, err, "panicked", "the panic becomes an error")
	assert.Equal(t, []string{"cache_hit"}, first.events())
	assert.Equal(t, []string{"cache_hit"}, second.events(), "a failing sink does not stop the others")
	assert.Empty(t, plain.got(), "a sink that is not a GatewaySink gets nothing")

	t.Run("a sink that is not a GatewaySink is skipped without an error", func(t *testing.T) {
		assert.NoError(t, telemetry.RecordGateway(t.Context(), plain, telemetry.GatewayRecord{Event: telemetry.GatewayStartup}))
		assert.NoError(t, telemetry.RecordGateway(t.Context(), nil, telemetry.GatewayRecord{Event: telemetry.GatewayStartup}))
	})
}

type gatewaySinkFunc func(context.Context, telemetry.GatewayRecord) error

func (f gatewaySinkFunc) RecordGateway(ctx context.Context, r telemetry.GatewayRecord) error {
	return f(ctx, r)
}

func TestAsyncForwardsGatewayRecordsAndFlushesThemOnClose(t *testing.T) {
	c := &gatewayCollector{}
	a := telemetry.NewAsync(c, nil)
	var want []string
	for i := range 50 {
		require.NoError(t, a.Record(t.Context(), telemetry.Record{ItemCount: i}))
		require.NoError(t, a.RecordGateway(t.Context(), telemetry.GatewayRecord{Event: telemetry.GatewayAPICall, Status: 200}))
		want = append(want, "record", "api_call")
	}
	require.NoError(t, a.Close(t.Context()))
	assert.Equal(t, want, c.events(), "every record arrives, in order, interleaved as it was given")
	assert.Zero(t, a.Dropped())

	t.Run("a gateway record after Close is refused and counted as dropped", func(t *testing.T) {
		assert.ErrorIs(t, a.RecordGateway(t.Context(), telemetry.GatewayRecord{Event: telemetry.GatewayRetry}), telemetry.ErrClosed)
		assert.Equal(t, uint64(1), a.Dropped())
	})
	t.Run("for a sink that is not a GatewaySink nothing is buffered nor dropped", func(t *testing.T) {
		plain := &collector{}
		a := telemetry.NewAsync(plain, nil)
		assert.NoError(t, a.RecordGateway(t.Context(), telemetry.GatewayRecord{Event: telemetry.GatewayStartup}))
		require.NoError(t, a.Close(t.Context()))
		assert.Zero(t, a.Dropped())
		assert.Empty(t, plain.got())
	})
}

// blockingGateway blocks in Record until its context ends.
type blockingGateway struct {
	blocking
	gatewayCollector
}

func (b *blockingGateway) Record(ctx context.Context, r telemetry.Record) error {
	return b.blocking.Record(ctx, r)
}

func TestAsyncDropsGatewayRecordsThatDoNotFitAndSaysSo(t *testing.T) {
	sink := &blockingGateway{blocking: blocking{started: make(chan struct{}, 16)}}
	var dropped atomic.Int64
	a := telemetry.NewAsync(sink, &telemetry.AsyncOptions{
		Buffer:        1,
		OnDrop:        func(telemetry.Record) { t.Error("OnDrop is for responses' records") },
		OnDropGateway: func(telemetry.GatewayRecord) { dropped.Add(1) },
		OnError:       func(error) {},
	})
	require.NoError(t, a.Record(t.Context(), telemetry.Record{}))
	<-sink.started // the goroutine is busy with it
	for range 4 {
		require.NoError(t, a.RecordGateway(t.Context(), telemetry.GatewayRecord{Event: telemetry.GatewayCacheMiss}))
	}
	assert.Equal(t, uint64(3), a.Dropped(), "one fits the buffer")
	assert.Equal(t, int64(3), dropped.Load())

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, a.Close(ctx), context.Canceled)
	require.NoError(t, a.Close(t.Context()))
	assert.Equal(t, uint64(4), a.Dropped(), "the buffered one is dropped when Close gives up")
	assert.Equal(t, int64(4), dropped.Load())
}

func TestSlogSinkLogsOneLinePerGatewayRecord(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		name  string
		r     telemetry.GatewayRecord
		level string
		want  map[string]any
	}{
		{"start-up", telemetry.GatewayRecord{Event: telemetry.GatewayStartup, Time: at, Duration: 1500 * time.Microsecond, Tools: 12},
			"INFO", map[string]any{"event": "startup", "duration_ms": 1.5, "tools": float64(12)}},
		{"a validation failure names the parameter", telemetry.GatewayRecord{Event: telemetry.GatewayValidationFailed, Time: at, Tool: "getOrder", Parameter: "id"},
			"INFO", map[string]any{"event": "validation_failed", "tool": "getOrder", "parameter": "id"}},
		{"an API call that got a 404", telemetry.GatewayRecord{Event: telemetry.GatewayAPICall, Time: at, Tool: "getOrder", Method: "GET", Status: 404, Duration: 2 * time.Millisecond},
			"INFO", map[string]any{"event": "api_call", "tool": "getOrder", "method": "GET", "status": float64(404), "duration_ms": 2.0}},
		{"an API call without an answer is a warning", telemetry.GatewayRecord{Event: telemetry.GatewayAPICall, Time: at, Tool: "getOrder", Method: "GET"},
			"WARN", map[string]any{"event": "api_call", "tool": "getOrder", "method": "GET"}},
		{"a shaped result has its reduction in percent", telemetry.GatewayRecord{Event: telemetry.GatewayShaped, Time: at, Tool: "listOrders", Strategy: "summary", Reduction: 0.75},
			"INFO", map[string]any{"event": "shaped", "tool": "listOrders", "strategy": "summary", "reduction_percent": 75.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, nil)))
			require.NoError(t, sink.RecordGateway(t.Context(), tt.r))
			lines := logLines(t, &buf)
			require.Len(t, lines, 1)
			got := lines[0]
			assert.Equal(t, tt.level, got["level"])
			assert.Equal(t, telemetry.MessageGateway, got["msg"])
			assert.Equal(t, "2026-01-02T15:04:05Z", got["time"])
			delete(got, "level")
			delete(got, "msg")
			delete(got, "time")
			assert.Equal(t, tt.want, got, "only the attributes that are set")
		})
	}
}

func TestAggregateAddsUpGatewayRecords(t *testing.T) {
	a := telemetry.NewAggregate(nil)
	assert.Zero(t, a.Gateway())
	assert.Nil(t, a.Health().Gateway, "no gateway, no gateway section")

	ev := func(e telemetry.GatewayEvent) telemetry.GatewayRecord { return telemetry.GatewayRecord{Event: e} }
	for _, r := range []telemetry.GatewayRecord{
		{Event: telemetry.GatewayStartup, Duration: 250 * time.Millisecond, Tools: 7},
		ev(telemetry.GatewaySessionOpened), ev(telemetry.GatewaySessionOpened), ev(telemetry.GatewaySessionClosed),
		ev(telemetry.GatewaySessionOpened),
		{Event: telemetry.GatewayDiscovery, Duration: 10 * time.Millisecond},
		{Event: telemetry.GatewayDiscovery, Duration: 30 * time.Millisecond},
		ev(telemetry.GatewayValidationFailed), ev(telemetry.GatewayValidationFailed),
		ev(telemetry.GatewayValidationOK), ev(telemetry.GatewayRetry), ev(telemetry.GatewayValidationOK), ev(telemetry.GatewayValidationOK),
		ev(telemetry.GatewayCacheMiss), ev(telemetry.GatewayCacheHit), ev(telemetry.GatewayCacheHit), ev(telemetry.GatewayCacheHit),
		{Event: telemetry.GatewayAPICall, Status: 200, Duration: 4 * time.Millisecond},
		{Event: telemetry.GatewayAPICall, Status: 503, Duration: 8 * time.Millisecond},
		{Event: telemetry.GatewayShaped, Strategy: "summary", Reduction: 0.9},
		{Event: telemetry.GatewayShaped, Strategy: "summary", Reduction: 0.5},
		{Event: telemetry.GatewayShaped, Strategy: "pagination", Reduction: 0.4},
	} {
		require.NoError(t, a.RecordGateway(t.Context(), r))
	}
	assert.Error(t, a.RecordGateway(t.Context(), telemetry.GatewayRecord{}), "an invalid record is refused")

	got := a.Gateway()
	assert.Equal(t, int64(22), got.Events)
	assert.Equal(t, 250.0, got.StartupMs)
	assert.Equal(t, 7, got.Tools)
	assert.Equal(t, int64(2), got.Discoveries)
	assert.Equal(t, 20.0, got.DiscoveryMeanMs)
	assert.Equal(t, 30.0, got.DiscoveryMaxMs)
	assert.Equal(t, int64(3), got.ValidationSuccesses)
	assert.Equal(t, int64(2), got.ValidationFailures)
	assert.InDelta(t, 0.6, got.ValidationRate, 1e-9)
	assert.Equal(t, int64(1), got.Retries)
	assert.InDelta(t, 0.5, got.RetryRate, 1e-9)
	assert.Equal(t, int64(3), got.CacheHits)
	assert.Equal(t, int64(1), got.CacheMisses)
	assert.InDelta(t, 0.75, got.CacheHitRate, 1e-9)
	assert.Equal(t, int64(2), got.APICalls)
	assert.Equal(t, int64(1), got.APIErrors)
	assert.InDelta(t, 6.0, got.AvgAPILatencyMs, 1e-9)
	assert.Equal(t, int64(3), got.SessionsOpened)
	assert.Equal(t, int64(1), got.SessionsClosed)
	assert.Equal(t, int64(2), got.SessionsCurrent)
	assert.Equal(t, int64(2), got.SessionsPeak)
	assert.Equal(t, int64(3), got.Shaped)
	assert.InDelta(t, 0.6, got.ReductionMean, 1e-9)
	assert.Equal(t, int64(2), got.Summarized)
	assert.InDelta(t, 0.7, got.SummaryReductionMean, 1e-9)
	assert.InDelta(t, 0.5, got.SummariesAtTarget, 1e-9, "one summary of two reached 70%")

	h := a.Health()
	require.NotNil(t, h.Gateway)
	assert.Equal(t, got, *h.Gateway)
	assert.Zero(t, h.Totals.Count, "gateway records are not responses")
}
