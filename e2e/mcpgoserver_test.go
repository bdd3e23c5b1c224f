package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// TestTheMCPGoServerExampleOverStdioWithTheOfficialClient runs
// examples/mcpgoserver as a stdio subprocess guarded and raw, and drives
// both with the official Go SDK's client: for every large tool, following
// every cursor reproduces the raw server's output exactly, and no result
// exceeds the hard cap by exact count.
func TestTheMCPGoServerExampleOverStdioWithTheOfficialClient(t *testing.T) {
	bins := binaries(t)
	if !hasMCPGoServer() {
		t.Skip("examples/mcpgoserver is not in the tree")
	}
	guarded, _ := connect(t, bins["mcpgoserver"])
	raw, _ := connect(t, bins["mcpgoserver"], "-raw")
	hardCap := ctxfit.DefaultHardCap

	// follow calls tool, then ctxfit_next with every cursor, and returns the
	// shaped bodies (the first text block of each result).
	follow := func(t *testing.T, tool string, args map[string]any) []string {
		t.Helper()
		return mcpfittest.Bodies(t, mcpfittest.Follow(t, guarded, tool, args, hardCap))
	}

	for _, status := range []string{"", "confirmed"} {
		t.Run("list_bookings with status "+status+" is paged and nothing is lost", func(t *testing.T) {
			args := map[string]any{"status": status}
			bodies := follow(t, "list_bookings", args)
			require.Greater(t, len(bodies), 1)
			assert.Equal(t, exampleTexts(t, mcpfittest.Call(t, raw, "list_bookings", args))[0], mcpfittest.JoinItems(t, bodies, "items"))
		})
	}
	t.Run("read_log is chunked and the chunks are the log byte for byte", func(t *testing.T) {
		bodies := follow(t, "read_log", nil)
		require.Greater(t, len(bodies), 10)
		var got strings.Builder
		for _, body := range bodies {
			var ch struct {
				Content string `json:"content"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &ch))
			got.WriteString(ch.Content)
		}
		assert.Equal(t, exampleTexts(t, mcpfittest.Call(t, raw, "read_log", nil))[0], got.String())
	})
	t.Run("search_bookings is paged inside its structured content", func(t *testing.T) {
		args := map[string]any{"query": ""}
		first := mcpfittest.Call(t, guarded, "search_bookings", args)
		assert.Equal(t, exampleTexts(t, mcpfittest.Call(t, raw, "search_bookings", args))[0], mcpfittest.Rebuild(t, guarded, first, hardCap))
	})
	t.Run("get_booking is summarized and ctxfit_details returns it whole", func(t *testing.T) {
		args := map[string]any{"id": "BK00042"}
		res := mcpfittest.Call(t, guarded, "get_booking", args)
		require.False(t, res.IsError)
		assert.Equal(t, "summary", res.Meta[mcpcore.MetaStrategy])
		assert.LessOrEqual(t, mcpfittest.Tokens(t, res), hardCap)
		full := mcpfittest.Call(t, guarded, mcpcore.DefaultDetailsTool, map[string]any{"cursor": mcpfittest.DetailsCursor(res), "fields": "all"})
		require.False(t, full.IsError, "%v", exampleTexts(t, full))
		assert.Equal(t, exampleTexts(t, mcpfittest.Call(t, raw, "get_booking", args))[0], exampleTexts(t, full)[0])
	})
	t.Run("tools/list advertises the continuation tools and the rewritten output schema", func(t *testing.T) {
		list, err := guarded.ListTools(context.Background(), nil)
		require.NoError(t, err)
		names := make([]string, 0, len(list.Tools))
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
			if tool.Name == "search_bookings" {
				schema, err := json.Marshal(tool.OutputSchema)
				require.NoError(t, err)
				assert.Contains(t, string(schema), `"anyOf"`)
			}
		}
		assert.Subset(t, names, []string{"list_bookings", "get_booking", "read_log", "search_bookings", mcpcore.DefaultNextTool, mcpcore.DefaultDetailsTool})
		rawList, err := raw.ListTools(context.Background(), nil)
		require.NoError(t, err)
		assert.False(t, slices.ContainsFunc(rawList.Tools, func(tool *mcp.Tool) bool { return tool.Name == mcpcore.DefaultNextTool }),
			"-raw serves without ctxfit")
	})
	t.Run("a bad cursor is a tool error with a suggestion", func(t *testing.T) {
		res := mcpfittest.Call(t, guarded, mcpcore.DefaultNextTool, map[string]any{"cursor": "garbage"})
		require.True(t, res.IsError)
		var e mcpcore.Error
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &e))
		assert.Equal(t, "cursor_invalid", e.Code)
		assert.NotEmpty(t, e.Data.Suggestion)
	})
}

// exampleTexts returns the text blocks of res, less the link to the original.
func exampleTexts(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok && l.Meta["dev.ctxfit/original"] == true {
			continue // the link to the original
		}
		tc, ok := c.(*mcp.TextContent)
		require.True(t, ok, "content %T is not text", c)
		out = append(out, tc.Text)
	}
	require.NotEmpty(t, out)
	return out
}
