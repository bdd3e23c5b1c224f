package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// TestTheMCPServerExampleOverStdioLosesNothingAndStaysUnderTheHardCap runs
// examples/mcpserver guarded and raw over stdio: following every cursor
// reproduces the raw server's output.
func TestTheMCPServerExampleOverStdioLosesNothingAndStaysUnderTheHardCap(t *testing.T) {
	bin := binaries(t)["mcpserver"]
	gcs, _ := connect(t, bin)
	rcs, _ := connect(t, bin, "-raw")
	bookingToolsLoseNothing(t, gcs, rcs, "")
}

// bookingToolsLoseNothing follows every cursor and drill-down of the example
// bookings tools (internal/demodata/bookingtools) through guarded and checks that they
// rebuild what raw answers, byte for byte and within the hard cap. A
// non-empty skipLog skips following read_log, with that reason.
func bookingToolsLoseNothing(t *testing.T, guardedCS, rawCS *mcp.ClientSession, skipLog string) {
	guarded, raw := mcpfittest.Session{T: t, CS: guardedCS}, mcpfittest.Session{T: t, CS: rawCS}
	t.Run("list_bookings pages reproduce the list", func(t *testing.T) {
		guarded, raw := mcpfittest.Session{T: t, CS: guarded.CS}, mcpfittest.Session{T: t, CS: raw.CS}
		for _, args := range []map[string]any{{}, {"status": "pending"}} {
			bodies := guarded.Follow("list_bookings", args, ctxfit.DefaultHardCap)
			require.Greater(t, len(bodies), 1)
			assert.Equal(t, mcpfittest.Texts(t, raw.Call("list_bookings", args))[0], mcpfittest.JoinItems(t, bodies, "items"))
		}
	})
	t.Run("search_bookings pages reproduce the structured results", func(t *testing.T) {
		guarded, raw := mcpfittest.Session{T: t, CS: guarded.CS}, mcpfittest.Session{T: t, CS: raw.CS}
		args := map[string]any{"query": ""}
		first := guarded.Call("search_bookings", args)
		assert.Equal(t, mcpfittest.Texts(t, raw.Call("search_bookings", args))[0], mcpfittest.Rebuild(t, guarded.CS, first, ctxfit.DefaultHardCap))
	})
	t.Run("read_log chunks reproduce the log byte for byte", func(t *testing.T) {
		if skipLog != "" {
			t.Skip(skipLog)
		}
		guarded, raw := mcpfittest.Session{T: t, CS: guarded.CS}, mcpfittest.Session{T: t, CS: raw.CS}
		bodies := guarded.Follow("read_log", nil, ctxfit.DefaultHardCap)
		require.Greater(t, len(bodies), 10)
		assert.Equal(t, mcpfittest.Texts(t, raw.Call("read_log", nil))[0], mcpfittest.JoinChunks(t, bodies))
	})
	t.Run("get_booking is summarized and ctxfit_details returns all of it", func(t *testing.T) {
		guarded, raw := mcpfittest.Session{T: t, CS: guarded.CS}, mcpfittest.Session{T: t, CS: raw.CS}
		args := map[string]any{"id": "BK00007"}
		res := guarded.Call("get_booking", args)
		assert.Equal(t, "summary", res.Meta[mcpcore.MetaStrategy])
		texts := mcpfittest.Texts(t, res)
		require.Len(t, texts, 2)
		assert.LessOrEqual(t, mcpfittest.Count(strings.Join(texts, "\n")), ctxfit.DefaultHardCap)
		call := regexp.MustCompile(`call ctxfit_details with (\{.*\}) \(or`).FindStringSubmatch(texts[1])
		require.NotNil(t, call, texts[1])
		var in map[string]any
		require.NoError(t, json.Unmarshal([]byte(call[1]), &in))
		in["fields"] = "all"
		full := guarded.Call(mcpcore.DefaultDetailsTool, in)
		require.False(t, full.IsError, "%v", mcpfittest.Texts(t, full))
		assert.Equal(t, mcpfittest.Texts(t, raw.Call("get_booking", args))[0], mcpfittest.Texts(t, full)[0])
	})
}

// TestTheMCPServerExampleServesStreamableHTTP runs examples/mcpserver with
// -http and pages a list through its streamable HTTP endpoint.
func TestTheMCPServerExampleServesStreamableHTTP(t *testing.T) {
	bin := binaries(t)["mcpserver"]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := startListening(t, exec.CommandContext(ctx, bin, "-http", "127.0.0.1:0"), regexp.MustCompile(`url=(http://\S+)`))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	defer cs.Close()
	s := mcpfittest.Session{T: t, CS: cs}
	bodies := s.Follow("list_bookings", map[string]any{"status": "cancelled"}, ctxfit.DefaultHardCap)
	assert.Greater(t, len(bodies), 1)
}
