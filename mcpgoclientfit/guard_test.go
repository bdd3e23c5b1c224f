package mcpgoclientfit_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/mcpgoclientfit"
	"github.com/ctxfit/ctxfit/store"
)

const testSecret = "0123456789abcdef0123456789abcdef-test"

var testLog = corpus.Log(1500)

var exact = func() budget.Counter {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		panic(err)
	}
	return c
}()

// upstream is an mcp-go server the agent does not control; it counts the
// calls of each tool.
func upstream(t *testing.T) (*server.MCPServer, map[string]*atomic.Int64) {
	t.Helper()
	s := server.NewMCPServer("upstream", "1", server.WithToolCapabilities(true), server.WithResourceCapabilities(false, false))
	calls := map[string]*atomic.Int64{}
	add := func(tool mcp.Tool, h server.ToolHandlerFunc) {
		calls[tool.Name] = &atomic.Int64{}
		s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls[tool.Name].Add(1)
			return h(ctx, req)
		})
	}
	// read_log changes nothing: replay mode may run it again.
	add(mcp.NewTool("read_log", mcp.WithReadOnlyHintAnnotation(true)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(testLog), nil
	})
	add(mcp.NewTool("list_items"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		items := corpus.JSON(60000)
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(items)}, StructuredContent: json.RawMessage(`{"items":` + items + `}`)}, nil
	})
	add(mcp.NewTool("small"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("small <b> & result"), nil
	})
	s.AddResource(mcp.NewResource("file:///app.log", "app.log"), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: "file:///app.log", MIMEType: "text/plain", Text: testLog}}, nil
	})
	s.AddResource(mcp.NewResource("file:///data.bin", "data.bin"), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		blob := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00binary\xff", 30000)))
		return []mcp.ResourceContents{mcp.BlobResourceContents{URI: "file:///data.bin", MIMEType: "application/octet-stream", Blob: blob}}, nil
	})
	return s, calls
}

func newGuard(t *testing.T, cfg ctxfit.Config) *mcpgoclientfit.Guard {
	t.Helper()
	cfg.Secret = testSecret
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	cg, err := mcpgoclientfit.New(g, nil)
	require.NoError(t, err)
	return cg
}

// connect returns an initialized client of s, through cg when it is not
// nil.
func connect(t *testing.T, s *server.MCPServer, cg *mcpgoclientfit.Guard) *client.Client {
	t.Helper()
	ctx := context.Background()
	var tr transport.Interface = transport.NewInProcessTransport(s)
	if cg != nil {
		tr = cg.Wrap(tr)
	}
	c := client.NewClient(tr)
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() })
	_, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "agent", Version: "1"}}})
	require.NoError(t, err)
	return c
}

func callTool(t *testing.T, ctx context.Context, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	require.NoError(t, err)
	return res
}

func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

// rebuild follows every cursor and part of a shaped result with
// ctxfit_next, through the client, and returns the original.
func rebuild(t *testing.T, ctx context.Context, c *client.Client, first *mcp.CallToolResult, hardCap int) string {
	t.Helper()
	out, _, err := follow.Rebuild(body(t, first), func(cursor string, part int64) ([]byte, error) {
		args := map[string]any{"cursor": cursor}
		if part != 0 {
			args["part"] = part
		}
		res := callTool(t, ctx, c, "ctxfit_next", args)
		require.False(t, res.IsError, "%v", texts(res))
		assert.LessOrEqual(t, exact.Count(strings.Join(texts(res), "\n")), hardCap)
		return body(t, res), nil
	})
	require.NoError(t, err)
	return string(out)
}

// body returns the shaped body of a result: the text of its first block,
// or the chunk envelope of a chunk of a text, which travels as text
// ([follow.ResultBody]).
func body(t *testing.T, res *mcp.CallToolResult) []byte {
	t.Helper()
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	b, err := follow.ResultBody(raw)
	require.NoError(t, err)
	return b
}

func TestResultsAreShapedAndRebuildByteForByte(t *testing.T) {
	s, calls := upstream(t)
	cg := newGuard(t, ctxfit.Config{Threshold: 2000, HardCap: 3000})
	c, raw := connect(t, s, cg), connect(t, s, nil)
	ctx := context.Background()

	first := callTool(t, ctx, c, "read_log", map[string]any{})
	assert.Equal(t, "chunking", first.Meta.AdditionalFields["dev.ctxfit/strategy"])
	assert.LessOrEqual(t, exact.Count(strings.Join(texts(first), "\n")), 3000)
	assert.Equal(t, testLog, rebuild(t, ctx, c, first, 3000))

	want := callTool(t, ctx, raw, "list_items", map[string]any{})
	first = callTool(t, ctx, c, "list_items", map[string]any{})
	assert.Equal(t, "pagination", first.Meta.AdditionalFields["dev.ctxfit/strategy"])
	assert.Equal(t, string(want.RawStructuredContent), rebuild(t, ctx, c, first, 3000), "the structured content as the server wrote it")

	small := callTool(t, ctx, c, "small", map[string]any{})
	assert.Equal(t, callTool(t, ctx, raw, "small", map[string]any{}), small, "a small result passes untouched")
	assert.Zero(t, calls["read_log"].Load()-1, "continuations come from the store, not the server")
}

func TestReplayModeRunsTheToolAgainOnTheTransport(t *testing.T) {
	s, calls := upstream(t)
	cg := newGuard(t, ctxfit.Config{Threshold: 2000, HardCap: 3000, Mode: ctxfit.ModeReplay})
	c := connect(t, s, cg)
	ctx := context.Background()
	_, err := c.ListTools(ctx, mcp.ListToolsRequest{}) // the guard learns which tools may run again
	require.NoError(t, err)
	first := callTool(t, ctx, c, "read_log", map[string]any{})
	assert.Equal(t, testLog, rebuild(t, ctx, c, first, 3000))
	assert.Greater(t, calls["read_log"].Load(), int64(2))

	// list_items says nothing of running again: continuing it does not.
	items := callTool(t, ctx, c, "list_items", map[string]any{})
	rebuild(t, ctx, c, items, 3000)
	assert.Equal(t, int64(1), calls["list_items"].Load(), "no reruns of a tool that may change something")

	// Through the guard alone too.
	next, _ := first.Meta.AdditionalFields["dev.ctxfit/nextCursor"].(string)
	args, _ := json.Marshal(map[string]string{"cursor": next})
	res, err := cg.CallTool(ctx, "ctxfit_next", args)
	require.NoError(t, err)
	assert.False(t, res.IsError, "%v", texts(res))
}

func TestResourcesAreShapedAndHeldBackBlobsReadLocally(t *testing.T) {
	s, _ := upstream(t)
	cg := newGuard(t, ctxfit.Config{Threshold: 2000, HardCap: 3000})
	c := connect(t, s, cg)
	ctx := store.WithSubject(context.Background(), "alice")

	got, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "file:///app.log"}})
	require.NoError(t, err)
	require.Len(t, got.Contents, 2)
	chunk := got.Contents[0].(mcp.TextResourceContents)
	assert.True(t, strings.HasPrefix(testLog, chunk.Text), "a chunk of the text, as it is")
	assert.Contains(t, chunk.Meta, "dev.ctxfit/chunk", "its place in its _meta")
	first := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: chunk.Text, Meta: &mcp.Meta{AdditionalFields: chunk.Meta}}}}
	first.Meta = got.Meta
	assert.Equal(t, testLog, rebuild(t, ctx, c, first, 3000))

	got, err = c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "file:///data.bin"}})
	require.NoError(t, err)
	link := got.Contents[0].(mcp.TextResourceContents)
	require.True(t, strings.HasPrefix(link.URI, "ctxfit://r/"), link.URI)
	back, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: link.URI}})
	require.NoError(t, err)
	blob, err := base64.StdEncoding.DecodeString(back.Contents[0].(mcp.BlobResourceContents).Blob)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("\x00binary\xff", 30000), string(blob))
	_, err = c.ReadResource(store.WithSubject(ctx, "bob"), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: link.URI}})
	assert.Error(t, err, "bound to its subject")
}

func TestKeepAndTools(t *testing.T) {
	s, _ := upstream(t)
	cg := newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: 2000})
	c := connect(t, s, cg)
	ctx := store.WithSubject(context.Background(), "session")
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, Content: "q"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "a", Type: "function", Function: conversation.FunctionCall{Name: "read_log"}}}},
		{Role: conversation.RoleTool, ToolCallID: "a", Content: testLog},
		{Role: conversation.RoleAssistant, Content: "done"},
		{Role: conversation.RoleUser, Content: "next"},
	}
	r, err := conversation.FitContext(ctx, msgs, 600, &conversation.Options{Keeper: cg})
	require.NoError(t, err)
	require.Len(t, r.Cleared, 1)
	var args map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Cleared[0].Recall.Arguments), &args))
	first := callTool(t, ctx, c, r.Cleared[0].Recall.Tool, args)
	assert.Equal(t, testLog, rebuild(t, ctx, c, first, 2000), "the cleared result, byte for byte, as text")

	tools := cg.Tools()
	require.Len(t, tools, 4)
	assert.Equal(t, "ctxfit_next", tools[0].Name)
	assert.JSONEq(t, `["cursor"]`, mustJSON(t, tools[0].RawInputSchema, "required"))
	assert.True(t, cg.Owns("ctxfit_details"))
	_, err = cg.CallTool(ctx, "read_log", nil)
	assert.Error(t, err)
}

func mustJSON(t *testing.T, raw json.RawMessage, key string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	return string(m[key])
}

func TestWrapKeepsTheOptionalInterfacesOfTheTransport(t *testing.T) {
	cg := newGuard(t, ctxfit.Config{})
	stdio := transport.NewStdio("true", nil)
	_, bidi := cg.Wrap(stdio).(transport.BidirectionalInterface)
	_, wantBidi := any(stdio).(transport.BidirectionalInterface)
	assert.Equal(t, wantBidi, bidi)
	httpT, err := transport.NewStreamableHTTP("http://127.0.0.1:1/mcp")
	require.NoError(t, err)
	_, conn := cg.Wrap(httpT).(transport.HTTPConnection)
	assert.True(t, conn)
	_, bidi = cg.Wrap(httpT).(transport.BidirectionalInterface)
	_, wantBidi = any(httpT).(transport.BidirectionalInterface)
	assert.Equal(t, wantBidi, bidi)
}
