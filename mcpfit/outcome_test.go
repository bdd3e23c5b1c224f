package mcpfit_test

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

func TestWithCacheOutcomeTellsAMiddlewareOutsideTheAdapterHitsFromMisses(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "outcomes", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "list_bookings", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, any, error) {
		return jsonResult(bookingtools.ListBookings(in.Status))
	})
	mcp.AddTool(s, &mcp.Tool{Name: "create_report", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false)}},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return jsonResult(bookingtools.ListBookings(""))
		})
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: testSecret}})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	rc := cache.New(nil)
	t.Cleanup(func() { rc.Close() })
	require.NoError(t, mcpfit.Install(s, g, &mcpfit.Options{Cache: rc}))

	var mu sync.Mutex
	var got []string
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx, hit := mcpfit.WithCacheOutcome(ctx)
			res, err := next(ctx, method, req)
			if call, ok := req.(*mcp.CallToolRequest); ok {
				outcome := "no lookup"
				if h := hit(); h != nil && *h {
					outcome = "hit"
				} else if h != nil {
					outcome = "miss"
				}
				mu.Lock()
				got = append(got, call.Params.Name+": "+outcome)
				mu.Unlock()
			}
			return res, err
		}
	})
	cs := connect(t, s)
	mcpfittest.Call(t, cs, "list_bookings", nil)
	mcpfittest.Call(t, cs, "list_bookings", nil)
	mcpfittest.Call(t, cs, "create_report", nil)

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"list_bookings: miss", "list_bookings: hit", "create_report: no lookup"}, got)
}
