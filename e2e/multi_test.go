package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
	"github.com/ctxfit/ctxfit/internal/testing/redistest"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/store/redisstore"
)

const (
	oldSecret = "old-secret-0123456789abcdefghijklmnopqrstuvwxyz"
	newSecret = "new-secret-0123456789abcdefghijklmnopqrstuvwxyz"
)

// instance starts one instance of the example API behind httpfit, with cfg
// laid over the example's settings and the given store (nil: in-memory),
// and returns its base URL. A /small route answers a tiny JSON object.
func instance(t *testing.T, cfg ctxfit.Config, st store.Store) string {
	t.Helper()
	cfg.Endpoints = bookings.Config().Endpoints
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Store: st})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	mux := bookings.Handler()
	mux.HandleFunc("GET /small", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	srv := httptest.NewServer(httpfit.Middleware(g, nil)(mux))
	t.Cleanup(srv.Close)
	return srv.URL
}

// redisStore opens a Store on srv for one instance.
func redisStore(t *testing.T, srv *redistest.Server) store.Store {
	t.Helper()
	st, err := redisstore.Open(srv.URL(), &redisstore.Options{Timeout: 30 * time.Second}) // patient: not a test of a slow Redis
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, target string) reply {
	t.Helper()
	resp, err := http.Get(target)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{resp.StatusCode, resp.Header, b}
}

func withCursor(base, cursor string) string {
	if cursor == "" {
		return base
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "cursor=" + url.QueryEscape(cursor)
}

// allPages follows the bookings list's cursors, asking the instances in
// turn, and returns the IDs in order.
func allPages(t *testing.T, bases ...string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for n := 0; ; n++ {
		require.Less(t, n, 1000)
		r := get(t, withCursor(bases[n%len(bases)]+"/api/v1/bookings?limit=40", cursor))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		var p struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
			NextCursor string `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal(r.body, &p))
		for _, it := range p.Items {
			ids = append(ids, it.ID)
		}
		if cursor = p.NextCursor; cursor == "" {
			return ids
		}
	}
}

func wantIDs() []string {
	var ids []string
	for _, b := range bookings.Bookings() {
		ids = append(ids, b.ID)
	}
	return ids
}

// firstCursor returns the nextCursor of the bookings list's first page on base.
func firstCursor(t *testing.T, base string) string {
	t.Helper()
	r := get(t, base+"/api/v1/bookings?limit=40")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var p struct {
		NextCursor string `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(r.body, &p))
	require.NotEmpty(t, p.NextCursor)
	return p.NextCursor
}

func TestInstancesSharingASecretAndARedisHonourEachOthersCursors(t *testing.T) {
	srv := redistest.Start(t)
	cfg := ctxfit.Config{Secret: oldSecret}
	a, b := instance(t, cfg, redisStore(t, srv)), instance(t, cfg, redisStore(t, srv))

	t.Run("pages followed across both instances give every booking once, in order", func(t *testing.T) {
		assert.Equal(t, wantIDs(), allPages(t, a, b))
	})

	t.Run("chunks followed across both instances give the log back byte for byte", func(t *testing.T) {
		var got strings.Builder
		cursor := ""
		for n := 0; ; n++ {
			require.Less(t, n, 1000)
			r := get(t, withCursor([]string{a, b}[n%2]+"/api/v1/logs/app", cursor))
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			var ch struct {
				Content    string `json:"content"`
				NextCursor string `json:"nextCursor"`
			}
			require.NoError(t, json.Unmarshal(r.body, &ch))
			got.WriteString(ch.Content)
			if cursor = ch.NextCursor; cursor == "" {
				break
			}
		}
		want, _ := bookings.Log("app")
		assert.Equal(t, want, got.String())
	})

	t.Run("a summary's drill-down from one instance is served by the other", func(t *testing.T) {
		r := get(t, a+"/api/v1/bookings/BK00042")
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, "summary", r.header.Get("Ctxfit-Strategy"))
		var s struct {
			Meta struct {
				Details struct {
					Endpoint   string            `json:"endpoint"`
					Parameters map[string]string `json:"parameters"`
				} `json:"detailsAvailable"`
			} `json:"meta"`
		}
		require.NoError(t, json.Unmarshal(r.body, &s))
		d := s.Meta.Details
		require.NotEmpty(t, d.Endpoint, string(r.body))
		q := url.Values{}
		for k, v := range d.Parameters {
			q.Set(k, v)
		}
		r = get(t, b+d.Endpoint+"?"+q.Encode())
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(r.body, &got))
		for _, f := range strings.Split(d.Parameters["fields"], ",") {
			assert.Contains(t, got, f)
		}
	})
}

func TestARotatedSecretKeepsOldCursorsValidOnEveryInstanceAndARemovedOneIsRejected(t *testing.T) {
	srv := redistest.Start(t)
	before := instance(t, ctxfit.Config{Secret: oldSecret}, redisStore(t, srv))
	old := firstCursor(t, before)

	rotated := ctxfit.Config{Secret: newSecret, PreviousSecrets: []string{oldSecret}}
	a, b := instance(t, rotated, redisStore(t, srv)), instance(t, rotated, redisStore(t, srv))
	t.Run("a cursor signed with the previous secret is honoured by both instances", func(t *testing.T) {
		for _, base := range []string{a, b} {
			r := get(t, withCursor(base+"/api/v1/bookings?limit=40", old))
			assert.Equal(t, http.StatusOK, r.status, string(r.body))
		}
	})
	t.Run("a cursor signed with the new secret is honoured by the other instance", func(t *testing.T) {
		r := get(t, withCursor(b+"/api/v1/bookings?limit=40", firstCursor(t, a)))
		assert.Equal(t, http.StatusOK, r.status, string(r.body))
	})

	removed := ctxfit.Config{Secret: newSecret}
	c, d := instance(t, removed, redisStore(t, srv)), instance(t, removed, redisStore(t, srv))
	t.Run("a cursor signed with a removed secret is a 400 on both instances", func(t *testing.T) {
		for _, base := range []string{c, d} {
			r := get(t, withCursor(base+"/api/v1/bookings?limit=40", old))
			assert.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		}
	})
}

func TestReplayModeWorksAcrossInstancesWithNoSharedStore(t *testing.T) {
	cfg := ctxfit.Config{Secret: oldSecret, Mode: ctxfit.ModeReplay}
	a, b := instance(t, cfg, nil), instance(t, cfg, nil)
	assert.Equal(t, wantIDs(), allPages(t, a, b))
}

func TestWhenRedisGoesDownRequestsThatNeedItAre503AndTheServiceRecovers(t *testing.T) {
	srv := redistest.Start(t)
	base := instance(t, ctxfit.Config{Secret: oldSecret}, redisStore(t, srv))
	cursor := firstCursor(t, base)

	require.NoError(t, srv.Stop())
	t.Run("a response to shape is a 503 with Retry-After", func(t *testing.T) {
		r := get(t, base+"/api/v1/bookings?limit=40")
		assert.Equal(t, http.StatusServiceUnavailable, r.status, string(r.body))
		assert.NotEmpty(t, r.header.Get("Retry-After"))
		assert.Contains(t, string(r.body), "store_unavailable")
	})
	t.Run("a continuation is a 503 with Retry-After", func(t *testing.T) {
		r := get(t, withCursor(base+"/api/v1/bookings?limit=40", cursor))
		assert.Equal(t, http.StatusServiceUnavailable, r.status, string(r.body))
		assert.NotEmpty(t, r.header.Get("Retry-After"))
	})
	t.Run("a small response needs no store and passes through", func(t *testing.T) {
		r := get(t, base+"/small")
		assert.Equal(t, http.StatusOK, r.status)
		assert.JSONEq(t, `{"ok":true}`, string(r.body))
	})

	require.NoError(t, srv.Restart())
	t.Run("the service recovers by itself once Redis is back on the same port", func(t *testing.T) {
		require.Eventually(t, func() bool {
			return get(t, base+"/api/v1/bookings?limit=40").status == http.StatusOK
		}, 10*time.Second, 50*time.Millisecond)
		assert.Equal(t, wantIDs(), allPages(t, base))
	})
}
