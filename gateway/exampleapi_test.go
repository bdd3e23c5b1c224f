package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// exampleGateway connects a client to a gateway built from
// examples/httpserver's OpenAPI document in front of the bare example API
// (bookings.Handler, without ctxfit's HTTP middleware, and the
// example's /healthz), so that the gateway's guard is the one that shapes.
func exampleGateway(t *testing.T, cfg ctxfit.Config) (*gateway.Gateway, *mcp.ClientSession) {
	t.Helper()
	mux := bookings.Handler()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
	api := httptest.NewServer(mux)
	t.Cleanup(api.Close)
	doc, err := gateway.Parse(context.Background(), readFile(t, "../examples/httpserver/openapi.json"))
	require.NoError(t, err)
	return connect(t, doc, newGuard(t, cfg), &gateway.Options{BaseURL: api.URL})
}

func TestTheExampleAPIBecomesGuardedTools(t *testing.T) {
	gw, cs := exampleGateway(t, ctxfit.Config{})
	hardCap := ctxfit.DefaultHardCap

	t.Run("every operation is a tool beside ctxfit's own", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		assert.ElementsMatch(t, []string{"listBookings", "getBooking", "getLog", "health",
			"ctxfit_next", "ctxfit_details", "ctxfit_search", "ctxfit_query"}, names)
	})

	t.Run("the list comes in pages within the hard cap that add up to the whole list", func(t *testing.T) {
		results := mcpfittest.Follow(t, cs, "listBookings", map[string]any{}, hardCap)
		require.Greater(t, len(results), 1, "500 bookings do not fit one result")
		whole, err := json.Marshal(bookings.Bookings())
		require.NoError(t, err)
		assert.JSONEq(t, string(whole), mcpfittest.JoinItems(t, mcpfittest.Bodies(t, results), "items"))
	})

	t.Run("a filter is a query parameter", func(t *testing.T) {
		results := mcpfittest.Follow(t, cs, "listBookings", map[string]any{"status": "pending", "order": "created_desc"}, hardCap)
		want, ok := bookings.Filter("pending", "created_desc")
		require.True(t, ok)
		whole, err := json.Marshal(want)
		require.NoError(t, err)
		assert.JSONEq(t, string(whole), mcpfittest.JoinItems(t, mcpfittest.Bodies(t, results), "items"))
	})

	t.Run("the log comes in chunks that rebuild it byte for byte", func(t *testing.T) {
		results := mcpfittest.Follow(t, cs, "getLog", map[string]any{"name": "app"}, hardCap)
		require.Greater(t, len(results), 1)
		assert.NotNil(t, results[0].StructuredContent, "a text answer of an operation with an output schema has structured content: "+
			"a strict client rejects a result without (ctxfit_next has no output schema)")
		text, ok := bookings.Log("app")
		require.True(t, ok)
		assert.Equal(t, text, mcpfittest.JoinChunks(t, mcpfittest.Bodies(t, results)))
	})

	t.Run("a booking under the threshold passes through untouched", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "getBooking", map[string]any{"id": "BK00042"})
		require.False(t, res.IsError)
		d, ok := bookings.Detail("BK00042")
		require.True(t, ok)
		whole, err := json.Marshal(d)
		require.NoError(t, err)
		assert.JSONEq(t, string(whole), mcpfittest.Texts(t, res)[0])
		assert.Empty(t, mcpfittest.NextCursor(res))
	})

	t.Run("an identifier of the wrong form is refused before the call", func(t *testing.T) {
		e := toolError(t, mcpfittest.Call(t, cs, "getBooking", map[string]any{"id": "42"}))
		assert.Equal(t, gateway.CodeParameterInvalid, e.Code)
		assert.Equal(t, "id", e.Data.Parameter)
		assert.Equal(t, `"42"`, e.Data.Value)
	})

	t.Run("a booking that does not exist is the API's 404", func(t *testing.T) {
		e := toolError(t, mcpfittest.Call(t, cs, "getBooking", map[string]any{"id": "BK99999"}))
		assert.Equal(t, gateway.CodeAPIError, e.Code)
		assert.Equal(t, 404, e.Data.Status)
		assert.Contains(t, e.Data.Excerpt, `no booking \"BK99999\"`)
	})

	t.Run("a tool with an output schema returns structured content", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "health", map[string]any{})
		assert.JSONEq(t, `{"status":"ok"}`, string(mustJSON(t, res.StructuredContent)))
	})

	st := gw.Stats()
	assert.Equal(t, int64(1), st.ValidationFailures)
	assert.Positive(t, st.ValidationSuccesses)
	assert.Equal(t, int64(1), st.APIErrors)
}

func TestASummarizedBookingLeadsToItsDetails(t *testing.T) {
	_, cs := exampleGateway(t, ctxfit.Config{Threshold: 1000})
	res := mcpfittest.Call(t, cs, "getBooking", map[string]any{"id": "BK00042"})
	require.False(t, res.IsError)
	assert.Equal(t, "summary", res.Meta[mcpcore.MetaStrategy])
	assert.LessOrEqual(t, mcpfittest.Tokens(t, res), 1000)
	cursor := mcpfittest.DetailsCursor(res)
	require.NotEmpty(t, cursor)
	details := mcpfittest.Call(t, cs, "ctxfit_details", map[string]any{"cursor": cursor, "fields": "policies"})
	require.False(t, details.IsError, mcpfittest.Texts(t, details))
	d, _ := bookings.Detail("BK00042")
	assert.Contains(t, mcpfittest.Texts(t, details)[0], d["policies"].(map[string]any)["cancellation"].(string))
}

func TestStatsCountSessionsAndDiscovery(t *testing.T) {
	gw, cs := exampleGateway(t, ctxfit.Config{})
	_, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	_, err = cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	st := gw.Stats()
	assert.Equal(t, int64(1), st.Sessions)
	assert.Equal(t, int64(1), st.CurrentSessions)
	assert.Equal(t, int64(1), st.PeakSessions)
	assert.Equal(t, 1, st.Discoveries, "a session's first tools/list is its discovery")
	assert.Positive(t, st.Startup)
}

func TestStatsMeasureWhatTheGuardCutFromSummaries(t *testing.T) {
	gw, cs := exampleGateway(t, ctxfit.Config{Threshold: 1000})
	res := mcpfittest.Call(t, cs, "getBooking", map[string]any{"id": "BK00042"})
	require.Equal(t, "summary", res.Meta[mcpcore.MetaStrategy])
	mcpfittest.Follow(t, cs, "listBookings", map[string]any{"status": "pending"}, ctxfit.DefaultHardCap)
	mcpfittest.Call(t, cs, "health", map[string]any{}) // passes through: not counted

	st := gw.Stats()
	assert.Equal(t, int64(2), st.Shaped, "the summary and the first page; continuations are not counted")
	assert.Equal(t, int64(1), st.Summarized)
	original, _ := res.Meta[mcpcore.MetaOriginalTokens].(float64)
	sent, _ := res.Meta[mcpcore.MetaTokens].(float64)
	require.Positive(t, original)
	assert.InDelta(t, 1-sent/original, st.SummaryReductionMean, 1e-9)
	assert.Equal(t, 1.0, st.SummariesAtLeast70, "a 3,200-token booking summarized within 1,000 tokens")
	assert.Greater(t, st.ReductionMean, 0.0)
}
