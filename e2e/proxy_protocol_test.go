package e2e

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// nodeModules returns e2e/ts's node_modules/.bin, skipping the test
// without node (failing under CI=true) and failing without the packages.
func nodeModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed; the end-to-end tests need Node 20 or later")
		}
		t.Skip("node is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("ts", "node_modules", ".bin"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "mcp-server-everything"))
	require.NoError(t, err, "run (cd e2e/ts && npm ci --no-audit --no-fund), as test.sh does")
	return dir
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// TestTheTypeScriptClientSeesTheWholeProtocolThroughTheProxy runs
// e2e/ts/proxy.test.mjs: server-everything directly and behind the proxy
// (stdio, --listen, and an HTTP upstream), the same answers for
// initialize, tools, resources, prompts, completions, logging, progress,
// cancellation, sampling, elicitation, roots, roots/list_changed and
// subscriptions, and a session of its own per --listen client.
func TestTheTypeScriptClientSeesTheWholeProtocolThroughTheProxy(t *testing.T) {
	t.Parallel()
	nodeModules(t)
	bins := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "proxy.test.mjs")
	cmd.Dir = "ts"
	cmd.Env = append(cleanEnv(), "CTXFIT_E2E_CTXFIT="+bins["ctxfit"], "CTXFIT_E2E_PORT="+freePort(t))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node --test proxy.test.mjs:\n%s", out)
}

// TestTheGoClientSeesTheSameServerThroughTheProxy drives server-everything
// with the Go SDK client directly and through the proxy over stdio.
func TestTheGoClientSeesTheSameServerThroughTheProxy(t *testing.T) {
	t.Parallel()
	dir := nodeModules(t)
	bins := binaries(t)
	everything := filepath.Join(dir, "mcp-server-everything")
	client := func(cmd *exec.Cmd) *mcp.ClientSession {
		cmd.Env = cleanEnv()
		c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Model: "e2e", Role: "assistant", Content: &mcp.TextContent{Text: "from the Go client"}}, nil
			},
		})
		c.AddRoots(&mcp.Root{URI: "file:///tmp/go", Name: "go"})
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	d := client(exec.Command(everything))
	p := client(exec.Command(bins["ctxfit"], "proxy", "--", everything))
	ctx := context.Background()

	assert.Equal(t, d.InitializeResult().ServerInfo, p.InitializeResult().ServerInfo)
	assert.Equal(t, d.InitializeResult().ProtocolVersion, p.InitializeResult().ProtocolVersion)
	wantCaps, gotCaps := *d.InitializeResult().Capabilities, *p.InitializeResult().Capabilities
	require.NotNil(t, gotCaps.Tools)
	assert.True(t, gotCaps.Tools.ListChanged, "the one capability ctxfit changes")
	gotCaps.Tools, wantCaps.Tools = nil, nil
	assert.Equal(t, wantCaps, gotCaps)

	want, err := d.ListTools(ctx, nil)
	require.NoError(t, err)
	got, err := p.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, got.Tools, len(want.Tools)+4, "the upstream's tools and ctxfit's four")
	for i, w := range want.Tools {
		g := *got.Tools[i]
		require.Equal(t, w.Name, g.Name, "in the upstream's order")
		assert.NotNil(t, g.Meta[mcpcore.MetaMaxResultSizeChars], w.Name)
		delete(g.Meta, mcpcore.MetaMaxResultSizeChars)
		if len(g.Meta) == 0 {
			g.Meta = nil
		}
		if w.OutputSchema != nil {
			original, err := json.Marshal(w.OutputSchema)
			require.NoError(t, err)
			rewritten, err := mcpcore.OutputSchema(original)
			require.NoError(t, err)
			gotSchema, err := json.Marshal(g.OutputSchema)
			require.NoError(t, err)
			assert.JSONEq(t, string(rewritten), string(gotSchema), w.Name)
			g.OutputSchema = w.OutputSchema
		}
		assert.Equal(t, jsonOf(t, w), jsonOf(t, &g), w.Name)
	}

	wr, err := d.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	gr, err := p.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, jsonOf(t, wr), jsonOf(t, gr))
	wp, err := d.GetPrompt(ctx, &mcp.GetPromptParams{Name: "simple-prompt"})
	require.NoError(t, err)
	gp, err := p.GetPrompt(ctx, &mcp.GetPromptParams{Name: "simple-prompt"})
	require.NoError(t, err)
	assert.Equal(t, jsonOf(t, wp), jsonOf(t, gp))
	for _, call := range []*mcp.CallToolParams{
		{Name: "echo", Arguments: map[string]any{"message": "<&> héllo"}},
		{Name: "trigger-sampling-request", Arguments: map[string]any{"prompt": "hi", "maxTokens": 5}},
		{Name: "get-roots-list", Arguments: map[string]any{}},
	} {
		w, err := d.CallTool(ctx, call)
		require.NoError(t, err)
		g, err := p.CallTool(ctx, call)
		require.NoError(t, err)
		assert.Equal(t, jsonOf(t, w), jsonOf(t, g), call.Name)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestTheProxyStopsWithinASecondOnSIGTERMWithClientsConnected: --listen
// with two clients (two upstream processes), SIGTERM, exit 0 within a
// second, and no upstream process left.
func TestTheProxyStopsWithinASecondOnSIGTERMWithClientsConnected(t *testing.T) {
	t.Parallel()
	bins := binaries(t)
	cmd := exec.Command(bins["ctxfit"], "proxy", "--listen", "127.0.0.1:0", "--", bins["mcpserver"], "-raw")
	url := startListening(t, cmd, proxyURL)
	var pids []int
	for range 2 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
		require.NoError(t, err)
		// Closing after the proxy is gone waits for the client's retries:
		// let it happen in the background.
		t.Cleanup(func() { go cs.Close() })
		_, err = cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
	}
	out, err := exec.Command("pgrep", "-P", strconv.Itoa(cmd.Process.Pid)).Output()
	require.NoError(t, err, "the upstream processes are the proxy's children")
	for _, f := range regexp.MustCompile(`\d+`).FindAll(out, -1) {
		pid, _ := strconv.Atoi(string(f))
		pids = append(pids, pid)
	}
	require.Len(t, pids, 2, "one upstream process per session")

	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "exit status 0")
	assert.Less(t, time.Since(start), time.Second)
	for _, pid := range pids {
		assert.Error(t, syscall.Kill(pid, 0), "upstream %d was reaped", pid)
	}

}
