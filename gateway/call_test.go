package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

const order = `{"id":"o1","customer":"Ada","lines":[{"sku":"ABC-1","quantity":2}],"total":{"amount":12.5,"currency":"EUR"}}`

// shop connects a client to a gateway for the shop document in front of a
// fake API that answers with reply.
func shop(t *testing.T, reply func(http.ResponseWriter, *http.Request), opts *gateway.Options) (*fakeAPI, *gateway.Gateway, *mcp.ClientSession) {
	t.Helper()
	api := newFakeAPI(t, reply)
	var o gateway.Options
	if opts != nil {
		o = *opts
	}
	o.BaseURL = api.URL + "/v2"
	gw, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &o)
	return api, gw, cs
}

func TestInvalidArgumentsAreToolErrorsAModelCanRetryFrom(t *testing.T) {
	api, gw, cs := shop(t, jsonReply(200, "[]"), nil)
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
		want gateway.ErrorData
	}{
		{"a missing required parameter", "getOrder", map[string]any{},
			gateway.ErrorData{Parameter: "id", Expected: "a value (the argument is required)", Status: 400}},
		{"a value outside the enum", "list_orders_v2", map[string]any{"status": "lost"},
			gateway.ErrorData{Parameter: "status", Value: `"lost"`, Expected: `one of "open", "shipped", "cancelled"`, Status: 400}},
		{"a value of the wrong type", "list_orders_v2", map[string]any{"limit": "ten"},
			gateway.ErrorData{Parameter: "limit", Value: `"ten"`, Expected: "a value of type integer", Status: 400}},
		{"an unknown argument", "getOrder", map[string]any{"id": "o1", "verbose": true},
			gateway.ErrorData{Parameter: "verbose", Value: "true", Expected: "no such argument", Status: 400}},
		{"a nested field of the body", "createOrder", map[string]any{"body": map[string]any{"customer": "Ada", "lines": []any{map[string]any{"sku": "abc", "quantity": 1}}}},
			gateway.ErrorData{Parameter: "body/lines/0/sku", Value: `"abc"`, Status: 400}},
		{"a long value, shortened", "list_orders_v2", map[string]any{"status": strings.Repeat("z", 200)},
			gateway.ErrorData{Parameter: "status", Value: `"` + strings.Repeat("z", 76) + "…", Expected: `one of "open", "shipped", "cancelled"`, Status: 400}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := mcpfittest.Call(t, cs, c.tool, c.args)
			e := toolError(t, res)
			assert.Equal(t, gateway.CodeParameterInvalid, e.Code)
			assert.Equal(t, c.want.Parameter, e.Data.Parameter)
			assert.Equal(t, c.want.Value, e.Data.Value)
			if c.want.Expected != "" {
				assert.Equal(t, c.want.Expected, e.Data.Expected)
			} else {
				assert.NotEmpty(t, e.Data.Expected)
			}
			assert.NotEmpty(t, e.Data.Suggestion)
			assert.Equal(t, 400, e.Data.Status)
			text := mcpfittest.Texts(t, res)[0]
			assert.Contains(t, text, `Argument "`+c.want.Parameter+`"`)
			assert.Contains(t, text, e.Data.Suggestion)
		})
	}
	t.Run("a tool without an output schema has the error as structured content too", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "list_orders_v2", map[string]any{"status": "lost"})
		var e gateway.Error
		require.NoError(t, json.Unmarshal(mustJSON(t, res.StructuredContent), &e))
		assert.Equal(t, "status", e.Data.Parameter)
	})
	t.Run("a tool with one does not (a client would check it against the success schema)", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "getOrder", map[string]any{})
		assert.Nil(t, res.StructuredContent)
	})
	assert.Empty(t, api.requests(), "nothing invalid reaches the API")
	assert.Zero(t, gw.Stats().ValidationSuccesses)
	assert.Equal(t, int64(8), gw.Stats().ValidationFailures)
}

func TestAValidCallIsOneRequestWithTheRightMethodPathQueryHeadersAndBody(t *testing.T) {
	api, _, cs := shop(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet && r.URL.Path == "/v2/orders" {
			_, _ = io.WriteString(w, "[]")
			return
		}
		_, _ = io.WriteString(w, order)
	}, &gateway.Options{Header: http.Header{"Authorization": {"Bearer s3cret"}}})

	t.Run("query parameters, arrays repeated or joined, and header parameters", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "list_orders_v2", map[string]any{
			"status": "open", "tag": []any{"a b", "c&d"}, "ids": []any{1, 2}, "limit": 10, "X-Request-Id": "r-1",
		})
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		got := api.requests()[len(api.requests())-1]
		assert.Equal(t, "GET", got.Method)
		assert.Equal(t, "/v2/orders", got.Path)
		assert.Equal(t, "ids=1,2&limit=10&status=open&tag=a+b&tag=c%26d", got.Query, "the comma of a form array is the delimiter, not data")
		assert.Equal(t, "r-1", got.Header.Get("X-Request-Id"))
		assert.Equal(t, "Bearer s3cret", got.Header.Get("Authorization"))
		assert.Equal(t, "[]", mcpfittest.Texts(t, res)[0])
	})
	t.Run("path parameters are escaped", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "a b/c?d", "query_id": "q"})
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		got := api.requests()[len(api.requests())-1]
		assert.Equal(t, "/v2/orders/a%20b%2Fc%3Fd", got.RawPath)
		assert.Equal(t, "id=q", got.Query)
	})
	t.Run("the body is sent as JSON", func(t *testing.T) {
		body := map[string]any{"customer": "Ada", "lines": []any{map[string]any{"sku": "ABC-1", "quantity": 2}}, "payment": map[string]any{"iban": "DE00"}}
		res := mcpfittest.Call(t, cs, "createOrder", map[string]any{"body": body})
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		got := api.requests()[len(api.requests())-1]
		assert.Equal(t, "POST", got.Method)
		assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
		assert.JSONEq(t, string(mustJSON(t, body)), got.Body)
	})
	t.Run("an object answer is the structured content of a tool with an output schema", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
		assert.JSONEq(t, order, string(mustJSON(t, res.StructuredContent)))
		assert.Equal(t, order, mcpfittest.Texts(t, res)[0])
	})
	t.Run("PUT and DELETE are sent as such", func(t *testing.T) {
		mcpfittest.Call(t, cs, "replaceOrder", map[string]any{"id": "o1"})
		assert.Equal(t, "PUT", api.requests()[len(api.requests())-1].Method)
		assert.Empty(t, api.requests()[len(api.requests())-1].Body, "no body argument, no body")
		mcpfittest.Call(t, cs, "deleteOrder", map[string]any{"id": "o1"})
		assert.Equal(t, "DELETE", api.requests()[len(api.requests())-1].Method)
	})
}

func TestTheBaseURLComesFromTheDocumentsServers(t *testing.T) {
	gw, err := gateway.New(loadShop(t), newGuard(t, ctxfit.Config{}), nil)
	require.NoError(t, err)
	defer gw.Close()
	t.Run("a relative server without a location is an error", func(t *testing.T) {
		d, err := gateway.Parse(t.Context(), []byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"servers":[{"url":"/api"}],
			"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`))
		require.NoError(t, err)
		_, err = gateway.New(d, newGuard(t, ctxfit.Config{}), nil)
		assert.ErrorContains(t, err, "--base-url")
	})
}

func TestAnswersOutside2xxAreToolErrorsWithStatusExcerptAndSuggestion(t *testing.T) {
	for _, c := range []struct {
		name       string
		status     int
		body       string
		suggestion string
	}{
		{"not found", 404, `{"error":"no order \"o9\""}`, "check the path arguments"},
		{"bad request", 400, `{"error":"limit too large"}`, "correct the arguments"},
		{"unauthorized", 401, `{"error":"token expired"}`, "credentials"},
		{"server error", 503, strings.Repeat("upstream down ", 100), "wait, then call again"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, gw, cs := shop(t, jsonReply(c.status, c.body), nil)
			res := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o9"})
			e := toolError(t, res)
			assert.Equal(t, gateway.CodeAPIError, e.Code)
			assert.Equal(t, c.status, e.Data.Status)
			assert.Contains(t, e.Message, fmt.Sprintf("GET /orders/{id} answered %d %s", c.status, http.StatusText(c.status)))
			assert.LessOrEqual(t, len(e.Data.Excerpt), 300)
			assert.True(t, strings.HasPrefix(c.body, strings.TrimSuffix(e.Data.Excerpt, "…")) ||
				strings.HasPrefix(strings.Join(strings.Fields(c.body), " "), strings.TrimSuffix(e.Data.Excerpt, "…")), e.Data.Excerpt)
			assert.Contains(t, strings.ToLower(e.Data.Suggestion), c.suggestion)
			assert.Equal(t, int64(1), gw.Stats().APIErrors)
		})
	}
	t.Run("no answer at all", func(t *testing.T) {
		api := newFakeAPI(t, jsonReply(200, "{}"))
		api.Close()
		_, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL, Timeout: time.Minute})
		e := toolError(t, mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"}))
		assert.Equal(t, gateway.CodeAPIUnreachable, e.Code)
		assert.NotContains(t, e.Message, api.URL, "the URL is not repeated")
		assert.NotEmpty(t, e.Data.Suggestion)
	})
}

func TestGETResultsAreCachedAndOthersAreNot(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	api, gw, cs := shop(t, jsonReply(200, order), &gateway.Options{Now: clock})

	first := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
	again := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
	assert.Equal(t, mcpfittest.Texts(t, first), mcpfittest.Texts(t, again))
	assert.Len(t, api.requests(), 1, "the second GET is served from the cache")

	mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o2"})
	assert.Len(t, api.requests(), 2, "other arguments, another entry")

	mcpfittest.Call(t, cs, "replaceOrder", map[string]any{"id": "o1"})
	mcpfittest.Call(t, cs, "replaceOrder", map[string]any{"id": "o1"})
	assert.Len(t, api.requests(), 4, "PUT is not cached")

	st := gw.Stats().Cache
	assert.Equal(t, uint64(1), st.Hits)
	assert.Equal(t, uint64(2), st.Misses)

	now = now.Add(gateway.DefaultCacheTTL + time.Second)
	mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
	assert.Len(t, api.requests(), 5, "after the TTL the GET runs again")

	t.Run("a negative TTL turns the cache off", func(t *testing.T) {
		api, _, cs := shop(t, jsonReply(200, order), &gateway.Options{CacheTTL: -1})
		mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
		mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
		assert.Len(t, api.requests(), 2)
	})
	t.Run("errors are not cached", func(t *testing.T) {
		api, _, cs := shop(t, jsonReply(500, `{"error":"boom"}`), nil)
		mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
		mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
		assert.Len(t, api.requests(), 2)
	})
}

func TestBoundsSayTheNumberExpected(t *testing.T) {
	_, _, cs := shop(t, jsonReply(200, "[]"), nil)
	for args, want := range map[int]string{0: "a number of at least 1", 100: "a number less than 100"} {
		e := toolError(t, mcpfittest.Call(t, cs, "list_orders_v2", map[string]any{"limit": args}))
		assert.Equal(t, want, e.Data.Expected)
		assert.Equal(t, "limit", e.Data.Parameter)
	}
}
