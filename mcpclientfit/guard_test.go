package mcpclientfit_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/mcpclientfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/store"
)

const testSecret = "0123456789abcdef0123456789abcdef-test"

// shortLog keeps the unit tests fast; the end-to-end test reads real
// servers' large results.
var shortLog = corpus.Log(1500)

type getInput struct {
	ID string `json:"id"`
}

// server is an MCP server the agent does not control, with large results,
// that counts the tool calls it receives by name.
type server struct {
	*mcp.Server
	calls map[string]*atomic.Int64
}

func (s *server) called(name string) int64 {
	if c := s.calls[name]; c != nil {
		return c.Load()
	}
	return 0
}

func newServer(t *testing.T) *server {
	t.Helper()
	s := &server{Server: mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil), calls: map[string]*atomic.Int64{}}
	for _, name := range []string{"list_bookings", "get_booking", "read_log", "search_bookings", "small", "fails", "blob", "ctxfit_next", "ctxfit_details"} {
		s.calls[name] = &atomic.Int64{}
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
				if c := s.calls[r.Params.Name]; c != nil {
					c.Add(1)
				}
			}
			return next(ctx, method, req)
		}
	})
	text := func(v string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: v}}}
	}
	asJSON := func(v any) *mcp.CallToolResult {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return text(string(b))
	}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "list_bookings"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return asJSON(bookingtools.ListBookings("")), nil, nil
	})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "get_booking"}, func(_ context.Context, _ *mcp.CallToolRequest, in getInput) (*mcp.CallToolResult, any, error) {
		b, err := bookingtools.GetBooking(in.ID)
		if err != nil {
			return nil, nil, err
		}
		return asJSON(b), nil, nil
	})
	// read_log changes nothing: replay mode may run it again. The other
	// tools say nothing of it.
	mcp.AddTool(s.Server, &mcp.Tool{Name: "read_log", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return text(shortLog), nil, nil
	})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "search_bookings"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, bookingtools.SearchResult, error) {
		return nil, bookingtools.SearchBookings("", 400), nil
	})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "small"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a small result"}}, Meta: mcp.Meta{"tool/own": "kept"}}, nil, nil
	})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "fails"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: shortLog}}}, nil, nil
	})
	blob := []byte(strings.Repeat("\x00\x01binary\xff", 20000))
	mcp.AddTool(s.Server, &mcp.Tool{Name: "blob"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the file:"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///data.bin", MIMEType: "application/octet-stream", Blob: blob}}}}, nil, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///app.log", Name: "app.log", MIMEType: "text/plain"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///app.log", MIMEType: "text/plain", Text: shortLog}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///data.bin", Name: "data.bin", MIMEType: "application/octet-stream"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///data.bin", MIMEType: "application/octet-stream", Blob: blob}}}, nil
	})
	return s
}

func newGuard(t *testing.T, cfg ctxfit.Config) *ctxfit.Guard {
	t.Helper()
	if cfg.Secret == "" {
		cfg.Secret = testSecret
	}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

// connect connects a client to s over in-memory transports, with cg's
// middleware when cg is not nil.
func connect(t *testing.T, s *mcp.Server, cg *mcpclientfit.Guard) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	if cg != nil {
		cg.Install(c)
	}
	cs, err := c.Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// setup returns a server, a guarded session and a raw session to it.
func setup(t *testing.T, cfg ctxfit.Config) (*server, *mcpclientfit.Guard, *mcp.ClientSession, *mcp.ClientSession) {
	t.Helper()
	s := newServer(t)
	cg, err := mcpclientfit.New(newGuard(t, cfg), nil)
	require.NoError(t, err)
	return s, cg, connect(t, s.Server, cg), connect(t, s.Server, nil)
}

// bodyOf is what ctxfit shapes of a raw result: its structured content as
// JSON, else its text.
func bodyOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		return string(b)
	}
	return strings.Join(mcpfittest.Texts(t, res), "\n")
}

func TestLargeResultsAreShapedWithinTheHardCapAndRebuildExactly(t *testing.T) {
	s, _, cs, raw := setup(t, ctxfit.Config{Threshold: 2000, HardCap: 3000})
	for _, tool := range []struct {
		name, strategy string
		args           any
	}{
		{"list_bookings", "pagination", map[string]any{}},
		{"read_log", "chunking", map[string]any{}},
		{"search_bookings", "pagination", map[string]any{}},
	} {
		t.Run(tool.name+" comes back as "+tool.strategy+" and nothing is lost", func(t *testing.T) {
			want := bodyOf(t, mcpfittest.Call(t, raw, tool.name, tool.args))
			require.Greater(t, mcpfittest.Count(want), 3000, "the raw result is over the hard cap")
			first := mcpfittest.Call(t, cs, tool.name, tool.args)
			require.False(t, first.IsError, "%v", mcpfittest.Texts(t, first))
			assert.Equal(t, tool.strategy, first.Meta["dev.ctxfit/strategy"])
			assert.LessOrEqual(t, mcpfittest.Tokens(t, first), 3000)
			assert.Contains(t, mcpfittest.Texts(t, first)[1], "call ctxfit_next with", "the guidance line")
			assert.Equal(t, want, mcpfittest.Rebuild(t, cs, first, 3000))
		})
	}
	assert.Zero(t, s.called("ctxfit_next"), "the server never sees a continuation")
}

func TestSmallResultsAndDisabledToolsPassThroughUntouched(t *testing.T) {
	_, _, cs, raw := setup(t, ctxfit.Config{Threshold: 2000, HardCap: 3000,
		Endpoints: []ctxfit.Endpoint{{Match: "read_log", Disabled: true}}})
	for _, tool := range []string{"small", "read_log"} {
		t.Run(tool, func(t *testing.T) {
			got := mcpfittest.Call(t, cs, tool, map[string]any{})
			want := mcpfittest.Call(t, raw, tool, map[string]any{})
			assert.Equal(t, want, got)
		})
	}
	t.Run("an error over the hard cap is shaped as any result, still an error, and rebuilt", func(t *testing.T) {
		got := mcpfittest.Call(t, cs, "fails", map[string]any{})
		assert.True(t, got.IsError)
		assert.LessOrEqual(t, mcpfittest.Tokens(t, got), 3000)
		assert.Equal(t, shortLog, mcpfittest.Rebuild(t, cs, got, 3000), "nothing lost")
	})
}

func TestASummaryDrillsDownThroughTheSessionThatRanTheTool(t *testing.T) {
	s, cg, cs, raw := setup(t, ctxfit.Config{Threshold: 300, HardCap: 2000})
	args := map[string]any{"id": "BK1"}
	first := mcpfittest.Call(t, cs, "get_booking", args)
	require.Equal(t, "summary", first.Meta["dev.ctxfit/strategy"], "%v", mcpfittest.Texts(t, first))
	guidance := mcpfittest.Texts(t, first)[1]
	details := mcpfittest.DetailsCursor(first)
	require.NotEmpty(t, details)
	assert.Contains(t, guidance, `call ctxfit_details with {"cursor":"`+details+`","fields":`)

	// Through the guard alone, no session at hand: the summarized result
	// is kept, so the drill-down does not run the tool again.
	in, err := json.Marshal(map[string]string{"cursor": details, "fields": "all"})
	require.NoError(t, err)
	res, err := cg.CallTool(context.Background(), "ctxfit_details", in)
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
	assert.Equal(t, bodyOf(t, mcpfittest.Call(t, raw, "get_booking", args)), mcpfittest.Rebuild(t, cs, res, 2000), "the whole booking, in pages")
	assert.Equal(t, int64(0), s.called("ctxfit_details"), "the server never sees a drill-down")
	assert.Equal(t, int64(2), s.called("get_booking"), "the guarded call and the raw call")
}

func TestReplayModeRunsTheToolAgainUnshaped(t *testing.T) {
	s, _, cs, raw := setup(t, ctxfit.Config{Threshold: 2000, HardCap: 3000, Mode: ctxfit.ModeReplay})
	_, err := cs.ListTools(context.Background(), nil) // the guard learns which tools may run again
	require.NoError(t, err)
	want := bodyOf(t, mcpfittest.Call(t, raw, "read_log", map[string]any{}))
	first := mcpfittest.Call(t, cs, "read_log", map[string]any{})
	assert.Equal(t, want, mcpfittest.Rebuild(t, cs, first, 3000))
	assert.Greater(t, s.called("read_log"), int64(2), "every continuation ran the tool again")
	assert.Zero(t, s.called("ctxfit_next"))

	// list_bookings is not annotated read-only nor idempotent: its result
	// is kept, and continuing it never runs it again.
	want = bodyOf(t, mcpfittest.Call(t, raw, "list_bookings", map[string]any{}))
	first = mcpfittest.Call(t, cs, "list_bookings", map[string]any{})
	assert.Equal(t, want, mcpfittest.Rebuild(t, cs, first, 3000))
	assert.Equal(t, int64(2), s.called("list_bookings"), "the guarded call and the raw one, no reruns")
}

func TestCursorsAreBoundToTheSubjectOfTheContext(t *testing.T) {
	_, cg, cs, _ := setup(t, ctxfit.Config{Threshold: 2000, HardCap: 3000})
	alice := store.WithSubject(context.Background(), "alice")
	first, err := cs.CallTool(alice, &mcp.CallToolParams{Name: "read_log", Arguments: map[string]any{}})
	require.NoError(t, err)
	next, _ := first.Meta["dev.ctxfit/nextCursor"].(string)
	require.NotEmpty(t, next)
	args, _ := json.Marshal(map[string]string{"cursor": next})

	res, err := cg.CallTool(alice, "ctxfit_next", args)
	require.NoError(t, err)
	assert.False(t, res.IsError, "alice follows her cursor")
	res, err = cg.CallTool(store.WithSubject(context.Background(), "bob"), "ctxfit_next", args)
	require.NoError(t, err)
	require.True(t, res.IsError, "bob cannot")
	assert.Contains(t, mcpfittest.Texts(t, res)[0], "Error cursor_")
}

func TestBadContinuationArgumentsAreToolErrorsTheModelCanFix(t *testing.T) {
	_, cg, cs, _ := setup(t, ctxfit.Config{})
	for _, args := range []string{`{}`, `{"cursor":""}`, `{"cursor":"x","extra":1}`, `{"cursor":"not a cursor"}`} {
		res, err := cg.CallTool(context.Background(), "ctxfit_next", json.RawMessage(args))
		require.NoError(t, err)
		assert.True(t, res.IsError, args)
		assert.True(t, strings.HasPrefix(mcpfittest.Texts(t, res)[0], "Error "), args)
	}
	res := mcpfittest.Call(t, cs, "ctxfit_details", map[string]any{"tool": "ctxfit_next", "fields": "all"})
	assert.True(t, res.IsError)
	_, err := cg.CallTool(context.Background(), "read_log", nil)
	assert.ErrorContains(t, err, "not a tool of the guard")
}

func TestAResourceReadIsShapedAndItsHeldBackBlobReadLocally(t *testing.T) {
	s, cg, cs, raw := setup(t, ctxfit.Config{Threshold: 2000, HardCap: 3000})
	ctx := context.Background()

	t.Run("a large text resource comes back as chunks that rebuild it", func(t *testing.T) {
		got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///app.log"})
		require.NoError(t, err)
		require.Len(t, got.Contents, 2, "the shaped text and the guidance line")
		assert.Equal(t, "file:///app.log", got.Contents[0].URI)
		assert.Equal(t, true, got.Contents[1].Meta["dev.ctxfit/guidance"])
		assert.LessOrEqual(t, mcpfittest.Count(got.Contents[0].Text)+mcpfittest.Count(got.Contents[1].Text), 3000)
		assert.True(t, strings.HasPrefix(shortLog, got.Contents[0].Text), "a chunk of the text, as it is")
		assert.Contains(t, got.Contents[0].Meta, "dev.ctxfit/chunk", "its place in its _meta")
		first := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: got.Contents[0].Text, Meta: got.Contents[0].Meta}}, Meta: got.Meta}
		assert.Equal(t, shortLog, mcpfittest.Rebuild(t, cs, first, 3000))
	})
	t.Run("a blob is held back behind a ctxfit URI that reads it whole", func(t *testing.T) {
		want, err := raw.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///data.bin"})
		require.NoError(t, err)
		got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///data.bin"})
		require.NoError(t, err)
		require.Len(t, got.Contents, 1)
		link := got.Contents[0]
		assert.True(t, strings.HasPrefix(link.URI, "ctxfit://r/"), link.URI)
		assert.Equal(t, "file:///data.bin", link.Meta["dev.ctxfit/heldBack"])
		assert.Contains(t, link.Text, "Held back by ctxfit")
		back, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
		require.NoError(t, err)
		assert.Equal(t, want.Contents[0].Blob, back.Contents[0].Blob)

		_, err = cs.ReadResource(store.WithSubject(ctx, "someone else"), &mcp.ReadResourceParams{URI: link.URI})
		assert.Error(t, err, "bound to its subject")
	})
	t.Run("a blob in a tool result too", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "blob", map[string]any{})
		var link *mcp.ResourceLink
		for _, c := range res.Content {
			if l, ok := c.(*mcp.ResourceLink); ok && l.Meta["dev.ctxfit/original"] == nil && link == nil {
				link = l
			}
		}
		require.NotNil(t, link, "a resource_link")
		back, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
		require.NoError(t, err)
		assert.Equal(t, 20000*9, len(back.Contents[0].Blob))
	})
	_ = s
	_ = cg
}

func TestToolsAreTheContinuationAndDetailsTools(t *testing.T) {
	cg, err := mcpclientfit.New(newGuard(t, ctxfit.Config{}), &mcpclientfit.Options{NextTool: "more", DetailsTool: "fields"})
	require.NoError(t, err)
	tools := cg.Tools()
	require.Len(t, tools, 4)
	assert.Equal(t, "more", tools[0].Name)
	assert.Equal(t, "fields", tools[1].Name)
	assert.Equal(t, "ctxfit_search", tools[2].Name)
	assert.Equal(t, "ctxfit_query", tools[3].Name)
	assert.True(t, cg.Owns("more"))
	assert.False(t, cg.Owns("ctxfit_next"))

	_, err = mcpclientfit.New(nil, nil)
	assert.Error(t, err)
	_, err = mcpclientfit.New(newGuard(t, ctxfit.Config{}), &mcpclientfit.Options{NextTool: "x", DetailsTool: "x"})
	assert.Error(t, err)
}
