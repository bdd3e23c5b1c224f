package proxy_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/proxy"
)

// huge is a value a client may send to see it echoed: 1 MB.
var huge = strings.Repeat("v", 1<<20)

func TestWhatAStdioClientSendsIsEchoedBounded(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = f.p.ServeStdio(context.Background(), inR, outW) }()
	t.Cleanup(func() { inW.Close() })
	out := bufio.NewReader(outR)
	_, err := io.WriteString(inW, `{"jsonrpc":"`+huge+`","id":1,"method":"ping"}`+"\n")
	require.NoError(t, err)
	answer, err := out.ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, answer, `"code":-32700`)
	assert.Less(t, len(answer), 2048, "the error repeats at most a bounded part of the value")
	assert.Less(t, len(f.logs.String()), 8192, "and so does the log")
}

func TestWhatAnHTTPClientSendsIsEchoedBounded(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{}, proxy.Options{})
	url := serveHTTP(t, f.p)
	post := func(t *testing.T, session, body string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	t.Run("a jsonrpc value that starts no session", func(t *testing.T) {
		_, body := post(t, "", `{"jsonrpc":"`+huge+`","id":1,"method":"initialize"}`)
		assert.Less(t, len(body), 2048)
	})
	t.Run("a malformed message in a session", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		session := resp.Header.Get("Mcp-Session-Id")
		require.NotEmpty(t, session)
		status, body := post(t, session, `{"jsonrpc":"`+huge+`","id":2,"method":"ping"}`)
		assert.GreaterOrEqual(t, status, 400)
		assert.Less(t, len(body), 2048)
	})
}
