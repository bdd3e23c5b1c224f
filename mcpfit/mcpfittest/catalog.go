package mcpfittest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// CatalogWalk is what [CheckCatalog] needs of a server whose tool list is
// over its catalog budget: the proxy's, the gateway's, in process or end
// to end.
type CatalogWalk struct {
	// Budget is the catalog budget, in tokens.
	Budget int
	// LastList returns the raw JSON of the latest tools/list answer the
	// client received.
	LastList func() string
	// Changed receives when the client gets notifications/tools/list_changed.
	Changed <-chan struct{}
	// Hidden is a tool not in the first list, which Query finds first.
	Hidden string
	// Query is what ctxfit_find_tools is asked.
	Query string
	// Arguments are Hidden's arguments.
	Arguments map[string]any
	// CheckCall checks a result of Hidden called with Arguments (through
	// ctxfit_call_tool, then by its name). Nil checks only that it is not
	// an error.
	CheckCall func(t *testing.T, res *mcp.CallToolResult)
}

// CheckCatalog walks a budgeted catalog as a model would: tools/list is
// within w.Budget by exact count and holds ctxfit's six tools but not
// w.Hidden; ctxfit_find_tools answers w.Hidden first for w.Query;
// ctxfit_call_tool calls it (and refuses a name that is no tool); the
// client is told the list changed (within 30 s), after which w.Hidden is
// listed, the list still within the budget, and called by its name.
func CheckCatalog(t *testing.T, cs *mcp.ClientSession, w CatalogWalk) {
	t.Helper()
	ctx := context.Background()
	check := w.CheckCall
	if check == nil {
		check = func(t *testing.T, res *mcp.CallToolResult) { require.False(t, res.IsError, Texts(t, res)) }
	}
	names := func(res *mcp.ListToolsResult) []string {
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.LessOrEqual(t, Count(w.LastList()), w.Budget, "tools/list is within the catalog budget by exact count")
	assert.Empty(t, res.NextCursor, "in one page")
	listed := names(res)
	for _, own := range append(mcpcore.Names{}.WithDefaults().All(), mcpcore.FindTool, mcpcore.CallTool) {
		assert.Contains(t, listed, own)
	}
	assert.NotContains(t, listed, w.Hidden)

	t.Run("a tool found with ctxfit_find_tools is called through ctxfit_call_tool", func(t *testing.T) {
		found := Call(t, cs, mcpcore.FindTool, map[string]any{"query": w.Query, "limit": 3})
		require.False(t, found.IsError, "ctxfit_find_tools answered an error")
		require.NotEmpty(t, found.Content)
		first, ok := found.Content[0].(*mcp.TextContent) // a trimmed definition's link may follow
		require.True(t, ok, "content %T is not text", found.Content[0])
		var body struct {
			Tools []map[string]any `json:"tools"`
		}
		require.NoError(t, json.Unmarshal([]byte(first.Text), &body))
		require.NotEmpty(t, body.Tools)
		assert.Equal(t, w.Hidden, body.Tools[0]["name"], "the tool the words name is found first")

		check(t, Call(t, cs, mcpcore.CallTool, map[string]any{"name": w.Hidden, "arguments": w.Arguments}))
		bad := Call(t, cs, mcpcore.CallTool, map[string]any{"name": w.Hidden + "_no_such_tool"})
		assert.True(t, bad.IsError, "a name that is no tool is a tool error")
	})
	t.Run("the client is told the list changed, and the found tool is listed and called from then on", func(t *testing.T) {
		select {
		case <-w.Changed:
		case <-time.After(30 * time.Second):
			t.Fatal("no notifications/tools/list_changed after a find")
		}
		res, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		assert.Contains(t, names(res), w.Hidden)
		assert.LessOrEqual(t, Count(w.LastList()), w.Budget, "still within the budget")
		check(t, Call(t, cs, w.Hidden, w.Arguments))
	})
}
