package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/mcptest"
	"github.com/ctxfit/ctxfit/proxy"
)

// logBuffer collects the proxy's JSON log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// calls returns the "tool call" records logged so far.
func (l *logBuffer) calls(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "a log line is not JSON: %s", sc.Text())
		if m["msg"] == "tool call" {
			out = append(out, m)
		}
	}
	return out
}

const testSecret = "a proxy test secret of 32 bytes or more"

type fixture struct {
	t    *testing.T
	p    *proxy.Proxy
	cs   *mcp.ClientSession
	logs *logBuffer
}

// start runs a proxy in front of the fake upstream, with opts (fast
// restarts unless set) and cfg, and connects a client to it in memory.
func start(t *testing.T, cfg ctxfit.Config, opts proxy.Options) *fixture {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the fake upstream as a subprocess")
	}
	cfg.Secret = testSecret
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	logs := &logBuffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}
	if opts.BackoffMin == 0 {
		opts.BackoffMin = 20 * time.Millisecond
	}
	if opts.TerminateGrace == 0 {
		opts.TerminateGrace = 200 * time.Millisecond
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := proxy.New(ctx, proxy.Command{Path: exe, Env: append(os.Environ(), fakeEnv+"=1")}, g, &opts)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return &fixture{t: t, p: p, cs: cs, logs: logs}
}

func (f *fixture) call(tool string, args any) *mcp.CallToolResult {
	f.t.Helper()
	res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(f.t, err)
	return res
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.NotEmpty(t, res.Content)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok)
	return tc.Text
}

// eventually calls tool until it succeeds, and returns its result.
func (f *fixture) eventually(tool string, args any) *mcp.CallToolResult {
	f.t.Helper()
	var res *mcp.CallToolResult
	require.Eventually(f.t, func() bool {
		res = f.call(tool, args)
		return !res.IsError
	}, 20*time.Second, 20*time.Millisecond, "%s never succeeded", tool)
	return res
}

func assertProxyError(t *testing.T, res *mcp.CallToolResult, code, says string) {
	t.Helper()
	require.True(t, res.IsError, "want a tool error, got %v", res.Content)
	assert.Equal(t, code, res.Meta[proxy.MetaError])
	assert.Nil(t, res.StructuredContent, "tool errors carry no structured content")
	assert.Contains(t, text(t, res), says)
}

func TestTheProxyMirrorsTheUpstreamsTools(t *testing.T) {
	f := start(t, ctxfit.Config{}, proxy.Options{})
	res, err := f.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"echo", "pid", "big", "crash", "hang", "garbage", "add_tool", "ctxfit_next", "ctxfit_details"} {
		assert.Contains(t, names, want)
	}
	assert.Equal(t, "a fake upstream for tests", f.cs.InitializeResult().Instructions)
	assert.Equal(t, "echo: héllo <&>", text(t, f.call("echo", map[string]any{"text": "héllo <&>"})))
}

func TestFollowingEveryCursorReproducesTheUpstreamsBytes(t *testing.T) {
	for _, mode := range []string{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run("in "+mode+" mode", func(t *testing.T) {
			const hardCap = 3000
			f := start(t, ctxfit.Config{Threshold: 1000, HardCap: hardCap, Mode: mode}, proxy.Options{})
			var items []string
			res := f.call("big", nil)
			for range 200 {
				require.False(t, res.IsError, "%v", res.Content)
				all := mcptest.Texts(t, res)
				assert.LessOrEqual(t, mcptest.Tokens(t, res), hardCap)
				var page struct {
					Items []json.RawMessage `json:"items"`
				}
				require.NoError(t, json.Unmarshal([]byte(all[0]), &page))
				for _, it := range page.Items {
					items = append(items, string(it))
				}
				next, _ := res.Meta[mcpcore.MetaNextCursor].(string)
				if next == "" {
					break
				}
				res = f.call(mcpcore.DefaultNextTool, map[string]any{"cursor": next})
			}
			var want struct {
				Items []json.RawMessage `json:"items"`
			}
			// A Go upstream escapes HTML in what it sends (json.Marshal);
			// the key order and the numbers are as it wrote them.
			sent, err := json.Marshal(json.RawMessage(bigItems()))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(sent, &want))
			require.Len(t, items, len(want.Items))
			for i := range items {
				require.Equal(t, string(want.Items[i]), items[i], "item %d", i)
			}
		})
	}
}

func TestAnUpstreamThatCrashesMidCallIsRestarted(t *testing.T) {
	f := start(t, ctxfit.Config{}, proxy.Options{})
	before := text(t, f.call("pid", nil))
	assertProxyError(t, f.call("crash", nil), proxy.StatusUpstreamFailure, "retry in a few seconds")
	after := text(t, f.eventually("pid", nil))
	assert.NotEqual(t, before, after, "a new process answers")
	assert.GreaterOrEqual(t, f.p.Restarts(), 1)
	assert.Equal(t, "echo: still here", text(t, f.call("echo", map[string]any{"text": "still here"})))
}

func TestCallsDuringARestartSayTheUpstreamIsRestarting(t *testing.T) {
	f := start(t, ctxfit.Config{}, proxy.Options{BackoffMin: 3 * time.Second, BackoffMax: 3 * time.Second})
	f.call("crash", nil)
	var res *mcp.CallToolResult
	require.Eventually(t, func() bool {
		res = f.call("echo", map[string]any{"text": "x"})
		return res.Meta[proxy.MetaError] == proxy.StatusRestarting
	}, 5*time.Second, 10*time.Millisecond)
	assertProxyError(t, res, proxy.StatusRestarting, "The upstream server is restarting; retry in a few seconds.")
}

func TestAnUpstreamThatNeverAnswersTimesOut(t *testing.T) {
	f := start(t, ctxfit.Config{}, proxy.Options{CallTimeout: 300 * time.Millisecond})
	begin := time.Now()
	assertProxyError(t, f.call("hang", nil), proxy.StatusTimeout, "did not answer the call of hang within 300ms")
	assert.Less(t, time.Since(begin), 10*time.Second)
	assert.Equal(t, "echo: ok", text(t, f.call("echo", map[string]any{"text": "ok"})), "the upstream keeps serving")
	assert.Equal(t, 0, f.p.Restarts())
}

func TestMalformedUpstreamOutputBreaksTheConnectionAndRecovers(t *testing.T) {
	f := start(t, ctxfit.Config{}, proxy.Options{})
	before := text(t, f.call("pid", nil))
	assertProxyError(t, f.call("garbage", nil), proxy.StatusUpstreamFailure, "connection broke during the call of garbage")
	after := text(t, f.eventually("pid", nil))
	assert.NotEqual(t, before, after)
}

func TestTheBreakerOpensAfterFiveConsecutiveFailures(t *testing.T) {
	f := start(t, ctxfit.Config{}, proxy.Options{CallTimeout: 100 * time.Millisecond, BreakerOpen: 700 * time.Millisecond})
	for i := range 5 {
		assertProxyError(t, f.call("hang", nil), proxy.StatusTimeout, "did not answer")
		_ = i
	}
	res := f.call("echo", map[string]any{"text": "x"})
	assertProxyError(t, res, proxy.StatusCircuitOpen, "failed 5 times in a row")
	assert.Equal(t, float64(1), res.Meta[proxy.MetaRetryAfter])

	// Tool errors and successes are not failures; after the open period one
	// call probes the upstream and closes the breaker.
	assert.Equal(t, "echo: back", text(t, f.eventually("echo", map[string]any{"text": "back"})))
	assert.Equal(t, "echo: again", text(t, f.call("echo", map[string]any{"text": "again"})))
}

func TestFewerThanFiveFailuresDoNotOpenTheBreaker(t *testing.T) {
	f := start(t, ctxfit.Config{}, proxy.Options{CallTimeout: 100 * time.Millisecond})
	for range 4 {
		assertProxyError(t, f.call("hang", nil), proxy.StatusTimeout, "did not answer")
	}
	f.call("echo", map[string]any{"text": "resets the count"})
	for range 4 {
		assertProxyError(t, f.call("hang", nil), proxy.StatusTimeout, "did not answer")
	}
	assert.False(t, f.call("echo", map[string]any{"text": "x"}).IsError)
}

func TestTheRateLimitAnswersAnErrorWhenExceeded(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := start(t, ctxfit.Config{}, proxy.Options{Rate: 1, Burst: 2, Now: clock})
	assert.False(t, f.call("echo", map[string]any{"text": "1"}).IsError)
	assert.False(t, f.call("echo", map[string]any{"text": "2"}).IsError)
	res := f.call("echo", map[string]any{"text": "3"})
	assertProxyError(t, res, proxy.StatusRateLimited, "this client may make 1 per second (bursts of 2); retry in 1 seconds")
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	assert.False(t, f.call("echo", map[string]any{"text": "4"}).IsError, "a token came back after a second")
	statuses := func() []string {
		var s []string
		for _, c := range f.logs.calls(t) {
			s = append(s, c["status"].(string))
		}
		return s
	}
	assert.Equal(t, []string{"success", "success", "rate_limited", "success"}, statuses())
}

func TestAToolListChangeIsMirrored(t *testing.T) {
	f := start(t, ctxfit.Config{}, proxy.Options{})
	f.call("add_tool", nil)
	require.Eventually(t, func() bool {
		res, err := f.cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		return slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "late" })
	}, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, "late", text(t, f.call("late", nil)))
}

func TestEveryToolCallIsLoggedOnceWithItsTokens(t *testing.T) {
	f := start(t, ctxfit.Config{Threshold: 1000, HardCap: 3000}, proxy.Options{})
	f.call("echo", map[string]any{"text": "hi"})
	res := f.call("big", nil)
	next := res.Meta[mcpcore.MetaNextCursor].(string)
	f.call(mcpcore.DefaultNextTool, map[string]any{"cursor": next})
	_, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"})
	require.ErrorContains(t, err, `unknown tool "nope"`)

	calls := f.logs.calls(t)
	require.Len(t, calls, 4)
	for _, c := range calls {
		assert.Regexp(t, `^req_\d+$`, c["request_id"])
		assert.Contains(t, c, "duration_ms")
		assert.Equal(t, "INFO", c["level"])
	}
	assert.Equal(t, "echo", calls[0]["tool"])
	assert.Equal(t, "success", calls[0]["status"])
	assert.Equal(t, calls[0]["tokens_before"], calls[0]["tokens_after"])
	assert.Equal(t, "big", calls[1]["tool"])
	assert.Equal(t, "pagination", calls[1]["strategy"])
	assert.Greater(t, calls[1]["tokens_before"], calls[1]["tokens_after"])
	assert.Equal(t, "ctxfit_next", calls[2]["tool"])
	assert.Equal(t, "nope", calls[3]["tool"])
	assert.Equal(t, "error", calls[3]["status"])
}

func TestNewFailsWhenTheUpstreamCannotStart(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: testSecret}})
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()
	_, err = proxy.New(ctx, proxy.Command{Path: "/nonexistent/upstream"}, g, nil)
	assert.ErrorContains(t, err, "starting the upstream server")
	_, err = proxy.New(ctx, proxy.Command{Path: "sh", Args: []string{"-c", "exit 7"}}, g, nil)
	assert.ErrorContains(t, err, "upstream server")
	_, err = proxy.New(ctx, proxy.Command{Path: "sh", Args: []string{"-c", "echo not json-rpc; sleep 5"}}, g, &proxy.Options{TerminateGrace: 50 * time.Millisecond})
	assert.ErrorContains(t, err, "initializing the upstream server")
	_, err = proxy.New(ctx, proxy.Command{}, g, nil)
	assert.Error(t, err)
	_, err = proxy.New(ctx, proxy.Command{Path: "sh"}, nil, nil)
	assert.Error(t, err)
}
