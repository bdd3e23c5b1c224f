package gateway_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// patience bounds the waits for something that happens in the background.
const patience = 30 * time.Second

func TestARedirectToAnotherOriginIsNotFollowedAndTheOtherHostGetsNoCredentials(t *testing.T) {
	other := newFakeAPI(t, jsonReply(200, order))
	for _, c := range []struct {
		name   string
		target string // where the API redirects
		client *http.Client
	}{
		{"another port of the same host", other.URL + "/collect", nil},
		{"another host name", strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/collect", nil},
		{"another port, with a client of the caller's", other.URL + "/collect", &http.Client{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(other.requests())
			api, _, cs := shop(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, c.target, http.StatusFound)
			}, &gateway.Options{Client: c.client, Header: http.Header{
				"Authorization": {"Bearer s3cret"}, "X-Api-Key": {"k3y"}, "Cookie": {"sid=1"},
			}})
			e := toolError(t, mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"}))
			require.Len(t, api.requests(), 1)
			assert.Len(t, other.requests(), before, "the other host received nothing")
			assert.Equal(t, gateway.CodeAPIError, e.Code)
			assert.Equal(t, http.StatusFound, e.Data.Status)
			assert.Contains(t, e.Message, "a redirect to http://")
			assert.Contains(t, e.Message, "the gateway does not follow it")
			assert.Contains(t, e.Data.Suggestion, "--base-url")
		})
	}
	t.Run("a redirect within the API's origin is followed with the credentials", func(t *testing.T) {
		api, _, cs := shop(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v2/orders/old" {
				http.Redirect(w, r, "/v2/orders/o1", http.StatusMovedPermanently)
				return
			}
			jsonReply(200, order)(w, r)
		}, &gateway.Options{Header: http.Header{"X-Api-Key": {"k3y"}}})
		res := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "old"})
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		assert.Equal(t, order, mcpfittest.Texts(t, res)[0])
		reqs := api.requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, "/v2/orders/o1", reqs[1].Path)
		assert.Equal(t, "k3y", reqs[1].Header.Get("X-Api-Key"))
	})
}

func TestAPathArgumentCannotLeaveTheOperationsPath(t *testing.T) {
	api, gw, cs := shop(t, jsonReply(200, order), &gateway.Options{CacheTTL: -1})
	for _, id := range []string{"..", ".", "", "../admin", "a/../../items", "./o1", "o1/..", `..\items`, "%2e%2e", "%2E%2E%2Fitems", "..%2f.."} {
		t.Run(fmt.Sprintf("%q is refused", id), func(t *testing.T) {
			e := toolError(t, mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": id}))
			assert.Equal(t, gateway.CodeParameterInvalid, e.Code)
			assert.Equal(t, "id", e.Data.Parameter)
			assert.Contains(t, e.Message, "would take GET /orders/{id} out of its path")
			assert.Contains(t, e.Data.Suggestion, "Give the identifier itself")
		})
	}
	assert.Empty(t, api.requests(), "nothing was sent")
	assert.Equal(t, int64(11), gw.Stats().ValidationFailures)

	for id, raw := range map[string]string{
		"...":     "/v2/orders/...",
		"a..b":    "/v2/orders/a..b",
		".hidden": "/v2/orders/.hidden",
		"v1.2":    "/v2/orders/v1.2",
		"a/b":     "/v2/orders/a%2Fb",
		"%41":     "/v2/orders/%2541",
	} {
		t.Run(fmt.Sprintf("%q is sent, escaped", id), func(t *testing.T) {
			res := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": id})
			require.False(t, res.IsError, mcpfittest.Texts(t, res))
			reqs := api.requests()
			assert.Equal(t, raw, reqs[len(reqs)-1].RawPath)
		})
	}
}

// gzipBomb returns n zero bytes, gzipped (n/1000 bytes or so).
func gzipBomb(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	_, err := z.Write(make([]byte, n))
	require.NoError(t, err)
	require.NoError(t, z.Close())
	return b.Bytes()
}

func TestGzipBombsUnderConcurrencyCostAtMostTheirBounds(t *testing.T) {
	bomb := gzipBomb(t, 16<<20)
	const maxResponse, maxBuffered, calls = 1 << 20, 4 << 20, 16
	api, gw, cs := shop(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/orders/small" {
			jsonReply(200, order)(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb)
	}, &gateway.Options{CacheTTL: -1, MaxCalls: calls, MaxResponseBytes: maxResponse, MaxBufferedBytes: maxBuffered, Timeout: time.Minute})

	results := make([]*mcp.CallToolResult, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { results[i] = mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": fmt.Sprint("o", i)}) })
	}
	wg.Wait()
	codes := map[string]int{}
	for _, res := range results {
		e := toolError(t, res)
		codes[e.Code]++
		switch e.Code {
		case gateway.CodeAnswerTooLarge:
			assert.Contains(t, e.Message, "answered more than 1 MiB, the most the gateway reads of one answer")
			assert.Contains(t, e.Data.Suggestion, "Ask for less")
		case gateway.CodeBusy:
			assert.Contains(t, e.Message, "hold 4 MiB of answers, the most the gateway buffers at once")
			assert.Contains(t, e.Data.Suggestion, "call again")
		default:
			t.Errorf("unexpected error %s: %s", e.Code, e.Message)
		}
	}
	assert.Len(t, api.requests(), calls)
	st := gw.Stats()
	assert.Positive(t, st.PeakBufferedBytes)
	assert.LessOrEqual(t, st.PeakBufferedBytes, int64(maxBuffered), "never more buffered at once than the budget")

	t.Run("the budget is given back: one bomb alone is read up to its bound", func(t *testing.T) {
		e := toolError(t, mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "alone"}))
		assert.Equal(t, gateway.CodeAnswerTooLarge, e.Code, e.Message)
	})
	t.Run("the budget is given back: a small answer is read afterwards", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "small"})
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		assert.Equal(t, order, mcpfittest.Texts(t, res)[0])
	})
	t.Run("an answer whose length is announced over the bound is not read", func(t *testing.T) {
		big := `"` + strings.Repeat("x", maxResponse) + `"`
		_, gw, cs := shop(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			jsonReply(200, big)(w, r)
		}, &gateway.Options{MaxResponseBytes: maxResponse})
		e := toolError(t, mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"}))
		assert.Equal(t, gateway.CodeAnswerTooLarge, e.Code)
		assert.Zero(t, gw.Stats().PeakBufferedBytes, "nothing buffered")
	})
}

// blockingAPI answers once release is closed, and counts the calls in
// flight, the most at once, and the calls whose request context ended
// (the gateway gave up) before they answered.
type blockingAPI struct {
	*fakeAPI
	release               chan struct{}
	inFlight, most, ended atomic.Int64
	open                  func()
}

func newBlockingAPI(t *testing.T) *blockingAPI {
	b := &blockingAPI{release: make(chan struct{})}
	b.fakeAPI = newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		n := b.inFlight.Add(1)
		defer b.inFlight.Add(-1)
		for m := b.most.Load(); n > m && !b.most.CompareAndSwap(m, n); m = b.most.Load() {
		}
		select {
		case <-b.release:
			jsonReply(200, order)(w, r)
		case <-r.Context().Done():
			b.ended.Add(1)
		}
	})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(b.release) }) })
	b.open = func() { once.Do(func() { close(b.release) }) }
	return b
}

func (b *blockingAPI) Open() { b.open() }

func TestCallsBeyondMaxCallsWaitForAFreeOne(t *testing.T) {
	api := newBlockingAPI(t)
	var logs syncbuf.Buffer
	_, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{
		BaseURL: api.URL, MaxCalls: 2, CacheTTL: -1, Timeout: time.Hour,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	const calls = 5
	results := make([]*mcp.CallToolResult, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { results[i] = mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": fmt.Sprint("o", i)}) })
	}
	require.Eventually(t, func() bool {
		return api.inFlight.Load() == 2 && strings.Count(logs.String(), "waiting for a free call") == calls-2
	}, patience, 10*time.Millisecond, "two calls reach the API, three wait")
	api.Open()
	wg.Wait()
	for _, res := range results {
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
	}
	assert.Len(t, api.requests(), calls, "every call was made in the end")
	assert.Equal(t, int64(2), api.most.Load(), "never more than two at once")

	t.Run("a call waiting for a free one stops when its client goes, and is never made", func(t *testing.T) {
		api := newBlockingAPI(t)
		var logs syncbuf.Buffer
		_, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{
			BaseURL: api.URL, MaxCalls: 1, CacheTTL: -1, Timeout: time.Hour,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		})
		var first *mcp.CallToolResult
		done := make(chan struct{})
		go func() { defer close(done); first = mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"}) }()
		require.Eventually(t, func() bool { return api.inFlight.Load() == 1 }, patience, 10*time.Millisecond)

		ctx, cancel := context.WithCancel(t.Context())
		gone := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getOrder", Arguments: map[string]any{"id": "o2"}})
			gone <- err
		}()
		require.Eventually(t, func() bool { return strings.Contains(logs.String(), "waiting for a free call") }, patience, 10*time.Millisecond)
		cancel()
		require.Error(t, <-gone)
		require.Eventually(t, func() bool { return strings.Contains(logs.String(), "no free call within the time limit") }, patience, 10*time.Millisecond)
		assert.Contains(t, logs.String(), "clientGone=true")

		api.Open()
		<-done
		require.False(t, first.IsError, mcpfittest.Texts(t, first))
		assert.Len(t, api.requests(), 1, "the call whose client went was never made")
	})
}

func TestACallStopsAtItsTimeLimitAndWhenTheClientGoes(t *testing.T) {
	t.Run("the time limit ends the API request", func(t *testing.T) {
		api := newBlockingAPI(t)
		_, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL, Timeout: 50 * time.Millisecond})
		e := toolError(t, mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"}))
		assert.Equal(t, gateway.CodeAPIUnreachable, e.Code)
		assert.Equal(t, http.StatusGatewayTimeout, e.Data.Status)
		require.Eventually(t, func() bool { return api.ended.Load() == 1 }, patience, 10*time.Millisecond, "the API saw the request end")
	})
	t.Run("a client that cancels its call ends the API request", func(t *testing.T) {
		api := newBlockingAPI(t)
		_, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL, Timeout: time.Hour})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getOrder", Arguments: map[string]any{"id": "o1"}})
			done <- err
		}()
		require.Eventually(t, func() bool { return api.inFlight.Load() == 1 }, patience, 10*time.Millisecond)
		cancel()
		require.Error(t, <-done)
		require.Eventually(t, func() bool { return api.ended.Load() == 1 }, patience, 10*time.Millisecond, "the API saw the request end")
	})
	t.Run("a client that disconnects ends the API request", func(t *testing.T) {
		api := newBlockingAPI(t)
		gw, err := gateway.New(loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL, Timeout: time.Hour})
		require.NoError(t, err)
		t.Cleanup(func() { gw.Close() })
		// Pipes as a stdio client's: the client goes when its end closes.
		toServer, fromClient := io.Pipe()
		toClient, fromServer := io.Pipe()
		ss, err := gw.Server().Connect(t.Context(), &mcp.IOTransport{Reader: toServer, Writer: fromServer}, nil)
		require.NoError(t, err)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
			&mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
		require.NoError(t, err)
		go func() {
			_, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "getOrder", Arguments: map[string]any{"id": "o1"}})
		}()
		require.Eventually(t, func() bool { return api.inFlight.Load() == 1 }, patience, 10*time.Millisecond)
		require.NoError(t, fromClient.Close())
		require.Eventually(t, func() bool { return api.ended.Load() == 1 }, patience, 10*time.Millisecond, "the API saw the request end")
		_ = toClient.Close()
		_ = ss.Wait()
	})
}

func TestSessionsBeyondMaxSessionsAreRefused(t *testing.T) {
	gw, err := gateway.New(loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: "http://127.0.0.1:1", MaxSessions: 2})
	require.NoError(t, err)
	t.Cleanup(func() { gw.Close() })
	open := func() (*mcp.ClientSession, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := gw.Server().Connect(t.Context(), st, nil)
		require.NoError(t, err)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
		if err != nil {
			ss.Close()
			return nil, err
		}
		t.Cleanup(func() { cs.Close() })
		return cs, nil
	}
	first, err := open()
	require.NoError(t, err)
	_, err = open()
	require.NoError(t, err)
	for range 3 {
		_, err = open()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "2 sessions are open, the most the gateway serves at once; close a session or try again later")
	}
	assert.Equal(t, int64(2), gw.Stats().CurrentSessions)

	require.NoError(t, first.Close())
	require.Eventually(t, func() bool { return gw.Stats().CurrentSessions == 1 }, patience, 10*time.Millisecond)
	_, err = open()
	assert.NoError(t, err, "a session that ended makes room")
	assert.Equal(t, int64(2), gw.Stats().PeakSessions)
}
