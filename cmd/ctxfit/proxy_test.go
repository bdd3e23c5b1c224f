package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
)

// This test binary doubles as a tiny upstream MCP server when run with
// CTXFIT_FAKE_UPSTREAM=1.
func TestMain(m *testing.M) {
	if os.Getenv("CTXFIT_FAKE_UPSTREAM") == "1" {
		s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "items", Description: "A long list."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fakeItems()}}}, nil, nil
			})
		_ = s.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeItems() string {
	var items []string
	for i := range 300 {
		items = append(items, fmt.Sprintf(`{"id":%d,"text":"item number %d of the fake upstream"}`, i, i))
	}
	return "[" + strings.Join(items, ",") + "]"
}

// proxyInProcess runs `ctxfit proxy ARGS -- <the fake upstream>` in this
// process, over pipes, and connects a client to it.
func proxyInProcess(t *testing.T, args ...string) (*mcp.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the fake upstream as a subprocess")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	args = append(args, "--", "env", "CTXFIT_FAKE_UPSTREAM=1", exe)
	getenv := func(k string) string {
		if k == "CTXFIT_SECRET" {
			return "a cmd proxy test secret of 32 bytes or more"
		}
		return ""
	}
	return inProcess(t, "the proxy", func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
		return serveProxy(ctx, args, stdin, stdout, stderr, getenv)
	})
}

// inProcess runs serve (a command's serving function: the proxy's, the
// gateway's) over in-memory pipes and connects an MCP client to it. When
// the test ends, the client closes and serve's context is cancelled; serve
// must then return nil within 20 seconds.
func inProcess(t *testing.T, name string, serve func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error) (*mcp.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, inR, outW, stderr) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err, "stderr: %s", stderr)
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Errorf("%s did not stop", name)
		}
	})
	return cs, stderr
}

func callItems(t *testing.T, cs *mcp.ClientSession) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "items"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	return res
}

func TestProxyServesTheUpstreamShapedOverStdio(t *testing.T) {
	cs, stderr := proxyInProcess(t, "--threshold", "500", "--hard-cap", "1500")
	res := callItems(t, cs)
	assert.Equal(t, "pagination", res.Meta[mcpcore.MetaStrategy])
	next, _ := res.Meta[mcpcore.MetaNextCursor].(string)
	require.NotEmpty(t, next)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpcore.DefaultNextTool, Arguments: map[string]any{"cursor": next}})
	require.NoError(t, err)
	assert.False(t, res.IsError)

	require.Eventually(t, func() bool { return strings.Count(stderr.String(), `"msg":"tool call"`) == 2 }, 30*time.Second, 10*time.Millisecond)
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "every log line is JSON: %s", line)
		if rec["msg"] == "tool call" {
			for _, k := range []string{"request_id", "tool", "duration_ms", "status", "tokens_before", "tokens_after"} {
				assert.Contains(t, rec, k)
			}
		}
	}
}

func TestProxyReloadsItsSettingsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ctxfit.yaml")
	require.NoError(t, os.WriteFile(file, []byte("threshold: 100000\nhardCap: 100000\n"), 0o600))
	cs, _ := proxyInProcess(t, "--config", file)
	_, shaped := callItems(t, cs).Meta[mcpcore.MetaStrategy]
	assert.False(t, shaped, "under the file's threshold the result passes through")

	require.NoError(t, os.WriteFile(file, []byte("threshold: 500\nhardCap: 1500\n"), 0o600))
	require.Eventually(t, func() bool {
		return callItems(t, cs).Meta[mcpcore.MetaStrategy] == "pagination"
	}, 10*time.Second, 50*time.Millisecond, "the new threshold applies")
}

func TestProxyRefusesBadInvocations(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no upstream command is a usage error", []string{"proxy", "--threshold", "10"}, 2, "needs the upstream's command"},
		{"a malformed rate is a usage error", []string{"proxy", "--rate", "fast", "--", "x"}, 2, `--rate "fast"`},
		{"an unknown mode is a usage error", []string{"proxy", "--mode", "cache", "--", "x"}, 2, `mode "cache" must be one of: store replay`},
		{"a hard cap under the threshold is a usage error", []string{"proxy", "--threshold", "5000", "--hard-cap", "100", "--", "x"}, 2, "hardCap 100 must be >= threshold 5000"},
		{"zero breaker failures is a usage error", []string{"proxy", "--breaker-failures", "0", "--", "x"}, 2, "--breaker-failures >= 1"},
		{"a command and an upstream URL are a usage error", []string{"proxy", "--upstream-url", "http://127.0.0.1:1/mcp", "--", "x"}, 2, "not both"},
		{"a header without a URL is a usage error", []string{"proxy", "--header", "Authorization:Bearer x", "--", "x"}, 2, "need --upstream-url"},
		{"a header without a colon is a usage error", []string{"proxy", "--header", "Authorization", "--upstream-url", "http://x"}, 2, "want NAME:VALUE"},
		{"zero sessions is a usage error", []string{"proxy", "--max-sessions", "0", "--", "x"}, 2, "--max-sessions must be >= 1"},
		{"an upstream that does not exist is a failure", []string{"proxy", "--", "/nonexistent/mcp-server"}, 1, "starting the upstream server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tt.args...)
			assert.Equal(t, tt.wantCode, code, errOut)
			assert.Contains(t, errOut, tt.wantErr)
		})
	}
}
