package mcpfit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// resolved returns the output schema of tool as a client sees it.
func outputSchemaOf(t *testing.T, cs *mcp.ClientSession, tool string) *jsonschema.Resolved {
	t.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tl := range tools.Tools {
		if tl.Name == tool {
			var s jsonschema.Schema
			require.NoError(t, json.Unmarshal(mustJSON(t, tl.OutputSchema), &s))
			rs, err := s.Resolve(nil)
			require.NoError(t, err)
			return rs
		}
	}
	t.Fatalf("no tool %q", tool)
	return nil
}

func asInstance(t *testing.T, v any) any {
	t.Helper()
	var inst any
	require.NoError(t, json.Unmarshal(mustJSON(t, v), &inst))
	return inst
}

func TestToolsListRewritesTheOutputSchemaSoShapedResultsValidate(t *testing.T) {
	own, err := jsonschema.For[bookingtools.SearchResult](nil)
	require.NoError(t, err)
	before := string(mustJSON(t, own))

	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	addTools(s)
	mcp.AddTool(s, &mcp.Tool{Name: "search_own_schema", OutputSchema: own},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, bookingtools.SearchResult, error) {
			return nil, bookingtools.SearchBookings(in.Query, in.Limit), nil
		})
	require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{}), nil))
	cs := connect(t, s)

	for _, tool := range []string{"search_bookings", "search_own_schema"} {
		t.Run(tool, func(t *testing.T) {
			schema := outputSchemaOf(t, cs, tool)
			assert.Equal(t, "object", schema.Schema().Type, "MCP requires type object at the root")
			require.Len(t, schema.Schema().AnyOf, 5)

			shaped := mcpfittest.Call(t, cs, tool, map[string]any{"query": ""})
			require.Equal(t, "pagination", shaped.Meta[mcpcore.MetaStrategy])
			assert.NoError(t, schema.Validate(asInstance(t, shaped.StructuredContent)), "a shaped result validates")

			small := mcpfittest.Call(t, cs, tool, map[string]any{"query": "lovelace", "limit": 1})
			assert.NoError(t, schema.Validate(asInstance(t, small.StructuredContent)), "the tool's own result validates")

			assert.Error(t, schema.Validate(map[string]any{"total": "many"}), "the schema still rejects what neither matches")
		})
	}
	t.Run("the server's own tools are not modified", func(t *testing.T) {
		assert.Equal(t, before, string(mustJSON(t, own)))
		a, b := outputSchemaOf(t, cs, "search_bookings"), outputSchemaOf(t, cs, "search_bookings")
		assert.Equal(t, mustJSON(t, a.Schema()), mustJSON(t, b.Schema()), "listing twice gives the same schema")
	})
	t.Run("ctxfit's own tools have input schemas", func(t *testing.T) {
		tools, err := cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		names := map[string]bool{}
		for _, tl := range tools.Tools {
			names[tl.Name] = true
		}
		assert.True(t, names[mcpcore.DefaultNextTool])
		assert.True(t, names[mcpcore.DefaultDetailsTool])
	})
}

func TestEveryShapedResultHasAFreshMetaMap(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	addTools(s)
	require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{}), nil))
	var mu sync.Mutex
	var seen []*mcp.CallToolResult
	// Added after Install: it sees the shaped results the server sends.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok {
				mu.Lock()
				seen = append(seen, r)
				mu.Unlock()
			}
			return res, err
		}
	})
	cs := connect(t, s)
	first := mcpfittest.Call(t, cs, "read_short_log", nil)
	second := mcpfittest.Call(t, cs, "read_short_log", nil)
	mcpfittest.Call(t, cs, mcpcore.DefaultNextTool, map[string]any{"cursor": first.Meta[mcpcore.MetaNextCursor]})

	assert.Equal(t, "kept", first.Meta["example/tool"], "the tool's own _meta keys are kept")
	assert.NotEmpty(t, second.Meta[mcpcore.MetaNextCursor])
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 3)
	ptrs := map[uintptr]bool{}
	for _, r := range seen {
		p := reflect.ValueOf(r.Meta).Pointer()
		assert.False(t, ptrs[p], "a result shares its _meta map")
		ptrs[p] = true
	}
}

func TestACursorOfAnotherHTTPSessionIsRejected(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	addTools(s)
	require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{}), nil))
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	session := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	one, two := session(), session()
	require.NotEqual(t, one.ID(), two.ID())
	next := mcpfittest.Call(t, one, "list_bookings", nil).Meta[mcpcore.MetaNextCursor]
	require.NotEmpty(t, next)

	res := mcpfittest.Call(t, two, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
	require.True(t, res.IsError)
	assert.Contains(t, mcpfittest.Texts(t, res)[0], "cursor_mismatch")
	assert.False(t, mcpfittest.Call(t, one, mcpcore.DefaultNextTool, map[string]any{"cursor": next}).IsError)
}

// TestEveryStructuredContentCtxfitSendsValidatesAgainstTheRewrittenSchema
// holds every form of structured content a shaped result may have to the
// output schema tools/list advertises.
func TestEveryStructuredContentCtxfitSendsValidatesAgainstTheRewrittenSchema(t *testing.T) {
	schema, err := mcpcore.OutputSchema(json.RawMessage(`{"type":"object","properties":{"items":{"type":"array"}},"required":["items"],"additionalProperties":false}`))
	require.NoError(t, err)
	var js jsonschema.Schema
	require.NoError(t, json.Unmarshal(schema, &js))
	sch, err := js.Resolve(nil)
	require.NoError(t, err)

	g := newGuard(t, ctxfit.Config{Threshold: 500, HardCap: 1000})
	s := &mcpcore.Shaper{Guard: g}
	cut, err := s.Gate(context.Background(), mcpcore.Call{Tool: "t", Subject: "s"}, mustJSON(t, map[string]any{
		"content": []any{map[string]any{"type": "text", "text": "x"}}, "structuredContent": map[string]any{"items": strings.Split(strings.Repeat("a line of text\\n", 20000), "\n")}}), nil)
	require.NoError(t, err)
	toon, err := s.Gate(context.Background(), mcpcore.Call{Tool: "t", Subject: "s"},
		json.RawMessage(`{"content":[],"structuredContent":{"items":[]}}`),
		json.RawMessage(`{"content":[{"type":"text","text":"items[2]: 1,2"}]}`))
	require.NoError(t, err)
	for name, raw := range map[string]json.RawMessage{
		"the tool's own":             json.RawMessage(`{"structuredContent":{"items":[1]}}`),
		"a page":                     json.RawMessage(`{"structuredContent":{"items":[1],"nextCursor":"c","meta":{}}}`),
		"a summary":                  json.RawMessage(`{"structuredContent":{"summary":{},"meta":{}}}`),
		"a chunk":                    json.RawMessage(`{"structuredContent":{"content":"x","chunkIndex":0,"metadata":{}}}`),
		"a rendering by a format":    json.RawMessage(`{"structuredContent":{"text":"x","meta":{"format":"f","originalTokens":3}}}`),
		"a TOON page kept as text":   toon,
		"the gate's cut of a result": cut,
	} {
		t.Run(name+" validates", func(t *testing.T) {
			var w struct {
				Structured json.RawMessage `json:"structuredContent"`
			}
			require.NoError(t, json.Unmarshal(raw, &w))
			require.NotEmpty(t, w.Structured, "a result of a tool with an output schema has structured content")
			var v any
			require.NoError(t, json.Unmarshal(w.Structured, &v))
			assert.NoError(t, sch.Validate(v))
		})
	}
}
