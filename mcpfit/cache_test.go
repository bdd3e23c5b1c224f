package mcpfit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/telemetry"
)

// countedServer is a server with counted tools behind ctxfit and a
// response cache: list_bookings (text JSON), search_bookings (structured),
// fail (an isError result) and image (non-text content), all read-only,
// and create_report, which is not.
type countedServer struct {
	cs      *mcp.ClientSession
	calls   map[string]*atomic.Int64
	mu      sync.Mutex
	records []telemetry.Record
}

func newCountedServer(t *testing.T, mode ctxfit.Mode) *countedServer {
	t.Helper()
	c := &countedServer{calls: map[string]*atomic.Int64{}}
	for _, name := range []string{"list_bookings", "search_bookings", "fail", "image", "create_report"} {
		c.calls[name] = &atomic.Int64{}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "cached", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "list_bookings", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, any, error) {
		c.calls["list_bookings"].Add(1)
		return jsonResult(bookingtools.ListBookings(in.Status))
	})
	mcp.AddTool(s, &mcp.Tool{Name: "search_bookings", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, bookingtools.SearchResult, error) {
		c.calls["search_bookings"].Add(1)
		return nil, bookingtools.SearchBookings(in.Query, in.Limit), nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		c.calls["fail"].Add(1)
		return nil, nil, errors.New("the tool failed")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		c.calls["image"].Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}}}, nil, nil
	})
	// create_report changes something each run: not read-only, nor
	// idempotent.
	mcp.AddTool(s, &mcp.Tool{Name: "create_report", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false)}},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			c.calls["create_report"].Add(1)
			return jsonResult(bookingtools.ListBookings(""))
		})
	g, err := ctxfit.New(&ctxfit.Options{
		Config: ctxfit.Config{Secret: testSecret, Mode: mode},
		Sink: telemetry.SinkFunc(func(_ context.Context, r telemetry.Record) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.records = append(c.records, r)
			return nil
		}),
	})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	rc := cache.New(nil)
	t.Cleanup(func() { rc.Close() })
	require.NoError(t, mcpfit.Install(s, g, &mcpfit.Options{Cache: rc}))
	c.cs = connect(t, s)
	return c
}

func (c *countedServer) ran(tool string) int64 { return c.calls[tool].Load() }

// cacheHits returns the CacheHit of the telemetry records of tool, in
// order, once there are n of them.
func (c *countedServer) cacheHits(t *testing.T, tool string, n int) []*bool {
	t.Helper()
	var hits []*bool
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		hits = hits[:0]
		for _, r := range c.records {
			if r.Endpoint == tool {
				hits = append(hits, r.CacheHit)
			}
		}
		return len(hits) >= n
	}, 5*time.Second, 5*time.Millisecond)
	return hits
}

func TestWithACacheTheSecondIdenticalCallDoesNotRunTheTool(t *testing.T) {
	c := newCountedServer(t, ctxfit.ModeStore)
	first := mcpfittest.Call(t, c.cs, "list_bookings", nil)
	second := mcpfittest.Call(t, c.cs, "list_bookings", nil)
	assert.EqualValues(t, 1, c.ran("list_bookings"))
	// The page sizes may differ by an item: each page's cursor is new, and
	// its tokens count against the budget.
	a := strings.TrimSuffix(mcpfittest.JoinItems(t, mcpfittest.Bodies(t, []*mcp.CallToolResult{first}), "items"), "]")
	b := strings.TrimSuffix(mcpfittest.JoinItems(t, mcpfittest.Bodies(t, []*mcp.CallToolResult{second}), "items"), "]")
	assert.True(t, strings.HasPrefix(a, b) || strings.HasPrefix(b, a), "the same first page")
	assert.Equal(t, "pagination", second.Meta[mcpcore.MetaStrategy])

	t.Run("other arguments miss", func(t *testing.T) {
		mcpfittest.Call(t, c.cs, "list_bookings", map[string]any{"status": "pending"})
		assert.EqualValues(t, 2, c.ran("list_bookings"))
	})
	t.Run("telemetry records the miss and then the hit", func(t *testing.T) {
		hits := c.cacheHits(t, "list_bookings", 3)
		require.NotNil(t, hits[0])
		require.NotNil(t, hits[1])
		assert.False(t, *hits[0])
		assert.True(t, *hits[1])
	})
}

func TestACacheHitRebuildsStructuredContent(t *testing.T) {
	c := newCountedServer(t, ctxfit.ModeStore)
	args := map[string]any{"query": "", "limit": 2}
	first := mcpfittest.Call(t, c.cs, "search_bookings", args)
	second := mcpfittest.Call(t, c.cs, "search_bookings", args)
	assert.EqualValues(t, 1, c.ran("search_bookings"))
	require.False(t, second.IsError, "%v", mcpfittest.Texts(t, second))
	require.NotNil(t, second.StructuredContent)
	assert.JSONEq(t, string(mustJSON(t, first.StructuredContent)), string(mustJSON(t, second.StructuredContent)))
	assert.JSONEq(t, bodyOf(t, first), mcpfittest.Texts(t, second)[0])
}

func TestReplayedContinuationsAreServedFromTheCache(t *testing.T) {
	c := newCountedServer(t, ctxfit.ModeReplay)
	_, raw := guarded(t, ctxfit.Config{}, nil)
	bodies := follow(t, c.cs, "list_bookings", nil, ctxfit.DefaultHardCap)
	require.Greater(t, len(bodies), 1)
	assert.Equal(t, mcpfittest.Texts(t, mcpfittest.Call(t, raw, "list_bookings", nil))[0], mcpfittest.JoinItems(t, bodies, "items"))
	assert.EqualValues(t, 1, c.ran("list_bookings"), "ctxfit_next re-ran the tool")
}

func TestErrorsAreNeverCached(t *testing.T) {
	c := newCountedServer(t, ctxfit.ModeStore)
	for _, tool := range []string{"fail"} {
		t.Run(tool+" runs on every call", func(t *testing.T) {
			for range 2 {
				mcpfittest.Call(t, c.cs, tool, nil)
			}
			assert.EqualValues(t, 2, c.ran(tool))
		})
	}
	t.Run("a tool error is still returned as the tool's error", func(t *testing.T) {
		res := mcpfittest.Call(t, c.cs, "fail", nil)
		assert.True(t, res.IsError)
	})
}

func TestAToolThatIsNotReadOnlyRunsOnEveryCallAndNeverForAContinuation(t *testing.T) {
	c := newCountedServer(t, ctxfit.ModeReplay)
	first := mcpfittest.Call(t, c.cs, "create_report", nil)
	mcpfittest.Call(t, c.cs, "create_report", nil)
	assert.EqualValues(t, 2, c.ran("create_report"), "a cached result would stand in for what the tool does")

	next := mcpfittest.NextCursor(first)
	require.NotEmpty(t, next, "the result is paged")
	for range 3 {
		res := mcpfittest.Call(t, c.cs, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
		require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
		next = mcpfittest.NextCursor(res)
	}
	assert.EqualValues(t, 2, c.ran("create_report"), "replay mode keeps its snapshot: continuing does not run it again")
}
