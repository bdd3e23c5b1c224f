package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// binary builds the example once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the example server")
	}
	bin := filepath.Join(t.TempDir(), "mcpserver")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// serverEnv is the environment of the subprocess: no operator settings,
// a fixed secret.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CTXFIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "CTXFIT_SECRET=an end-to-end secret of 32 bytes or more")
}

// start runs the example as a stdio subprocess and connects to it.
func start(t *testing.T, bin string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = serverEnv()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

type session struct {
	t  *testing.T
	cs *mcp.ClientSession
}

func (s session) call(tool string, args any) *mcp.CallToolResult {
	s.t.Helper()
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(s.t, err)
	return res
}

func textsOf(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		require.True(t, ok, "content %T is not text", c)
		out = append(out, tc.Text)
	}
	return out
}

var exact = func() budget.Counter {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		panic(err)
	}
	return c
}()

// follow calls tool, then ctxfit_next until the end, and returns the
// bodies; no result may exceed the hard cap.
func (s session) follow(tool string, args any) []string {
	t := s.t
	t.Helper()
	var bodies []string
	res := s.call(tool, args)
	for range 2000 {
		require.False(t, res.IsError, "%v", textsOf(t, res))
		texts := textsOf(t, res)
		assert.LessOrEqual(t, exact.Count(strings.Join(texts, "\n")), ctxfit.DefaultHardCap, "a result exceeds the hard cap")
		bodies = append(bodies, texts[0])
		next, _ := res.Meta[mcpcore.MetaNextCursor].(string)
		if next == "" {
			return bodies
		}
		res = s.call(mcpcore.DefaultNextTool, map[string]any{"cursor": next})
	}
	t.Fatal("too many continuations")
	return nil
}

func joinArrays(t *testing.T, bodies []string, key string) string {
	t.Helper()
	var all []string
	for _, body := range bodies {
		var b map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(body), &b))
		var items []json.RawMessage
		require.NoError(t, json.Unmarshal(b[key], &items), "no %q in %.200s", key, body)
		for _, it := range items {
			all = append(all, string(it))
		}
	}
	return "[" + strings.Join(all, ",") + "]"
}

func joinContent(t *testing.T, bodies []string) string {
	t.Helper()
	var b strings.Builder
	for _, body := range bodies {
		var ch struct {
			Content *string `json:"content"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &ch))
		require.NotNil(t, ch.Content, "not a chunk: %.200s", body)
		b.WriteString(*ch.Content)
	}
	return b.String()
}

func TestTheExampleOverStdioLosesNothingAndStaysUnderTheHardCap(t *testing.T) {
	bin := binary(t)
	guarded := session{t, start(t, bin)}
	raw := session{t, start(t, bin, "-raw")}

	t.Run("list_bookings pages reproduce the list", func(t *testing.T) {
		guarded, raw := session{t, guarded.cs}, session{t, raw.cs}
		for _, args := range []map[string]any{{}, {"status": "pending"}} {
			bodies := guarded.follow("list_bookings", args)
			require.Greater(t, len(bodies), 1)
			assert.Equal(t, textsOf(t, raw.call("list_bookings", args))[0], joinArrays(t, bodies, "items"))
		}
	})
	t.Run("search_bookings pages reproduce the structured results", func(t *testing.T) {
		guarded, raw := session{t, guarded.cs}, session{t, raw.cs}
		args := map[string]any{"query": ""}
		bodies := guarded.follow("search_bookings", args)
		require.Greater(t, len(bodies), 1)
		var want struct{ Results json.RawMessage }
		require.NoError(t, json.Unmarshal([]byte(textsOf(t, raw.call("search_bookings", args))[0]), &want))
		assert.Equal(t, string(want.Results), joinArrays(t, bodies, "results"))
	})
	t.Run("read_log chunks reproduce the log byte for byte", func(t *testing.T) {
		guarded, raw := session{t, guarded.cs}, session{t, raw.cs}
		bodies := guarded.follow("read_log", nil)
		require.Greater(t, len(bodies), 10)
		assert.Equal(t, textsOf(t, raw.call("read_log", nil))[0], joinContent(t, bodies))
	})
	t.Run("get_booking is summarized and ctxfit_details returns all of it", func(t *testing.T) {
		guarded, raw := session{t, guarded.cs}, session{t, raw.cs}
		args := map[string]any{"id": "BK00007"}
		res := guarded.call("get_booking", args)
		assert.Equal(t, "summary", res.Meta[mcpcore.MetaStrategy])
		texts := textsOf(t, res)
		require.Len(t, texts, 2)
		call := regexp.MustCompile(`call ctxfit_details with (\{.*\}) \(or`).FindStringSubmatch(texts[1])
		require.NotNil(t, call, texts[1])
		var in map[string]any
		require.NoError(t, json.Unmarshal([]byte(call[1]), &in))
		in["fields"] = "all"
		full := guarded.call(mcpcore.DefaultDetailsTool, in)
		require.False(t, full.IsError, "%v", textsOf(t, full))
		assert.Equal(t, textsOf(t, raw.call("get_booking", args))[0], textsOf(t, full)[0])
	})
}

func TestTheExampleServesStreamableHTTP(t *testing.T) {
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-http", "127.0.0.1:0")
	cmd.Env = serverEnv()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	var url string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := regexp.MustCompile(`url=(http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	require.NotEmpty(t, url, "the server logs its URL")
	go func() {
		for sc.Scan() { // keep draining stderr
		}
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	defer cs.Close()
	s := session{t, cs}
	bodies := s.follow("list_bookings", map[string]any{"status": "cancelled"})
	assert.Greater(t, len(bodies), 1)
}
