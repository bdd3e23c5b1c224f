package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chatterServerEnv makes the test binary an MCP server on stdio (see
// TestMain) whose "chatter" tool logs count messages of size bytes to its
// client before it answers, and whose "echo" tool answers at once.
const chatterServerEnv = "E2E_CHATTER_SERVER"

type chatterInput struct {
	Count int `json:"count"`
	Size  int `json:"size"`
}

type echoInput struct {
	Text string `json:"text"`
}

func runChatterServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "chatter", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "chatter", Description: "Log count messages of size bytes each, then answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, in chatterInput) (*mcp.CallToolResult, any, error) {
			data := strings.Repeat("x", in.Size)
			for range in.Count {
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: data}); err != nil {
					return nil, nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "chattered"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Answer the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoInput) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// TestASlowReaderSlowsOnlyItselfBehindASharedUpstream runs the built
// `ctxfit proxy --listen --shared-upstream` in front of a server that
// sends log messages to every session. One client opens its event stream
// and never reads it; the other's calls still answer, and it gets every
// message (issue 25: before, the shared upstream's reader waited on the
// client that did not read, and every other session's calls timed out).
func TestASlowReaderSlowsOnlyItselfBehindASharedUpstream(t *testing.T) {
	bins := binaries(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	url := startListening(t, exec.CommandContext(ctx, bins["ctxfit"], "proxy", "--listen", "127.0.0.1:0", "--shared-upstream",
		"--call-timeout", "2m", "--", "env", chatterServerEnv+"=1", exe), proxyURL)

	stallEventStream(t, url)

	var logged atomic.Int64
	reader, err := mcp.NewClient(&mcp.Implementation{Name: "reader", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { logged.Add(1) },
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	defer reader.Close()
	require.NoError(t, reader.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))

	// 16 MB of messages to every session: far more than the kernel's
	// buffers hold for the client that does not read.
	const count = 256
	call := func(name string, args map[string]any) string {
		t.Helper()
		res, err := reader.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err, "the call waited for a client that does not read")
		require.NotEmpty(t, res.Content)
		text, _ := res.Content[0].(*mcp.TextContent)
		require.NotNil(t, text)
		return text.Text
	}
	assert.Equal(t, "chattered", call("chatter", map[string]any{"count": count, "size": 64 << 10}))
	assert.Equal(t, "echo: still here", call("echo", map[string]any{"text": "still here"}))
	require.Eventually(t, func() bool { return logged.Load() >= count }, time.Minute, 10*time.Millisecond,
		"the reading client gets every message")

	// More messages than a session's queue holds: the client that does not
	// read is let go, and the other goes on.
	assert.Equal(t, "chattered", call("chatter", map[string]any{"count": 1100, "size": 16}))
	assert.Equal(t, "echo: again", call("echo", map[string]any{"text": "again"}))
}

// stallEventStream opens a session at url and its event stream, with a
// small receive buffer, and never reads it; the stream closes when the
// test ends.
func stallEventStream(t *testing.T, url string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10)
		}
		return c, err
	}}}
	post := func(session, body string) string {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
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
		return resp.Header.Get("Mcp-Session-Id")
	}
	session := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stalled","version":"1"}}}`)
	require.NotEmpty(t, session)
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(session, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
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
