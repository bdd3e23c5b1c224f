package mcpgofit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpgofit"
)

// cachedServer serves list_bookings with annotations ann behind ctxfit
// (mode) and a response cache, and returns a client, the runs per status,
// and the cache.
func cachedServer(t *testing.T, mode ctxfit.Mode, ann ...mcp.ToolOption) (*client.Client, map[string]int, *cache.Cache) {
	t.Helper()
	calls := map[string]int{}
	s := server.NewMCPServer("bookings", "1.0.0")
	s.AddTool(mcp.NewTool("list_bookings", append([]mcp.ToolOption{mcp.WithString("status")}, ann...)...),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			status := req.GetString("status", "")
			calls[status]++
			b, err := json.Marshal(bookingtools.ListBookings(status))
			if err != nil {
				return nil, err
			}
			return mcp.NewToolResultText(string(b)), nil
		})
	g := newGuard(t, ctxfit.Config{Mode: mode})
	c := cache.New(nil)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, mcpgofit.Install(s, g, &mcpgofit.Options{Cache: c}))
	return connect(t, s), calls, c
}

func callList(t *testing.T, cl *client.Client, status string) *mcp.CallToolResult {
	t.Helper()
	res, err := cl.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "list_bookings", Arguments: map[string]any{"status": status}}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	return res
}

func TestWithACacheTheSecondIdenticalCallDoesNotRunTheTool(t *testing.T) {
	cl, calls, c := cachedServer(t, ctxfit.ModeStore, mcp.WithReadOnlyHintAnnotation(true))
	first, second := callList(t, cl, "confirmed"), callList(t, cl, "confirmed")
	assert.Equal(t, 1, calls["confirmed"], "the second identical call is served from the cache")
	assert.Equal(t, len(first.Content), len(second.Content), "and shaped the same way")
	callList(t, cl, "pending")
	assert.Equal(t, 1, calls["pending"], "other arguments are another entry")
	hits := c.Stats().Hits
	assert.Equal(t, uint64(1), hits)
}

func TestAToolThatIsNotReadOnlyRunsOnEveryCallAndNeverForAContinuation(t *testing.T) {
	for _, tc := range []struct {
		name string
		ann  []mcp.ToolOption
	}{
		{"no annotations", nil},
		{"declared not read-only", []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(true)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl, calls, c := cachedServer(t, ctxfit.ModeReplay, tc.ann...)
			first := callList(t, cl, "")
			callList(t, cl, "")
			assert.Equal(t, 2, calls[""], "a cached result would stand in for what the tool does")
			assert.Zero(t, c.Stats().Hits)

			next, _ := metaOf(first)[mcpcore.MetaNextCursor].(string)
			require.NotEmpty(t, next, "the result is paged")
			for range 3 {
				res, err := cl.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{
					Name: mcpcore.DefaultNextTool, Arguments: map[string]any{"cursor": next}}})
				require.NoError(t, err)
				require.False(t, res.IsError, "%v", res.Content)
				next, _ = metaOf(res)[mcpcore.MetaNextCursor].(string)
			}
			assert.Equal(t, 2, calls[""], "replay mode keeps its snapshot: continuing does not run it again")
		})
	}
}

func TestGuardedToolsTellClientsTheirLargestResult(t *testing.T) {
	cl, _, _ := cachedServer(t, ctxfit.ModeStore, mcp.WithReadOnlyHintAnnotation(true))
	res, err := cl.ListTools(context.Background(), mcp.ListToolsRequest{})
	require.NoError(t, err)
	got := map[string]any{}
	for _, tool := range res.Tools {
		if tool.Meta != nil {
			got[tool.Name] = tool.Meta.AdditionalFields[mcpcore.MetaMaxResultSizeChars]
		}
	}
	assert.EqualValues(t, 8*ctxfit.DefaultHardCap, got["list_bookings"])
	assert.Nil(t, got[mcpcore.DefaultNextTool])
}
