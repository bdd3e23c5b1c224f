package mcpfit_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// The issue: ctxfit_details took {"tool","arguments","fields"} from the
// model and ran that tool, past a middleware added after Install that
// forbade it. A drill-down now takes only the details cursor of a summary
// ctxfit made; no argument names a tool.
func TestNoContinuationToolRunsAToolTheServerForbade(t *testing.T) {
	ran := 0
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	addTools(s)
	mcp.AddTool(s, &mcp.Tool{Name: "admin_tool", Annotations: readOnly},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			ran++
			b, _ := bookingtools.GetBooking("BK00001")
			return jsonResult(b)
		})
	require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{Mode: ctxfit.ModeReplay, Threshold: 2000}), nil))
	// The server's own policy, added after Install: admin_tool is
	// forbidden to every caller.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params.Name == "admin_tool" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "forbidden"}}}, nil
			}
			return next(ctx, method, req)
		}
	})
	cs := connect(t, s)
	require.True(t, mcpfittest.Call(t, cs, "admin_tool", nil).IsError, "the policy holds for a direct call")

	summary := mcpfittest.Call(t, cs, "get_booking", map[string]any{"id": "BK00001"})
	details := mcpfittest.DetailsCursor(summary)
	require.NotEmpty(t, details, "get_booking is summarized")
	for _, args := range []map[string]any{
		{"tool": "admin_tool", "arguments": map[string]any{}, "fields": "all"},
		{"cursor": details, "tool": "admin_tool", "fields": "all"},
		{"cursor": details, "arguments": map[string]any{"id": "BK00002"}, "fields": "all"},
	} {
		res := mcpfittest.Call(t, cs, mcpcore.DefaultDetailsTool, args)
		assert.True(t, res.IsError, "%v is refused", args)
	}
	for _, args := range []map[string]any{
		{"cursor": details},
		{"cursor": details, "tool": "admin_tool"},
	} {
		res := mcpfittest.Call(t, cs, mcpcore.DefaultNextTool, args)
		assert.True(t, res.IsError, "%v is refused", args)
	}
	assert.Zero(t, ran, "admin_tool never ran")

	// The details cursor opens what it was issued for, and only that.
	res := mcpfittest.Call(t, cs, mcpcore.DefaultDetailsTool, map[string]any{"cursor": details, "fields": "all"})
	require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
	assert.Contains(t, mcpfittest.Texts(t, res)[0], `"BK00001"`)
}
