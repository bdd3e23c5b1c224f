package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/examples/bookingtools"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/mcptest"
)

// TestEndToEndOverStdioWithTheOfficialClient builds the example, runs it as
// a stdio subprocess guarded and raw, and drives both with the official Go
// SDK's client: for every large tool, following every cursor reproduces the
// raw server's output exactly, and no result exceeds the hard cap by exact
// count.
func TestEndToEndOverStdioWithTheOfficialClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example")
	}
	bin := filepath.Join(t.TempDir(), "mcpgoserver")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run(), "building the example")

	guarded, raw := start(t, bin), start(t, bin, "-raw")
	hardCap := ctxfit.DefaultHardCap

	// follow calls tool, then ctxfit_next with every cursor, and returns the
	// shaped bodies (the first text block of each result).
	follow := func(t *testing.T, tool string, args map[string]any) []string {
		t.Helper()
		return mcptest.Bodies(t, mcptest.Follow(t, guarded, tool, args, hardCap))
	}

	for _, status := range []string{"", "confirmed"} {
		t.Run("list_bookings with status "+status+" is paged and nothing is lost", func(t *testing.T) {
			args := map[string]any{"status": status}
			bodies := follow(t, "list_bookings", args)
			require.Greater(t, len(bodies), 1)
			assert.Equal(t, texts(t, mcptest.Call(t, raw, "list_bookings", args))[0], mcptest.JoinItems(t, bodies, "items"))
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
		assert.Equal(t, texts(t, mcptest.Call(t, raw, "read_log", nil))[0], got.String())
	})
	t.Run("search_bookings is paged inside its structured content", func(t *testing.T) {
		args := map[string]any{"query": ""}
		first := mcptest.Call(t, guarded, "search_bookings", args)
		assert.Equal(t, texts(t, mcptest.Call(t, raw, "search_bookings", args))[0], mcptest.Rebuild(t, guarded, first, hardCap))
	})
	t.Run("get_booking is summarized and ctxfit_details returns it whole", func(t *testing.T) {
		args := map[string]any{"id": "BK00042"}
		res := mcptest.Call(t, guarded, "get_booking", args)
		require.False(t, res.IsError)
		assert.Equal(t, "summary", res.Meta[mcpcore.MetaStrategy])
		assert.LessOrEqual(t, mcptest.Tokens(t, res), hardCap)
		full := mcptest.Call(t, guarded, mcpcore.DefaultDetailsTool, map[string]any{"cursor": mcptest.DetailsCursor(res), "fields": "all"})
		require.False(t, full.IsError, "%v", texts(t, full))
		assert.Equal(t, texts(t, mcptest.Call(t, raw, "get_booking", args))[0], texts(t, full)[0])
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
		res := mcptest.Call(t, guarded, mcpcore.DefaultNextTool, map[string]any{"cursor": "garbage"})
		require.True(t, res.IsError)
		var e mcpcore.Error
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &e))
		assert.Equal(t, "cursor_invalid", e.Code)
		assert.NotEmpty(t, e.Data.Suggestion)
	})
}

func TestAnOperatorsEndpointWinsOverTheExamples(t *testing.T) {
	eps := bookingtools.WithEndpoints([]ctxfit.Endpoint{{Match: "get_booking", Threshold: 9000}, {Match: "read_log", Disabled: true}})
	assert.Equal(t, []ctxfit.Endpoint{{Match: "get_booking", Threshold: 9000}, {Match: "read_log", Disabled: true}}, eps)
	assert.Equal(t, bookingtools.Endpoints(), bookingtools.WithEndpoints(nil))
}

// start runs the example binary with args as a stdio subprocess and returns
// a connected client session.
func start(t *testing.T, bin string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// A patient shaping time limit: a loaded machine must not turn a
	// shape into a retryable error in a test of what is sent.
	cmd.Env = append(os.Environ(), "CTXFIT_SECRET=0123456789abcdef0123456789abcdef-e2e", "CTXFIT_SHAPE_TIMEOUT=1m", "CTXFIT_ADMISSION_WAIT=1m")
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func texts(t *testing.T, res *mcp.CallToolResult) []string {
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
