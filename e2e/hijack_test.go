package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// bearer is an http.RoundTripper that sends Authorization: Bearer token.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs connects to the streamable HTTP server at url with
// Authorization: Bearer token.
func connectAs(t *testing.T, ctx context.Context, url, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: token, Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(token)}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// hijack sends a JSON-RPC request (or, with method GET or DELETE, no body)
// to url in session id as token and returns the status and body.
func hijack(t *testing.T, url, method, id, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	client := &http.Client{Transport: bearer(token), Timeout: time.Minute}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	return resp.StatusCode, string(out)
}

func rpc(id int, method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// healthz returns the body of base's /healthz.
func healthz(t *testing.T, mcpURL string) string {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(mcpURL, "/mcp") + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	return string(body)
}

// TestAnotherCredentialCannotUseASession is the hijack of issue 25 against
// the built binaries: Mallory, with Alice's session ID (which /healthz
// used to list), asks for Alice's next page, her held-back original and a
// call in her upstream session, and gets 404 for each, as for a session
// that does not exist; Alice goes on.
func TestAnotherCredentialCannotUseASession(t *testing.T) {
	bins := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	servers := map[string]func() string{
		"the proxy": func() string {
			return startListening(t, exec.CommandContext(ctx, bins["ctxfit"], "proxy", "--listen", "127.0.0.1:0", "--", bins["mcpserver"], "-raw"), proxyURL)
		},
		"the gateway": func() string {
			base := startHTTPServer(t)
			return startListening(t, exec.CommandContext(ctx, bins["ctxfit"], "gateway", "--listen", "127.0.0.1:0",
				"--openapi", base+"/openapi.json", "--threshold", "1000"), proxyURL)
		},
	}
	calls := map[string]struct {
		tool string
		args map[string]any
	}{
		"the proxy":   {"list_bookings", map[string]any{"status": "cancelled"}},
		"the gateway": {"listBookings", map[string]any{}},
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			url := start()
			alice := connectAs(t, ctx, url, "alice")
			c := calls[name]
			first, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			require.NoError(t, err)
			require.False(t, first.IsError, "%v", first.Content)
			next, _ := first.Meta[mcpcore.MetaNextCursor].(string)
			require.NotEmpty(t, next, "a result of several pages")

			t.Run("/healthz lists no session ID", func(t *testing.T) {
				assert.NotContains(t, healthz(t, url), alice.ID())
			})
			attempts := map[string]struct{ method, body string }{
				"her next page": {http.MethodPost, rpc(90, "tools/call",
					map[string]any{"name": mcpcore.DefaultNextTool, "arguments": map[string]any{"cursor": next}})},
				"a call in her upstream session": {http.MethodPost, rpc(91, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})},
				"her stream":                     {http.MethodGet, ""},
				"the end of her session":         {http.MethodDelete, ""},
			}
			if link := mcpfittest.Original(first); link != nil {
				attempts["her held-back original"] = struct{ method, body string }{http.MethodPost, rpc(92, "resources/read", map[string]any{"uri": link.URI})}
			}
			for what, a := range attempts {
				t.Run("Mallory asking for "+what+" with Alice's session ID gets 404", func(t *testing.T) {
					status, body := hijack(t, url, a.method, alice.ID(), "mallory", a.body)
					assert.Equal(t, http.StatusNotFound, status, "%.300s", body)
					assert.NotContains(t, body, "booking")
				})
			}
			t.Run("Alice reads her next page", func(t *testing.T) {
				res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: mcpcore.DefaultNextTool, Arguments: map[string]any{"cursor": next}})
				require.NoError(t, err)
				assert.False(t, res.IsError, "%v", res.Content)
			})
		})
	}
}

// TestTheProxysHealthReportRedactsTheUpstreamURL: /healthz names the
// --upstream-url without its user, password or query values.
func TestTheProxysHealthReportRedactsTheUpstreamURL(t *testing.T) {
	bins := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := startListening(t, exec.CommandContext(ctx, bins["ctxfit"], "proxy", "--listen", "127.0.0.1:0",
		"--upstream-url", "http://alice:hunter2@127.0.0.1:9/mcp?token=s3cret", "--header", "Authorization:Bearer h3ader"), proxyURL)
	body := healthz(t, url)
	for _, secret := range []string{"hunter2", "s3cret", "h3ader", "alice"} {
		assert.NotContains(t, body, secret)
	}
	var h struct{ Upstream string }
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	assert.Equal(t, "streamable-http: http://redacted@127.0.0.1:9/mcp?token=redacted", h.Upstream)
}

// TestAnotherCredentialCannotContinueAnAgentSession: examples/agent's
// sessions (X-Session-ID) belong to the credential that made them too.
func TestAnotherCredentialCannotContinueAnAgentSession(t *testing.T) {
	f := startScriptedAgent(t)
	askAs := func(token, session string) (int, string, string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"model": "scripted", "messages": []map[string]any{{"role": "user", "content": "hello"}}})
		req, err := http.NewRequest(http.MethodPost, f.url+"/v1/chat/completions", strings.NewReader(string(body)))
		require.NoError(t, err)
		if session != "" {
			req.Header.Set(agentSessionHeader, session)
		}
		resp, err := (&http.Client{Transport: bearer(token), Timeout: time.Minute}).Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header.Get(agentSessionHeader), string(out)
	}
	status, session, body := askAs("alice", "")
	require.Equal(t, http.StatusOK, status, body)
	require.NotEmpty(t, session)

	status, _, body = askAs("mallory", session)
	assert.Equal(t, http.StatusNotFound, status, body)
	assert.Contains(t, body, "session_not_found")
	status, _, body = askAs("alice", session)
	assert.Equal(t, http.StatusOK, status, "Alice goes on: %s", body)
}
