package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
)

const testSecret = "a gateway test secret of 32 bytes or more"

// newGuard returns a guard with cfg, a fixed secret and patient time limits
// (these tests are not about timing).
func newGuard(t *testing.T, cfg ctxfit.Config) *ctxfit.Guard {
	t.Helper()
	cfg.Secret = testSecret
	cfg.ShapeTimeout = ctxfit.Duration(time.Minute)
	cfg.AdmissionWait = ctxfit.Duration(time.Minute)
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

// loadShop parses testdata/shop.yaml.
func loadShop(t *testing.T) *gateway.Document {
	t.Helper()
	d, err := gateway.Load(context.Background(), "testdata/shop.yaml", nil)
	require.NoError(t, err)
	return d
}

// received is one request the fake API received.
type received struct {
	Method, Path, RawPath, Query string
	Header                       http.Header
	Body                         string
}

// fakeAPI records the requests it receives and answers with reply.
type fakeAPI struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []received
	reply func(w http.ResponseWriter, r *http.Request)
}

func newFakeAPI(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) *fakeAPI {
	t.Helper()
	f := &fakeAPI{reply: reply}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, received{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(),
			Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: string(body)})
		f.mu.Unlock()
		f.reply(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.reqs...)
}

// jsonReply answers every request with status and body as JSON.
func jsonReply(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// connect builds a gateway for doc with opts and g, and connects a client
// to it in memory.
func connect(t *testing.T, doc *gateway.Document, g *ctxfit.Guard, opts *gateway.Options) (*gateway.Gateway, *mcp.ClientSession) {
	t.Helper()
	gw, err := gateway.New(doc, g, opts)
	require.NoError(t, err)
	t.Cleanup(func() { gw.Close() })
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return gw, cs
}

// toolError returns the gateway error of an isError result.
func toolError(t *testing.T, res *mcp.CallToolResult) gateway.Error {
	t.Helper()
	require.True(t, res.IsError, "want an error result")
	b, err := json.Marshal(res.Meta["dev.ctxfit/error"])
	require.NoError(t, err)
	var e gateway.Error
	require.NoError(t, json.Unmarshal(b, &e))
	return e
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
