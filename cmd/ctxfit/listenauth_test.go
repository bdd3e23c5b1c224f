package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
)

// bearerTransport sends Authorization: Bearer token (none when "").
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b != "" {
		r.Header.Set("Authorization", "Bearer "+string(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// listenGateway runs `ctxfit gateway --listen 127.0.0.1:0 ARGS` in this
// process until the test ends and returns its base URL and its log.
func listenGateway(t *testing.T, env map[string]string, args ...string) (string, *syncbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	stderr := &syncbuf.Buffer{}
	go func() {
		done <- serveGateway(ctx, append([]string{"--listen", "127.0.0.1:0"}, args...),
			nil, io.Discard, stderr, gatewayEnv(env), func(a string) { addr <- a })
	}()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	select {
	case a := <-addr:
		return "http://" + a, stderr
	case err := <-done:
		done <- err
		t.Fatalf("the gateway stopped: %v\n%s", err, stderr)
		return "", nil
	}
}

// postAs POSTs body to url in session id with Authorization: Bearer token
// ("" for none) and returns the status and the body of the answer.
func postAs(t *testing.T, url, id, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := (&http.Client{Transport: bearerTransport(token)}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(out)
}

func TestAGatewaySessionBelongsToTheCredentialThatMadeIt(t *testing.T) {
	api, _ := exampleAPI(t)
	base, stderr := listenGateway(t, map[string]string{"GATEWAY_TOKENS": "alice-token, mallory-token"},
		"--openapi", api.URL+"/openapi.json", "--threshold", "1000", "--auth-tokens-env", "GATEWAY_TOKENS")
	ctx := context.Background()
	alice, err := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport("alice-token")}}, nil)
	require.NoError(t, err)
	defer alice.Close()
	res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "listBookings", Arguments: map[string]any{}})
	require.NoError(t, err)
	next, _ := res.Meta[mcpcore.MetaNextCursor].(string)
	require.NotEmpty(t, next, "a result long enough to have a next page")
	page2 := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ctxfit_next","arguments":{"cursor":` + strconv.Quote(next) + `}}}`

	t.Run("another valid token with Alice's session ID gets 404", func(t *testing.T) {
		status, body := postAs(t, base+"/mcp", alice.ID(), "mallory-token", page2)
		assert.Equal(t, http.StatusNotFound, status)
		assert.Equal(t, "session not found\n", body)
	})
	t.Run("a request without a known token gets 401", func(t *testing.T) {
		for _, token := range []string{"", "guess"} {
			status, body := postAs(t, base+"/mcp", alice.ID(), token, page2)
			assert.Equal(t, http.StatusUnauthorized, status)
			assert.NotContains(t, body, "alice-token")
		}
	})
	t.Run("Alice still reads her next page", func(t *testing.T) {
		res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: mcpcore.DefaultNextTool, Arguments: map[string]any{"cursor": next}})
		require.NoError(t, err)
		assert.False(t, res.IsError, "%v", res.Content)
	})
	t.Run("/healthz lists no session and no token", func(t *testing.T) {
		resp, err := http.Get(base + "/healthz")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.NotContains(t, string(body), alice.ID())
		assert.NotContains(t, string(body), "token")
	})
	assert.NotContains(t, stderr.String(), "alice-token", "the tokens are never logged")
}

func TestListenAuthFlags(t *testing.T) {
	t.Run("they need --listen", func(t *testing.T) {
		for _, args := range [][]string{
			{"--auth-tokens-env", "T", "--", "srv"},
			{"--credential-cookies", "sid", "--", "srv"},
		} {
			_, err := parseProxyFlags(args, io.Discard)
			assert.ErrorContains(t, err, "--listen", "%v", args)
		}
		_, err := parseGatewayFlags([]string{"--openapi", "x.json", "--auth-tokens-env", "T"}, io.Discard, gatewayEnv(nil))
		assert.ErrorContains(t, err, "--listen")
	})
	t.Run("the cookies are the proxy's credential cookies", func(t *testing.T) {
		f, err := parseProxyFlags([]string{"--listen", "127.0.0.1:0", "--credential-cookies", "sid, auth", "--", "srv"}, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, []string{"sid", "auth"}, f.opts.CredentialCookies)
	})
	t.Run("an empty token variable is an error that names it, not the tokens", func(t *testing.T) {
		a := listenAuth{tokensEnv: "TOKENS"}
		_, err := a.guard(http.NotFoundHandler(), func(string) string { return " , " })
		assert.ErrorContains(t, err, "--auth-tokens-env TOKENS: the environment variable is empty")
	})
	t.Run("the tokens of the variable are let through, others refused with 401", func(t *testing.T) {
		a := listenAuth{tokensEnv: "TOKENS"}
		h, err := a.guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }),
			func(string) string { return "one,two" })
		require.NoError(t, err)
		for token, want := range map[string]int{"one": http.StatusTeapot, "two": http.StatusTeapot, "three": http.StatusUnauthorized} {
			req, _ := http.NewRequest(http.MethodPost, "/mcp", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			assert.Equal(t, want, w.Code, token)
		}
	})
}

func TestGatewayCursorsAreBoundToTheCredential(t *testing.T) {
	subject := credentialSubject([]string{"sid"})
	as := func(header ...string) string {
		h := http.Header{}
		for i := 0; i+1 < len(header); i += 2 {
			h.Add(header[i], header[i+1])
		}
		return subject(context.Background(), &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: h}})
	}
	alice := as("Authorization", "Bearer alice")
	assert.Equal(t, alice, as("Authorization", "Bearer alice"), "the same credential, the same subject")
	assert.NotEqual(t, alice, as("Authorization", "Bearer mallory"))
	assert.NotEqual(t, alice, as())
	assert.NotEqual(t, as("Cookie", "sid=a"), as("Cookie", "sid=b"), "a named cookie is part of the credential")
	assert.NotContains(t, alice, "alice", "a digest, never the credential")
	assert.Empty(t, subject(context.Background(), &mcp.CallToolRequest{}), "over stdio: no session, no credential")
}
