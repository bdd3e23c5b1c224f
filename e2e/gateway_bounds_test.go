package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundsDoc describes one operation of boundsAPI; the API has a route it
// does not name (/api/items).
const boundsDoc = `{"openapi":"3.0.3","info":{"title":"bounds","version":"1"},"servers":[{"url":"/api/v1"}],
"paths":{"/items/{id}":{"get":{"operationId":"getItem",
"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],
"responses":{"200":{"description":"an item","content":{"application/json":{"schema":{"type":"object"}}}}}}}}}`

// boundsAPI is an API behind ServeMux (which cleans dot segments by
// redirecting), with items that are gzip bombs, a redirect to another
// host, an item that answers only when the request ends, and a route the
// document does not name. It records what reached the other host and the
// undocumented route.
type boundsAPI struct {
	*httptest.Server
	other                       *httptest.Server
	undocumented, otherRequests atomic.Int64
	otherHeaders                chan http.Header
	inFlight, ended             atomic.Int64
}

func newBoundsAPI(t *testing.T) *boundsAPI {
	t.Helper()
	var zb bytes.Buffer
	z := gzip.NewWriter(&zb)
	_, err := z.Write(make([]byte, 64<<20))
	require.NoError(t, err)
	require.NoError(t, z.Close())
	bomb := zb.Bytes()

	a := &boundsAPI{otherHeaders: make(chan http.Header, 100)}
	a.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.otherRequests.Add(1)
		a.otherHeaders <- r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"stolen":true}`))
	}))
	t.Cleanup(a.other.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(boundsDoc))
	})
	mux.HandleFunc("GET /api/items", func(w http.ResponseWriter, _ *http.Request) {
		a.undocumented.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"admin":"everything"}`))
	})
	mux.HandleFunc("GET /api/v1/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		switch {
		case strings.HasPrefix(id, "bomb"):
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(bomb)
		case id == "moved":
			http.Redirect(w, r, a.other.URL+"/items/moved", http.StatusFound)
		case id == "slow":
			a.inFlight.Add(1)
			<-r.Context().Done()
			a.ended.Add(1)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"id":%q}`, id)
		}
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Server.Close)
	return a
}

// listenGateway starts `ctxfit gateway --listen 127.0.0.1:0 ARGS` and
// returns the URL of its MCP endpoint.
func listenGateway(t *testing.T, args ...string) string {
	t.Helper()
	bins := binaries(t)
	cmd := exec.Command(bins["ctxfit"], append([]string{"gateway", "--listen", "127.0.0.1:0"}, args...)...)
	return startListening(t, cmd, proxyURL)
}

func httpSession(ctx context.Context, endpoint string) (*mcp.ClientSession, error) {
	return mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
}

// gatewayHealth reads the /healthz of the gateway whose MCP endpoint is
// endpoint.
func gatewayHealth(t *testing.T, endpoint string) (health struct {
	API      struct{ PeakBufferedBytes int64 }
	Sessions struct{ Current, Peak int }
}) {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(endpoint, "/mcp") + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&health))
	return health
}

func callText(t *testing.T, cs *mcp.ClientSession, id string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": id}})
	require.NoError(t, err)
	require.NotEmpty(t, res.Content)
	text, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "a text block")
	return text.Text, res.IsError
}

func TestGatewaySendsCredentialsOnlyWhereTheDocumentSays(t *testing.T) {
	bins := binaries(t)
	api := newBoundsAPI(t)
	cs, _ := connect(t, bins["ctxfit"], "gateway", "--openapi", api.URL+"/openapi.json", "--no-cache",
		"--header", "X-Api-Key:k3y", "--header", "Authorization:Bearer s3cret")

	t.Run("a redirect to another host is not followed", func(t *testing.T) {
		text, isError := callText(t, cs, "moved")
		assert.True(t, isError)
		assert.Contains(t, text, "a redirect to "+api.other.URL)
		assert.Contains(t, text, "the gateway does not follow it")
		assert.Zero(t, api.otherRequests.Load(), "the other host received nothing, so neither header")
	})
	for _, id := range []string{"..", "../../items", "..%2F..%2Fitems", "."} {
		t.Run(fmt.Sprintf("the path argument %q is refused", id), func(t *testing.T) {
			text, isError := callText(t, cs, id)
			assert.True(t, isError)
			assert.Contains(t, text, `Error parameter_invalid: path argument "id" would take GET /items/{id} out of its path`)
			assert.Zero(t, api.undocumented.Load(), "the route the document does not name was not reached")
		})
	}
	t.Run("an ordinary identifier is served", func(t *testing.T) {
		text, isError := callText(t, cs, "a.b")
		assert.False(t, isError, text)
		assert.JSONEq(t, `{"id":"a.b"}`, text)
	})
}

func TestGatewayBoundsGzipBombsCallsAndSessions(t *testing.T) {
	api := newBoundsAPI(t)
	const buffer = 4 << 20
	endpoint := listenGateway(t, "--openapi", api.URL+"/openapi.json", "--no-cache",
		"--max-response-mib", "1", "--buffer-mib", "4", "--max-calls", "16", "--max-sessions", "3")
	ctx := t.Context()
	cs, err := httpSession(ctx, endpoint)
	require.NoError(t, err)
	defer cs.Close()

	t.Run("sixteen gzip bombs at once cost at most the buffer", func(t *testing.T) {
		const calls = 16
		texts := make([]string, calls)
		errs := make([]bool, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { texts[i], errs[i] = callText(t, cs, fmt.Sprint("bomb", i)) })
		}
		wg.Wait()
		tooLarge := 0
		for i, text := range texts {
			require.True(t, errs[i], "a bomb is an error")
			switch {
			case strings.HasPrefix(text, "Error answer_too_large: GET /items/{id} answered more than 1 MiB"):
				tooLarge++
				assert.Contains(t, text, "Ask for less")
			case strings.HasPrefix(text, "Error gateway_busy:"):
				assert.Contains(t, text, "4 MiB of answers")
			default:
				t.Errorf("unexpected result: %s", text)
			}
		}
		t.Logf("%d of %d read up to --max-response-mib, the others stopped by --buffer-mib", tooLarge, calls)
		peak := gatewayHealth(t, endpoint).API.PeakBufferedBytes
		assert.Positive(t, peak)
		assert.LessOrEqual(t, peak, int64(buffer), "never more buffered at once than --buffer-mib")
		text, isError := callText(t, cs, "bomb-alone")
		assert.True(t, isError)
		assert.True(t, strings.HasPrefix(text, "Error answer_too_large:"), "the buffer is free again: one bomb alone is read up to its bound: %s", text)
		text, isError = callText(t, cs, "after")
		assert.False(t, isError, "the buffer is free again: %s", text)
	})
	t.Run("sessions beyond --max-sessions are refused", func(t *testing.T) {
		for range 2 { // with cs, three
			s, err := httpSession(ctx, endpoint)
			require.NoError(t, err)
			defer s.Close()
		}
		for range 5 {
			_, err := httpSession(ctx, endpoint)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "3 sessions are open, the most the gateway serves at once")
		}
		assert.Equal(t, 3, gatewayHealth(t, endpoint).Sessions.Peak)
	})
}

func TestGatewayEndsIdleSessionsAndCallsWhoseClientWent(t *testing.T) {
	api := newBoundsAPI(t)
	t.Run("an idle session ends and makes room", func(t *testing.T) {
		endpoint := listenGateway(t, "--openapi", api.URL+"/openapi.json", "--max-sessions", "1", "--idle-timeout", "500ms")
		// A raw initialize: a client that says nothing more (the SDK's
		// client would open a new session when its own expires).
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
		assert.Equal(t, 1, gatewayHealth(t, endpoint).Sessions.Current)

		require.Eventually(t, func() bool { return gatewayHealth(t, endpoint).Sessions.Current == 0 }, 30*time.Second, 50*time.Millisecond,
			"the idle session ended")
		again, err := httpSession(t.Context(), endpoint)
		require.NoError(t, err, "the idle session's place is free")
		again.Close()
	})
	t.Run("a stdio client that goes ends its call to the API", func(t *testing.T) {
		bins := binaries(t)
		cmd := exec.Command(bins["ctxfit"], "gateway", "--openapi", api.URL+"/openapi.json", "--timeout", "1h")
		cmd.Env = cleanEnv()
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
			Connect(t.Context(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
		require.NoError(t, err)
		go func() {
			_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": "slow"}})
		}()
		require.Eventually(t, func() bool { return api.inFlight.Load() == 1 }, 30*time.Second, 10*time.Millisecond)
		require.NoError(t, stdin.Close()) // the client goes
		require.Eventually(t, func() bool { return api.ended.Load() == 1 }, 30*time.Second, 10*time.Millisecond,
			"the API saw its request end")
	})
	t.Run("a streamable HTTP client that cancels ends its call to the API", func(t *testing.T) {
		before := api.ended.Load()
		endpoint := listenGateway(t, "--openapi", api.URL+"/openapi.json", "--timeout", "1h")
		cs, err := httpSession(t.Context(), endpoint)
		require.NoError(t, err)
		defer cs.Close()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": "slow"}})
		}()
		require.Eventually(t, func() bool { return api.inFlight.Load() == 2 }, 30*time.Second, 10*time.Millisecond)
		cancel()
		<-done
		require.Eventually(t, func() bool { return api.ended.Load() == before+1 }, 30*time.Second, 10*time.Millisecond,
			"the API saw its request end")
	})
}
