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
	"github.com/ctxfit/ctxfit/internal/exampletools"
	"github.com/ctxfit/ctxfit/mcpgofit"
)

func TestWithACacheTheSecondIdenticalCallDoesNotRunTheTool(t *testing.T) {
	calls := map[string]int{}
	s := server.NewMCPServer("bookings", "1.0.0")
	s.AddTool(mcp.NewTool("list_bookings", mcp.WithString("status")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			status := req.GetString("status", "")
			calls[status]++
			b, err := json.Marshal(exampletools.ListBookings(status))
			if err != nil {
				return nil, err
			}
			return mcp.NewToolResultText(string(b)), nil
		})
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "a test secret of thirty-two bytes!!"}})
	require.NoError(t, err)
	defer g.Close()
	c := cache.New(nil)
	defer c.Close()
	require.NoError(t, mcpgofit.Install(s, g, &mcpgofit.Options{Cache: c}))

	ctx := context.Background()
	cl, err := client.NewInProcessClient(s)
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.Start(ctx))
	_, err = cl.Initialize(ctx, mcp.InitializeRequest{})
	require.NoError(t, err)
	call := func(status string) *mcp.CallToolResult {
		res, err := cl.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "list_bookings", Arguments: map[string]any{"status": status}}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		return res
	}

	first, second := call("confirmed"), call("confirmed")
	assert.Equal(t, 1, calls["confirmed"], "the second identical call is served from the cache")
	assert.Equal(t, len(first.Content), len(second.Content), "and shaped the same way")
	call("pending")
	assert.Equal(t, 1, calls["pending"], "other arguments are another entry")
	hits := c.Stats().Hits
	assert.Equal(t, uint64(1), hits)
}
