package mcpgofit_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/mcpgofit"
)

const testSecret = "0123456789abcdef0123456789abcdef-test"

// toolMeta is the _meta a test tool returns; shaping must keep it.
var toolMeta = &mcp.Meta{AdditionalFields: map[string]any{"example/tool": "kept"}}

// calls counts the runs of each test tool, by name.
type calls map[string]*atomic.Int64

func (c calls) of(name string) int64 {
	if n, ok := c[name]; ok {
		return n.Load()
	}
	return 0
}

// testLog is the log read_log serves: 2,000 lines of the example's log
// generator rather than its 10,000, because ctxfit counts the whole text on
// every continuation and the race detector multiplies that. The end-to-end
// test of examples/mcpgoserver follows the full log.
var testLog = corpus.Log(2000)

// addTools registers the example tools (those of examples/mcpgoserver, with
// a shorter log) and one for an edge case, and returns their run counters.
func addTools(s *server.MCPServer) calls {
	c := calls{}
	counted := func(name string, h server.ToolHandlerFunc) server.ToolHandlerFunc {
		c[name] = new(atomic.Int64)
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c[name].Add(1)
			return h(ctx, req)
		}
	}
	s.AddTool(mcp.NewTool("list_bookings", mcp.WithString("status"), readOnly),
		counted("list_bookings", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return jsonResult(bookingtools.ListBookings(req.GetString("status", "")))
		}))
	s.AddTool(mcp.NewTool("get_booking", mcp.WithString("id", mcp.Required()), readOnly),
		counted("get_booking", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := bookingtools.GetBooking(req.GetString("id", ""))
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return jsonResult(b)
		}))
	s.AddTool(mcp.NewTool("read_log", mcp.WithString("name"), readOnly),
		counted("read_log", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if name := req.GetString("name", ""); name != "" && name != bookingtools.LogName {
				return mcp.NewToolResultError("no log named " + name), nil
			}
			res := mcp.NewToolResultText(testLog)
			res.Meta = toolMeta
			return res, nil
		}))
	s.AddTool(mcp.NewTool("search_bookings", mcp.WithString("query", mcp.Required()), mcp.WithNumber("limit"), readOnly,
		mcp.WithOutputSchema[bookingtools.SearchResult]()),
		counted("search_bookings", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructuredOnly(bookingtools.SearchBookings(req.GetString("query", ""), req.GetInt("limit", 0))), nil
		}))
	s.AddTool(mcp.NewTool("big_image", readOnly),
		counted("big_image", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent(testLog),
				mcp.NewImageContent("bm90IHJlYWxseSBhIHBuZw==", "image/png"),
			}}, nil
		}))
	return c
}

// readOnly annotates the test tools: they change nothing, so a response
// cache may stand in for them and replay mode may run them again.
var readOnly = mcp.WithReadOnlyHintAnnotation(true)

func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultText(string(b)), nil
}

// newServer returns a server with the test tools; it validates tool output
// against the output schemas, as strict servers do.
func newServer(opts ...server.ServerOption) (*server.MCPServer, calls) {
	s := server.NewMCPServer("test", "1", append([]server.ServerOption{server.WithOutputSchemaValidation()}, opts...)...)
	return s, addTools(s)
}

// connect returns an initialized in-process client of s.
func connect(t *testing.T, s *server.MCPServer) *client.Client {
	t.Helper()
	ctx := context.Background()
	c, err := client.NewInProcessClient(s)
	require.NoError(t, err)
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "test-client", Version: "1"},
	}})
	require.NoError(t, err)
	return c
}

// newGuard returns a guard with cfg (and a fixed secret).
func newGuard(t *testing.T, cfg ctxfit.Config) *ctxfit.Guard {
	t.Helper()
	if cfg.Secret == "" {
		cfg.Secret = testSecret
	}
	if cfg.ShapeTimeout == 0 {
		cfg.ShapeTimeout = ctxfit.Duration(time.Hour) // not a test of timing: a loaded machine must not time out
	}
	if cfg.AdmissionWait == 0 {
		cfg.AdmissionWait = ctxfit.Duration(time.Hour) // nor wait too little for room to shape
	}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// fixture is a guarded server and a raw one with the same tools, and a
// client of each.
type fixture struct {
	server      *server.MCPServer
	calls       calls
	client, raw *client.Client
}

func guarded(t *testing.T, cfg ctxfit.Config, opts *mcpgofit.Options) fixture {
	t.Helper()
	s, c := newServer()
	require.NoError(t, mcpgofit.Install(s, newGuard(t, cfg), opts))
	raw, _ := newServer()
	return fixture{server: s, calls: c, client: connect(t, s), raw: connect(t, raw)}
}

func call(t *testing.T, c *client.Client, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	require.NoError(t, err)
	return res
}

// texts returns the text blocks of a result.
func texts(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		if l, ok := c.(mcp.ResourceLink); ok && l.Meta != nil && l.Meta.AdditionalFields[mcpcore.MetaOriginal] == true {
			continue // the link to the original
		}
		tc, ok := c.(mcp.TextContent)
		require.True(t, ok, "content %T is not text", c)
		out = append(out, tc.Text)
	}
	return out
}

// bodyOf is what ctxfit measures of a raw result: its structured content as
// sent, else its text.
func bodyOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.RawStructuredContent) > 0 {
		return string(res.RawStructuredContent)
	}
	return strings.Join(texts(t, res), "\n")
}

func metaOf(res *mcp.CallToolResult) map[string]any {
	if res.Meta == nil {
		return nil
	}
	return res.Meta.AdditionalFields
}

var exact = func() budget.Counter {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		panic(err)
	}
	return c
}()

// tokensOf counts what the model reads of a result: its text blocks and
// its link to the original.
func tokensOf(t *testing.T, res *mcp.CallToolResult) int {
	t.Helper()
	n := exact.Count(strings.Join(texts(t, res), "\n"))
	if link := original(res); link != nil {
		b, err := json.Marshal(link)
		require.NoError(t, err)
		n += exact.Count(string(b))
	}
	return n
}

// original returns the resource_link to the held-back original of a shaped
// result, nil when it has none.
func original(res *mcp.CallToolResult) *mcp.ResourceLink {
	for _, c := range res.Content {
		if l, ok := c.(mcp.ResourceLink); ok && l.Meta != nil && l.Meta.AdditionalFields[mcpcore.MetaOriginal] == true {
			return &l
		}
	}
	return nil
}

// follow calls tool and then ctxfit_next with every cursor until the end,
// checking every result against the hard cap, and returns the results.
func followAll(t *testing.T, c *client.Client, tool string, args any, hardCap int) []*mcp.CallToolResult {
	t.Helper()
	var out []*mcp.CallToolResult
	res := call(t, c, tool, args)
	for range 1000 {
		require.False(t, res.IsError, "result is an error: %v", texts(t, res))
		assert.LessOrEqual(t, tokensOf(t, res), hardCap, "a result exceeds the hard cap")
		out = append(out, res)
		next, _ := metaOf(res)[mcpcore.MetaNextCursor].(string)
		if next == "" {
			return out
		}
		var b struct {
			NextCursor string `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal([]byte(body(t, res)), &b))
		assert.Equal(t, next, b.NextCursor, "the cursor in _meta is the one in the body")
		res = call(t, c, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
	}
	t.Fatal("more than 1000 continuations")
	return nil
}

// bodies returns the shaped bodies of results ([body]).
func bodies(t *testing.T, results []*mcp.CallToolResult) []string {
	t.Helper()
	out := make([]string, len(results))
	for i, res := range results {
		out[i] = body(t, res)
	}
	return out
}

// body returns the shaped body of a result: the text of its first block,
// or the chunk envelope of a chunk of a text, which travels as text
// ([follow.ResultBody]).
func body(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	b, err := follow.ResultBody(raw)
	require.NoError(t, err)
	return string(b)
}

// errorOf decodes the structured error of an isError result.
func errorOf(t *testing.T, res *mcp.CallToolResult) mcpcore.Error {
	t.Helper()
	require.True(t, res.IsError, "not an error: %v", texts(t, res))
	var e mcpcore.Error
	require.NoError(t, json.Unmarshal(res.RawStructuredContent, &e))
	return e
}

// rebuild follows every cursor and part of the shaped result first and
// returns the original, byte for byte; no result may exceed hardCap.
func rebuild(t *testing.T, c *client.Client, first *mcp.CallToolResult, hardCap int) string {
	t.Helper()
	next := func(cursor string, part int64) ([]byte, error) {
		args := map[string]any{"cursor": cursor}
		if part != 0 {
			args["part"] = part
		}
		res := call(t, c, mcpcore.DefaultNextTool, args)
		require.False(t, res.IsError, "result is an error: %v", texts(t, res))
		assert.LessOrEqual(t, tokensOf(t, res), hardCap, "a result exceeds the hard cap")
		return []byte(body(t, res)), nil
	}
	out, _, err := follow.Rebuild([]byte(body(t, first)), next)
	require.NoError(t, err)
	return string(out)
}
