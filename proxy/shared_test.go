package proxy_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/proxy"
)

// stalledClient initializes a session over raw HTTP, opens its event
// stream and never reads it.
func stalledClient(t *testing.T, url string) {
	// A small receive buffer: the stream backs up after little data.
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10)
		}
		return c, err
	}}}
	t.Helper()
	post := func(session, body string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Less(t, resp.StatusCode, 300)
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stalled","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/mcp", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	stream, err := client.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, stream.StatusCode)
	t.Cleanup(func() {
		cancel()
		stream.Body.Close()
	})
}

func TestAClientThatDoesNotReadItsEventStreamSlowsOnlyItselfOnASharedUpstream(t *testing.T) {
	f, url := sharedUpstreamWithSmallBuffers(t)
	stalledClient(t, url)

	var logged atomic.Int64
	b := httpClient(t, url, &mcp.ClientOptions{LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
		logged.Add(1)
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, b.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
	// 2 MB of log messages go to every session: far more than the
	// stalled client's socket buffers hold.
	const count = 128
	res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "chatter", Arguments: map[string]any{"count": count, "size": 16 << 10}})
	require.NoError(t, err, "the answer waited for a client that does not read")
	assert.Equal(t, "chattered", text(t, res))
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
	require.NoError(t, err)
	assert.Equal(t, "echo: still here", text(t, res))
	require.Eventually(t, func() bool { return logged.Load() == count }, 30*time.Second, 10*time.Millisecond,
		"the reading client gets every message")

	// More messages than the stalled client's queue holds: it is
	// disconnected, and the reading client goes on.
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "chatter", Arguments: map[string]any{"count": 1100, "size": 16}})
	require.NoError(t, err)
	assert.Equal(t, "chattered", text(t, res))
	require.Eventually(t, func() bool {
		return strings.Contains(f.logs.String(), "a client that does not read its messages was disconnected")
	}, 30*time.Second, 10*time.Millisecond)
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
	require.NoError(t, err)
	assert.Equal(t, "echo: still here", text(t, res))
}

// sharedUpstreamWithSmallBuffers starts a proxy on a shared upstream
// behind a listener whose connections have small send buffers, so that
// little data fills them; it returns the fixture and the server's URL.
func sharedUpstreamWithSmallBuffers(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{SharedUpstream: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(f.p.Handler())
	srv.Listener = smallBuffers{ln}
	srv.Start()
	t.Cleanup(func() {
		f.p.Close()
		srv.Close()
	})
	return f, srv.URL
}

// smallBuffers accepts connections with small send buffers.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

func TestAClientThatTakesNoMessageWithinTheWriteDeadlineIsDisconnectedOnASharedUpstream(t *testing.T) {
	// A deadline far shorter than the default (30 s), so that the test
	// does not wait for it; the queue never fills (fewer messages than it
	// holds): only the deadline ends the stalled client's delivery.
	proxy.SetSharedWriteDeadline(t, 200*time.Millisecond)
	f, url := sharedUpstreamWithSmallBuffers(t)
	stalledClient(t, url)

	b := httpClient(t, url, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, b.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
	require.Equal(t, 2, f.p.Sessions())
	// 2 MB of log messages to every session, in 128 messages: the stalled
	// client's socket buffers fill, its queue does not.
	res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "chatter", Arguments: map[string]any{"count": 128, "size": 16 << 10}})
	require.NoError(t, err)
	assert.Equal(t, "chattered", text(t, res))
	require.Eventually(t, func() bool {
		return strings.Contains(f.logs.String(), "a client that took no message within the write deadline was disconnected")
	}, 30*time.Second, 10*time.Millisecond, "the stalled client's delivery waits for its TCP connection")
	require.Eventually(t, func() bool { return f.p.Sessions() == 1 }, 30*time.Second, 10*time.Millisecond,
		"the stalled client's session ends")
	res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
	require.NoError(t, err)
	assert.Equal(t, "echo: still here", text(t, res))
}
