package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/proxy"
)

// serveHTTP serves the proxy's streamable HTTP endpoint and returns its URL.
func serveHTTP(t *testing.T, p *proxy.Proxy) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", p.Handler())
	mux.Handle("/healthz", p.HealthHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		p.Close()
		srv.Close()
	})
	return srv.URL
}

func httpClient(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestListenModeGivesEachSessionItsOwnUpstreamAndReportsHealth(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	url := serveHTTP(t, f.p)
	a, b := httpClient(t, url, nil), httpClient(t, url, nil)
	assert.Equal(t, "1", text(t, call(t, a, "count", nil)))
	assert.Equal(t, "2", text(t, call(t, a, "count", nil)))
	assert.Equal(t, "1", text(t, call(t, b, "count", nil)))

	resp, err := http.Get(url + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var h proxy.Health
	require.NoError(t, json.Unmarshal(body, &h))
	assert.Equal(t, "ok", h.Status)
	assert.Equal(t, 2, h.Sessions)
	assert.Equal(t, map[proxy.State]int{proxy.StateConnected: 2}, h.States)
	for _, cs := range []*mcp.ClientSession{a, b} {
		assert.NotContains(t, string(body), cs.ID(), "no session ID is listed")
	}
}

// bearer is an http.RoundTripper that sends Authorization: Bearer token
// (none when token is "").
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b != "" {
		r.Header.Set("Authorization", "Bearer "+string(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// clientAs connects to the proxy at url with Authorization: Bearer token.
func clientAs(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearer(token)}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// rawRequest sends one message in session id as token ("" for none) and
// returns the status and body of the answer.
func rawRequest(t *testing.T, url, method, id, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := (&http.Client{Transport: bearer(token)}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(out)
}

func TestASessionIsRefusedToEveryCredentialButTheOneThatMadeIt(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{Threshold: 1000, HardCap: 3000}, proxy.Options{})
	url := serveHTTP(t, f.p)
	alice := clientAs(t, url, "alice")
	first := call(t, alice, "big", nil)
	next, _ := first.Meta[mcpcore.MetaNextCursor].(string)
	require.NotEmpty(t, next)
	page2 := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ctxfit_next","arguments":{"cursor":` + strconv.Quote(next) + `}}}`
	read := `{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"fake://big"}}`
	for _, token := range []string{"mallory", ""} {
		for _, tc := range []struct{ what, method, body string }{
			{"the next page", http.MethodPost, page2}, {"a resource", http.MethodPost, read},
			{"the stream", http.MethodGet, ""}, {"the end of the session", http.MethodDelete, ""},
		} {
			t.Run(fmt.Sprintf("asking for %s with %q gets 404", tc.what, token), func(t *testing.T) {
				status, body := rawRequest(t, url, tc.method, alice.ID(), token, tc.body)
				assert.Equal(t, http.StatusNotFound, status)
				assert.Equal(t, "session not found\n", body, "the answer for a session that does not exist")
			})
		}
	}
	t.Run("the credential that made the session still uses it", func(t *testing.T) {
		res := call(t, alice, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
		assert.False(t, res.IsError, "%v", res.Content)
	})
	t.Run("an anonymous session is refused to a credential", func(t *testing.T) {
		anon := clientAs(t, url, "")
		status, _ := rawRequest(t, url, http.MethodPost, anon.ID(), "alice", read)
		assert.Equal(t, http.StatusNotFound, status)
		assert.Equal(t, "1", text(t, call(t, anon, "count", nil)))
	})
}

func TestTheHealthReportRedactsTheUpstreamURL(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: patient(ctxfit.Config{})})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	cases := []struct {
		name string
		up   proxy.Upstream
		want string
	}{
		{"the user, password and query values are redacted",
			proxy.Upstream{URL: "https://alice:hunter2@mcp.example.com/mcp?token=s3cret&v=1#frag"},
			"streamable-http: https://redacted@mcp.example.com/mcp?token=redacted&v=redacted#redacted"},
		{"a URL without credentials is as given", proxy.Upstream{URL: "http://127.0.0.1:9/sse", SSE: true}, "sse: http://127.0.0.1:9/sse"},
		{"headers are never shown", proxy.Upstream{URL: "http://h/mcp", Header: http.Header{"Authorization": {"Bearer s3cret"}}}, "streamable-http: http://h/mcp"},
		{"a command's arguments are never shown", proxy.Upstream{Command: &proxy.Command{Path: "server", Args: []string{"--token", "s3cret"}}}, "stdio: server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := proxy.New(g, c.up, nil)
			require.NoError(t, err)
			t.Cleanup(func() { p.Close() })
			w := httptest.NewRecorder()
			p.HealthHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			var h proxy.Health
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &h))
			assert.Equal(t, c.want, h.Upstream)
			assert.NotContains(t, w.Body.String(), "s3cret")
			assert.NotContains(t, w.Body.String(), "hunter2")
		})
	}
}

func TestListenModeRefusesSessionsBeyondTheLimit(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{MaxSessions: 1})
	url := serveHTTP(t, f.p)
	httpClient(t, url, nil)
	_, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, nil)
	assert.ErrorContains(t, err, "Service Unavailable")
}

func TestListenModeRelaysServerInitiatedMessages(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	url := serveHTTP(t, f.p)
	progress := make(chan float64, 10)
	cs := httpClient(t, url, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params.Progress
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "over HTTP"}}, nil
		},
	})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "progress", Meta: mcp.Meta{"progressToken": 7}})
	require.NoError(t, err)
	assert.Equal(t, "done", text(t, res))
	for want := 1.0; want <= 3; want++ {
		select {
		case got := <-progress:
			assert.Equal(t, want, got)
		case <-time.After(10 * time.Second):
			t.Fatal("progress did not arrive")
		}
	}
	assert.Equal(t, "model said: over HTTP", text(t, call(t, cs, "sample", nil)))
}

func TestAnHTTPUpstreamIsRelayedToo(t *testing.T) {
	// The upstream: a fake server behind the SDK's streamable HTTP handler.
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fakeServer() }, nil))
	t.Cleanup(up.Close) // after the proxy's cleanup, which ends its streams
	var sawHeader atomic.Bool
	check := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer t" {
			sawHeader.Store(true)
		}
		r.URL.Scheme, r.URL.Host = "http", strings.TrimPrefix(up.URL, "http://")
		r.RequestURI = ""
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		fl, _ := w.(http.Flusher)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				if fl != nil {
					fl.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(check.Close)
	f := newFixture(t, proxy.Upstream{URL: check.URL, Header: http.Header{"Authorization": {"Bearer t"}}}, ctxfit.Config{}, proxy.Options{})
	cs := f.connect(nil)
	assert.Equal(t, "echo: over http", text(t, call(t, cs, "echo", map[string]any{"text": "over http"})))
	assert.Equal(t, "1", text(t, call(t, cs, "count", nil)))
	assert.True(t, sawHeader.Load(), "the configured header reaches the upstream")
}

func TestAMalformedLineFromAStdioClientAnswersAParseErrorAndTheSessionGoesOn(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- f.p.ServeStdio(context.Background(), inR, outW) }()
	out := bufio.NewReader(outR)
	send := func(line string) map[string]any {
		_, err := io.WriteString(inW, line+"\n")
		require.NoError(t, err)
		got, err := out.ReadBytes('\n')
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(got, &m))
		return m
	}
	parseErr := send(`{"jsonrpc":"2.0","id":1,"method":`)
	assert.Equal(t, float64(-32700), parseErr["error"].(map[string]any)["code"])
	init := send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	assert.Equal(t, float64(2), init["id"])
	assert.Contains(t, init, "result")
	big := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", proxy.MaxMessageSize) + `"}}`
	tooBig := send(big)
	assert.Equal(t, float64(3), tooBig["id"])
	assert.Equal(t, float64(-32600), tooBig["error"].(map[string]any)["code"])
	pong := send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	assert.Equal(t, float64(4), pong["id"])
	inW.Close()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return at the end of its input")
	}
}

func TestCloseEndsEverySessionAtOnce(t *testing.T) {
	f := newFixture(t, subprocess(t), ctxfit.Config{}, proxy.Options{})
	url := serveHTTP(t, f.p)
	a, b := httpClient(t, url, nil), httpClient(t, url, nil)
	call(t, a, "pid", nil)
	call(t, b, "pid", nil)
	start := time.Now()
	require.NoError(t, f.p.Close())
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, 0, f.p.Sessions())
}

func TestALegacySSEUpstreamIsRelayedToo(t *testing.T) {
	up := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return fakeServer() }, nil))
	t.Cleanup(up.Close) // after the proxy's cleanup, which ends its streams
	f := newFixture(t, proxy.Upstream{URL: up.URL, SSE: true}, ctxfit.Config{}, proxy.Options{})
	cs := f.connect(nil)
	assert.Equal(t, "echo: over sse", text(t, call(t, cs, "echo", map[string]any{"text": "over sse"})))
	assert.Equal(t, "model said: from sse", text(t, call(t, f.connect(&mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "from sse"}}, nil
		},
	}), "sample", nil)))
}

func TestAnIdleListenSessionEndsWithItsUpstream(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	// The check runs every 20 ms of real time; idleness is measured on the
	// test's clock, which stands still until the test moves it.
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{IdleTimeout: 40 * time.Millisecond, Now: clock})
	url := serveHTTP(t, f.p)
	cs := httpClient(t, url, nil)
	call(t, cs, "echo", map[string]any{"text": "x"})
	time.Sleep(100 * time.Millisecond) // several checks: none finds it idle
	require.Equal(t, 1, f.p.Sessions())
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	require.Eventually(t, func() bool { return f.p.Sessions() == 0 }, 10*time.Second, 10*time.Millisecond)
}
