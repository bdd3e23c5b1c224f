package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/telemetry"
)

// gatewayEvents is a telemetry sink that keeps the gateway's records.
type gatewayEvents struct {
	mu  sync.Mutex
	got []telemetry.GatewayRecord
}

func (*gatewayEvents) Record(context.Context, telemetry.Record) error { return nil }

func (e *gatewayEvents) RecordGateway(_ context.Context, r telemetry.GatewayRecord) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, r)
	return nil
}

// calls returns the records of tool calls, without their times and
// durations (start-up, discovery and sessions left out).
func (e *gatewayEvents) calls() []telemetry.GatewayRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []telemetry.GatewayRecord
	for _, r := range e.got {
		if r.Tool == "" {
			continue
		}
		r.Time, r.Duration = time.Time{}, 0
		out = append(out, r)
	}
	return out
}

func (e *gatewayEvents) of(ev telemetry.GatewayEvent) []telemetry.GatewayRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []telemetry.GatewayRecord
	for _, r := range e.got {
		if r.Event == ev {
			out = append(out, r)
		}
	}
	return out
}

func TestTheGatewayRecordsItsEventsInTheSink(t *testing.T) {
	type call struct {
		tool string
		args map[string]any
	}
	rec := func(ev telemetry.GatewayEvent, tool string) telemetry.GatewayRecord {
		return telemetry.GatewayRecord{Event: ev, Tool: tool}
	}
	apiCall := func(tool, method string, status int) telemetry.GatewayRecord {
		return telemetry.GatewayRecord{Event: telemetry.GatewayAPICall, Tool: tool, Method: method, Status: status}
	}
	tests := []struct {
		name  string
		reply func(http.ResponseWriter, *http.Request)
		calls []call
		want  []telemetry.GatewayRecord
	}{
		{"a validation failure, then the retry that fixed it", jsonReply(200, order),
			[]call{{"getOrder", map[string]any{}}, {"getOrder", map[string]any{"id": "o1"}}},
			[]telemetry.GatewayRecord{
				{Event: telemetry.GatewayValidationFailed, Tool: "getOrder", Parameter: "id"},
				rec(telemetry.GatewayCacheMiss, "getOrder"), // the handler ran, though it did not call the API
				rec(telemetry.GatewayValidationOK, "getOrder"),
				rec(telemetry.GatewayRetry, "getOrder"),
				apiCall("getOrder", "GET", 200),
				rec(telemetry.GatewayCacheMiss, "getOrder"),
			}},
		{"a GET served from the cache is a hit and calls nothing", jsonReply(200, order),
			[]call{{"getOrder", map[string]any{"id": "o1"}}, {"getOrder", map[string]any{"id": "o1"}}},
			[]telemetry.GatewayRecord{
				rec(telemetry.GatewayValidationOK, "getOrder"),
				apiCall("getOrder", "GET", 200),
				rec(telemetry.GatewayCacheMiss, "getOrder"),
				rec(telemetry.GatewayCacheHit, "getOrder"),
			}},
		{"an API call has its method and status, and a PUT no cache lookup", jsonReply(404, `{"error":"no such order"}`),
			[]call{{"replaceOrder", map[string]any{"id": "o9"}}},
			[]telemetry.GatewayRecord{
				rec(telemetry.GatewayValidationOK, "replaceOrder"),
				apiCall("replaceOrder", "PUT", 404),
			}},
		{"an answer whose body breaks off is no answer, as its result says", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{"id":`)) // then the connection closes, 94 bytes short
		},
			[]call{{"replaceOrder", map[string]any{"id": "o9"}}},
			[]telemetry.GatewayRecord{
				rec(telemetry.GatewayValidationOK, "replaceOrder"),
				apiCall("replaceOrder", "PUT", 0),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &gatewayEvents{}
			_, gw, cs := shop(t, tt.reply, &gateway.Options{Sink: sink})
			for _, c := range tt.calls {
				mcpfittest.Call(t, cs, c.tool, c.args)
			}
			require.NoError(t, gw.Close(), "Close flushes the records")
			assert.Equal(t, tt.want, sink.calls())
		})
	}

	t.Run("an API that does not answer is a call without a status", func(t *testing.T) {
		api := httptest.NewServer(http.NotFoundHandler())
		api.Close()
		sink := &gatewayEvents{}
		gw, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL, Sink: sink})
		mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
		require.NoError(t, gw.Close())
		calls := sink.of(telemetry.GatewayAPICall)
		require.Len(t, calls, 1)
		assert.Zero(t, calls[0].Status)
		assert.True(t, calls[0].APIError())
	})
}

func TestTheGatewayRecordsStartupSessionsAndDiscovery(t *testing.T) {
	sink := &gatewayEvents{}
	api := newFakeAPI(t, jsonReply(200, "[]"))
	gw, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL, Sink: sink})
	_, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	_, err = cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.NoError(t, cs.Close())
	require.Eventually(t, func() bool { return gw.Stats().CurrentSessions == 0 }, 30*time.Second, time.Millisecond)
	require.NoError(t, gw.Close())

	startup := sink.of(telemetry.GatewayStartup)
	require.Len(t, startup, 1)
	assert.Equal(t, len(gw.Operations()), startup[0].Tools)
	assert.Equal(t, gw.Stats().Startup, startup[0].Duration)
	assert.Len(t, sink.of(telemetry.GatewayDiscovery), 1, "a session's first tools/list only")
	assert.Len(t, sink.of(telemetry.GatewaySessionOpened), 1)
	assert.Len(t, sink.of(telemetry.GatewaySessionClosed), 1)
	for _, r := range sink.got {
		assert.False(t, r.Time.IsZero(), "%s has a time", r.Event)
		assert.NoError(t, r.Validate())
	}
}

func TestTheGatewayRecordsTheReductionOfShapedResults(t *testing.T) {
	api := httptest.NewServer(bookings.Handler())
	t.Cleanup(api.Close)
	doc, err := gateway.Parse(t.Context(), readFile(t, "../examples/httpserver/openapi.json"))
	require.NoError(t, err)
	sink := &gatewayEvents{}
	gw, cs := connect(t, doc, newGuard(t, ctxfit.Config{Threshold: 1000}), &gateway.Options{BaseURL: api.URL, Sink: sink})
	mcpfittest.Call(t, cs, "getBooking", map[string]any{"id": "BK00042"})
	require.NoError(t, gw.Close())

	shaped := sink.of(telemetry.GatewayShaped)
	require.Len(t, shaped, 1)
	assert.Equal(t, "getBooking", shaped[0].Tool)
	assert.Equal(t, "summary", shaped[0].Strategy)
	assert.InDelta(t, gw.Stats().SummaryReductionMean, shaped[0].Reduction, 1e-9)
	assert.GreaterOrEqual(t, shaped[0].Reduction, telemetry.ReductionTarget)
}

func TestTheGatewayFeedsTheAggregate(t *testing.T) {
	agg := telemetry.NewAggregate(nil)
	_, gw, cs := shop(t, jsonReply(200, order), &gateway.Options{Sink: agg})
	mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
	mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
	require.NoError(t, gw.Close())
	got, st := agg.Gateway(), gw.Stats()
	assert.Equal(t, int64(st.Cache.Hits+st.Cache.Shared), got.CacheHits)
	assert.Equal(t, int64(st.Cache.Misses), got.CacheMisses)
	assert.Equal(t, st.ValidationSuccesses, got.ValidationSuccesses)
	assert.Equal(t, st.Calls, got.APICalls)
	assert.Equal(t, int64(1), got.SessionsOpened)
}
