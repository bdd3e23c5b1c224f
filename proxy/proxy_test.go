package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/proxy"
)

// logBuffer collects the proxy's JSON log lines.
type logBuffer struct{ syncbuf.Buffer }

// calls returns the "tool call" records logged so far.
func (l *logBuffer) calls(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(l.String()))
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

// patient are the guard's limits in tests: a minute to shape and to be
// admitted, so that a slow machine never fails a test.
func patient(cfg ctxfit.Config) ctxfit.Config {
	cfg.Secret = testSecret
	cfg.ShapeTimeout = ctxfit.Duration(time.Minute)
	cfg.AdmissionWait = ctxfit.Duration(time.Minute)
	return cfg
}

type fixture struct {
	t    *testing.T
	p    *proxy.Proxy
	logs *logBuffer
}

// inProcess is an upstream that is a fresh fake server in this process for
// every connection.
func inProcess() proxy.Upstream {
	return proxy.Upstream{Dial: func(ctx context.Context) (mcp.Connection, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := fakeServer().Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct.Connect(ctx)
	}}
}

// subprocess is an upstream that is this test binary run as the fake
// server, a process per session.
func subprocess(t *testing.T) proxy.Upstream {
	if testing.Short() {
		t.Skip("runs the fake upstream as a subprocess")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	return proxy.Upstream{Command: &proxy.Command{Path: exe, Env: append(proxy.PassEnv(os.Environ()), fakeEnv+"=1")}}
}

func newFixture(t *testing.T, up proxy.Upstream, cfg ctxfit.Config, opts proxy.Options) *fixture {
	t.Helper()
	g, err := ctxfit.New(&ctxfit.Options{Config: patient(cfg)})
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
	p, err := proxy.New(g, up, &opts)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return &fixture{t: t, p: p, logs: logs}
}

// connect connects a client to the proxy in memory.
func (f *fixture) connect(opts *mcp.ClientOptions) *mcp.ClientSession {
	f.t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	conn, err := st.Connect(context.Background())
	require.NoError(f.t, err)
	go func() { _ = f.p.Serve(context.Background(), conn) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(), ct, nil)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { cs.Close() })
	return cs
}

// direct connects a client to a fake server without the proxy.
func direct(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	_, err := fakeServer().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	// The proxy speaks the session protocol (2025-11-25 and before), not
	// SEP-2575's stateless one: compare like with like.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).
		Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
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
func eventually(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	var res *mcp.CallToolResult
	require.Eventually(t, func() bool {
		res = call(t, cs, tool, args)
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

func toolsByName(t *testing.T, cs *mcp.ClientSession) map[string]map[string]any {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	out := map[string]map[string]any{}
	for _, tool := range res.Tools {
		b, err := json.Marshal(tool)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		out[tool.Name] = m
	}
	return out
}

func TestInitializeAnswersTheUpstreamsCapabilitiesWithCtxfitsAdded(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	got := f.connect(nil).InitializeResult()
	want := direct(t, nil).InitializeResult()
	assert.Equal(t, want.ServerInfo, got.ServerInfo)
	assert.Equal(t, want.Instructions, got.Instructions)
	assert.Equal(t, want.ProtocolVersion, got.ProtocolVersion)
	assert.Equal(t, want.Capabilities.Logging, got.Capabilities.Logging)
	assert.Equal(t, want.Capabilities.Prompts, got.Capabilities.Prompts)
	assert.Equal(t, want.Capabilities.Resources, got.Capabilities.Resources)
	assert.Equal(t, want.Capabilities.Completions, got.Capabilities.Completions)
	require.NotNil(t, got.Capabilities.Tools)
	assert.True(t, got.Capabilities.Tools.ListChanged, "ctxfit adds listChanged: a reconnected upstream may list other tools")
}

func TestToolsListIsTheUpstreamsWithCtxfitsToolsAndOnlyTheDocumentedRewrites(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{HardCap: 5000}, proxy.Options{})
	got := toolsByName(t, f.connect(nil))
	want := toolsByName(t, direct(t, nil))
	for _, name := range (mcpcore.Names{}).All() {
		require.Contains(t, got, name)
		delete(got, name)
	}
	require.Equal(t, len(want), len(got))
	for name, w := range want {
		g := got[name]
		require.NotNil(t, g, name)
		// The only differences: _meta gains the result size a client may
		// expect, and an outputSchema also accepts shaped results.
		assert.Equal(t, map[string]any{mcpcore.MetaMaxResultSizeChars: float64(40000)}, g["_meta"], name)
		delete(g, "_meta")
		if w["outputSchema"] != nil {
			rewritten, err := mcpcore.OutputSchema(mustJSON(t, w["outputSchema"]))
			require.NoError(t, err)
			assert.JSONEq(t, string(rewritten), string(mustJSON(t, g["outputSchema"])), name)
			delete(g, "outputSchema")
			delete(w, "outputSchema")
		}
		assert.Equal(t, w, g, name)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestACallOfAnUnknownToolGetsTheUpstreamsOwnAnswer(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	_, want := direct(t, nil).CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"})
	_, got := f.connect(nil).CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"})
	require.Error(t, want)
	assert.Equal(t, want.Error(), got.Error())
}

func TestFollowingEveryCursorReproducesTheUpstreamsBytes(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run("in "+string(mode)+" mode", func(t *testing.T) {
			t.Parallel()
			const hardCap = 3000
			f := newFixture(t, inProcess(), ctxfit.Config{Threshold: 1000, HardCap: hardCap, Mode: mode}, proxy.Options{})
			cs := f.connect(nil)
			var items []string
			res := call(t, cs, "big", nil)
			for range 200 {
				require.False(t, res.IsError, "%v", res.Content)
				assert.LessOrEqual(t, mcpfittest.Tokens(t, res), hardCap, "no page over the hard cap")
				var page struct {
					Items []json.RawMessage `json:"items"`
				}
				require.NoError(t, json.Unmarshal([]byte(text(t, res)), &page))
				for _, it := range page.Items {
					items = append(items, string(it))
				}
				next, _ := res.Meta[mcpcore.MetaNextCursor].(string)
				if next == "" {
					break
				}
				res = call(t, cs, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
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

func TestACursorOpensOnlyInTheSessionThatGotIt(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{Threshold: 1000, HardCap: 3000}, proxy.Options{})
	// Two streamable HTTP sessions: each has its own subject.
	url := serveHTTP(t, f.p)
	a, b := httpClient(t, url, nil), httpClient(t, url, nil)
	next := call(t, a, "big", nil).Meta[mcpcore.MetaNextCursor].(string)
	assert.False(t, call(t, a, mcpcore.DefaultNextTool, map[string]any{"cursor": next}).IsError)
	res := call(t, b, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
	assert.True(t, res.IsError, "another session's cursor is refused")
}

func TestResourcesAndPromptsPassThroughAndLargeOnesAreShaped(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{Threshold: 1000, HardCap: 3000}, proxy.Options{})
	cs, raw := f.connect(nil), direct(t, nil)
	ctx := context.Background()

	gotR, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	wantR, err := raw.ListResources(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, wantR, gotR)
	gotT, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	wantT, err := raw.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, wantT, gotT)
	gotP, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	wantP, err := raw.ListPrompts(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, wantP, gotP)

	small, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fake://small"})
	require.NoError(t, err)
	assert.Equal(t, "small", small.Contents[0].Text, "a small resource is as the upstream sent it")

	// Shaped: the big resource comes in chunks whose texts rebuild it.
	big, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fake://big"})
	require.NoError(t, err)
	assert.Equal(t, "chunking", big.Meta[mcpcore.MetaStrategy])
	var rebuilt strings.Builder
	assert.Contains(t, big.Contents[0].Meta, mcpcore.MetaChunk, "a chunk travels as text, its place in _meta")
	rebuilt.WriteString(big.Contents[0].Text)
	next, _ := big.Meta[mcpcore.MetaNextCursor].(string)
	for next != "" {
		res := call(t, cs, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
		require.False(t, res.IsError, "%v", res.Content)
		assert.Contains(t, res.Content[0].(*mcp.TextContent).Meta, mcpcore.MetaChunk, "a chunk travels as text, its place in _meta")
		rebuilt.WriteString(text(t, res))
		next, _ = res.Meta[mcpcore.MetaNextCursor].(string)
	}
	assert.Equal(t, bigText(), rebuilt.String())

	// Shaped: the prompt's long message is chunked in place, with its role.
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "big_prompt", Arguments: map[string]string{"topic": "x"}})
	require.NoError(t, err)
	assert.Equal(t, "a long prompt about x", p.Description)
	require.GreaterOrEqual(t, len(p.Messages), 3)
	assert.Equal(t, "Read this:", p.Messages[0].Content.(*mcp.TextContent).Text)
	assert.Equal(t, mcp.Role("assistant"), p.Messages[1].Role)
	assert.Equal(t, "Done.", p.Messages[len(p.Messages)-1].Content.(*mcp.TextContent).Text)
	assert.Equal(t, "chunking", p.Meta[mcpcore.MetaStrategy])
	first := p.Messages[1].Content.(*mcp.TextContent)
	assert.True(t, strings.HasPrefix(bigText(), first.Text), "the message's first chunk, as it is")
	assert.Contains(t, first.Meta, mcpcore.MetaChunk, "its place in its _meta")
}

func TestProgressLoggingSamplingRootsAndCompletionPassThrough(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	var mu sync.Mutex
	var progress []float64
	var logs []string
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, req.Params.Data.(string))
			mu.Unlock()
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "hello from the client"}}, nil
		},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	client.AddRoots(&mcp.Root{URI: "file:///tmp/a"})
	st, ct := mcp.NewInMemoryTransports()
	conn, err := st.Connect(context.Background())
	require.NoError(t, err)
	go func() { _ = f.p.Serve(context.Background(), conn) }()
	cs, err := client.Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	ctx := context.Background()

	require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "progress", Meta: mcp.Meta{"progressToken": "tok"}})
	require.NoError(t, err)
	assert.Equal(t, "done", text(t, res))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) == 3 && len(logs) == 1
	}, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, []float64{1, 2, 3}, progress)
	assert.Equal(t, []string{"progress done"}, logs)

	assert.Equal(t, "model said: hello from the client", text(t, call(t, cs, "sample", nil)))
	assert.Equal(t, "file:///tmp/a", text(t, call(t, cs, "roots", nil)))

	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "big_prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "topic", Value: "x"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"x-done"}, comp.Completion.Values)
}

func TestEachSessionHasItsOwnUpstreamSession(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	a, b := f.connect(nil), f.connect(nil)
	assert.Equal(t, "1", text(t, call(t, a, "count", nil)))
	assert.Equal(t, "2", text(t, call(t, a, "count", nil)))
	assert.Equal(t, "1", text(t, call(t, b, "count", nil)), "b's upstream is not a's")
	assert.Equal(t, 2, f.p.Sessions())
}

func TestTheStdioUpstreamGetsNoCtxfitVariables(t *testing.T) {
	t.Setenv("CTXFIT_SECRET", "do not tell")
	f := newFixture(t, subprocess(t), ctxfit.Config{}, proxy.Options{})
	assert.Empty(t, text(t, call(t, f.connect(nil), "env", nil)))
	assert.Equal(t, []string{"A=1", "CTXFIT_X=2"}, proxy.PassEnv([]string{"A=1", "CTXFIT_SECRET=s", "CTXFIT_X=2"}, "CTXFIT_X"))
}

func TestAnUpstreamThatCrashesMidCallIsRestarted(t *testing.T) {
	f := newFixture(t, subprocess(t), ctxfit.Config{}, proxy.Options{})
	cs := f.connect(nil)
	before := text(t, call(t, cs, "pid", nil))
	assertProxyError(t, call(t, cs, "crash", nil), proxy.StatusUpstreamFailure, "retry in a few seconds")
	after := text(t, eventually(t, cs, "pid", nil))
	assert.NotEqual(t, before, after, "a new process answers")
	assert.Equal(t, "echo: still here", text(t, call(t, cs, "echo", map[string]any{"text": "still here"})))
}

func TestAnUpstreamThatNeverAnswersTimesOut(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{CallTimeout: 300 * time.Millisecond})
	cs := f.connect(nil)
	assertProxyError(t, call(t, cs, "hang", nil), proxy.StatusTimeout, "did not answer the call of hang within 300ms")
	assert.Equal(t, "echo: ok", text(t, call(t, cs, "echo", map[string]any{"text": "ok"})), "the upstream keeps serving")
}

func TestMalformedUpstreamOutputIsDroppedAndTheUpstreamKept(t *testing.T) {
	f := newFixture(t, subprocess(t), ctxfit.Config{}, proxy.Options{CallTimeout: 2 * time.Second}) // time enough for the other calls on a loaded machine
	cs := f.connect(nil)
	before := text(t, call(t, cs, "pid", nil))
	assertProxyError(t, call(t, cs, "garbage", nil), proxy.StatusTimeout, "did not answer")
	assert.Equal(t, before, text(t, call(t, cs, "pid", nil)), "the same process answers")
}

func TestTheBreakerOpensAfterFiveConsecutiveFailures(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{CallTimeout: 100 * time.Millisecond, BreakerOpen: time.Hour})
	cs := f.connect(nil)
	for range 5 {
		assertProxyError(t, call(t, cs, "hang", nil), proxy.StatusTimeout, "did not answer")
	}
	res := call(t, cs, "echo", map[string]any{"text": "x"})
	assertProxyError(t, res, proxy.StatusCircuitOpen, "failed 5 times in a row")
}

func TestTheRateLimitAnswersAnErrorWhenExceeded(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{Rate: 1, Burst: 2, Now: clock})
	cs := f.connect(nil)
	assert.False(t, call(t, cs, "echo", map[string]any{"text": "1"}).IsError)
	assert.False(t, call(t, cs, "echo", map[string]any{"text": "2"}).IsError)
	res := call(t, cs, "echo", map[string]any{"text": "3"})
	assertProxyError(t, res, proxy.StatusRateLimited, "this client may make 1 per second (bursts of 2); retry in 1 seconds")
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	assert.False(t, call(t, cs, "echo", map[string]any{"text": "4"}).IsError, "a token came back after a second")
	var statuses []string
	for _, c := range f.logs.calls(t) {
		statuses = append(statuses, c["status"].(string)+"/"+str(c["reason"]))
	}
	assert.Equal(t, []string{"success/", "success/", "failure/rate_limited", "success/"}, statuses)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func TestAToolListChangeReachesTheClient(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	changed := make(chan struct{}, 1)
	cs := f.connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	call(t, cs, "add_tool", nil)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	assert.Contains(t, toolsByName(t, cs), "late")
	assert.Equal(t, "late", text(t, call(t, cs, "late", nil)))
}

func TestEveryToolCallIsLoggedOnceWithItsSessionRequestIDAndRedactedArguments(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{Threshold: 1000, HardCap: 3000}, proxy.Options{LogArguments: true, Redact: []string{"text"}})
	cs := f.connect(nil)
	call(t, cs, "echo", map[string]any{"text": "secret words"})
	res := call(t, cs, "big", nil)
	call(t, cs, mcpcore.DefaultNextTool, map[string]any{"cursor": res.Meta[mcpcore.MetaNextCursor]})
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"})
	require.Error(t, err)

	calls := f.logs.calls(t)
	require.Len(t, calls, 4)
	for _, c := range calls {
		assert.Regexp(t, `^\d+$`, c["request_id"], "the client's own request ID")
		assert.Contains(t, c, "duration_ms")
	}
	assert.Equal(t, "echo", calls[0]["tool"])
	assert.Equal(t, "success", calls[0]["status"])
	assert.Equal(t, `{"text":"[redacted]"}`, calls[0]["arguments"])
	assert.Equal(t, calls[0]["tokens_before"], calls[0]["tokens_after"])
	assert.Equal(t, "big", calls[1]["tool"])
	assert.Equal(t, "pagination", calls[1]["strategy"])
	assert.Greater(t, calls[1]["tokens_before"], calls[1]["tokens_after"])
	assert.Equal(t, "ctxfit_next", calls[2]["tool"])
	assert.Equal(t, "nope", calls[3]["tool"])
	assert.Equal(t, "failure", calls[3]["status"])
	assert.Equal(t, "error", calls[3]["reason"])
}

func TestNewNeedsAGuardAndOneUpstream(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: testSecret}})
	require.NoError(t, err)
	defer g.Close()
	_, err = proxy.New(nil, inProcess(), nil)
	assert.Error(t, err)
	_, err = proxy.New(g, proxy.Upstream{}, nil)
	assert.Error(t, err)
	_, err = proxy.New(g, proxy.Upstream{URL: "http://x", Command: &proxy.Command{Path: "x"}}, nil)
	assert.Error(t, err)
}

func TestAnUpstreamThatCannotStartAnswersInitializeWithAnError(t *testing.T) {
	f := newFixture(t, proxy.Upstream{Command: &proxy.Command{Path: "/nonexistent/upstream"}}, ctxfit.Config{}, proxy.Options{})
	st, ct := mcp.NewInMemoryTransports()
	conn, err := st.Connect(context.Background())
	require.NoError(t, err)
	go func() { _ = f.p.Serve(context.Background(), conn) }()
	_, err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	assert.ErrorContains(t, err, "starting the upstream server")
}

func TestASharedUpstreamServesEverySessionAndRoutesEachAnswerToItsSession(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{Threshold: 1000, HardCap: 3000}, proxy.Options{SharedUpstream: true})
	url := serveHTTP(t, f.p)
	progress := func(got *[]float64, mu *sync.Mutex) *mcp.ClientOptions {
		return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			*got = append(*got, req.Params.Progress)
			mu.Unlock()
		}}
	}
	var mu sync.Mutex
	var pa, pb []float64
	a, b := httpClient(t, url, progress(&pa, &mu)), httpClient(t, url, progress(&pb, &mu))
	assert.Equal(t, "1", text(t, call(t, a, "count", nil)))
	assert.Equal(t, "2", text(t, call(t, b, "count", nil)), "one upstream session for both")
	assert.Equal(t, a.InitializeResult().ServerInfo, b.InitializeResult().ServerInfo)

	_, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "progress", Meta: mcp.Meta{"progressToken": "a"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(pa) == 3 }, 10*time.Second, 5*time.Millisecond)
	mu.Lock()
	assert.Empty(t, pb, "progress goes to the session whose request carries the token")
	mu.Unlock()

	// Cursors stay bound to the session that got them.
	next := call(t, a, "big", nil).Meta[mcpcore.MetaNextCursor].(string)
	assert.True(t, call(t, b, mcpcore.DefaultNextTool, map[string]any{"cursor": next}).IsError)
	assert.False(t, call(t, a, mcpcore.DefaultNextTool, map[string]any{"cursor": next}).IsError)
}

func TestMalformedArgumentsOfTheCtxfitToolsAreToolErrors(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	cs := f.connect(nil)
	for name, args := range map[string]map[string]any{
		mcpcore.DefaultNextTool:    {},
		mcpcore.DefaultDetailsTool: {"cursor": "x", "unknown": 1},
		mcpcore.DefaultSearchTool:  {"cursor": "x"},
		mcpcore.DefaultQueryTool:   {"expression": "."},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
			require.NoError(t, err, "not a JSON-RPC error: the model reads a tool result and corrects itself")
			require.True(t, res.IsError)
			e, ok := res.StructuredContent.(map[string]any)
			require.True(t, ok, "the structured error: %T", res.StructuredContent)
			assert.Equal(t, "parameter_invalid", e["code"])
			data, _ := e["data"].(map[string]any)
			assert.NotEmpty(t, data["parameter"], "%v", e)
			assert.NotEmpty(t, data["expected"], "%v", e)
			assert.NotEmpty(t, data["suggestion"], "%v", e)
		})
	}
}
