package httpfit_test

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/testing/fakeclock"
)

// cachedAPI is a handler behind the middleware with a response cache, served
// by an httptest server. The handler answers who asked, in which language,
// with which q (in hex), and sets the response headers that the query's
// "set" parameters name ("Name: value", repeatable).
type cachedAPI struct {
	srv   *httptest.Server
	clock *fakeclock.Clock
	calls atomic.Int32
}

func newCachedAPI(t *testing.T, opts *httpfit.Options) *cachedAPI {
	t.Helper()
	a := &cachedAPI{clock: fakeclock.New(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))}
	c := cache.New(&cache.Options{Now: a.clock.Now})
	t.Cleanup(func() { _ = c.Close() })
	var o httpfit.Options
	if opts != nil {
		o = *opts
	}
	o.Cache = c
	f := newFixture(t, ctxfit.Options{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := a.calls.Add(1)
		for _, set := range r.URL.Query()["set"] {
			name, value, _ := strings.Cut(set, ": ")
			w.Header().Add(name, value)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"user":%q,"lang":%q,"q":%q,"run":%d}`,
			r.Header.Get("Authorization")+r.Header.Get("Cookie"), r.Header.Get("Accept-Language"),
			hex.EncodeToString([]byte(r.URL.Query().Get("q"))), n)
	})
	a.srv = httptest.NewServer(httpfit.Middleware(f.guard, &o)(handler))
	t.Cleanup(a.srv.Close)
	return a
}

// get requests target with the header lines given ("Name: value") and
// returns the body.
func (a *cachedAPI) get(t *testing.T, target string, header ...string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", a.srv.URL+target, nil)
	require.NoError(t, err)
	for _, h := range header {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Add(name, value)
	}
	resp, err := a.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	return string(b)
}

// runs returns how often the handler ran.
func (a *cachedAPI) runs() int { return int(a.calls.Load()) }

// set returns the query parameter that makes the handler set a header.
func set(header string) string {
	return "set=" + strings.NewReplacer(" ", "%20", ",", "%2C", "=", "%3D", `"`, "%22", ":", "%3A").Replace(header)
}

func TestTheResponseCacheFollowsTheResponsesCacheControl(t *testing.T) {
	tests := []struct {
		name   string
		header string // set on the response
		stored bool
	}{
		{"a response without caching headers is stored", "X-Other: 1", true},
		{"a response with a positive max-age is stored", "Cache-Control: public, max-age=60", true},
		{"no-store is not stored", "Cache-Control: no-store", false},
		{"private is not stored", "Cache-Control: private", false},
		{"private naming fields is not stored either", `Cache-Control: private="Set-Cookie"`, false},
		{"no-cache is not stored: this cache cannot revalidate", "Cache-Control: no-cache", false},
		{"directive names are case-insensitive", "Cache-Control: No-Store", false},
		{"max-age=0 is not stored", "Cache-Control: max-age=0", false},
		{"s-maxage=0 wins over max-age in a shared cache", "Cache-Control: s-maxage=0, max-age=60", false},
		{"an invalid max-age is stale", "Cache-Control: max-age=soon", false},
		{"an Expires in the past is not stored", "Expires: Sat, 21 Nov 2026 11:00:00 GMT", false},
		{"an invalid Expires is in the past", "Expires: 0", false},
		{"an Expires in the future is stored", "Expires: Sat, 21 Nov 2026 13:00:00 GMT", true},
		{"a response that sets a cookie is not stored", "Set-Cookie: session=abc", false},
		{"Vary: * is not stored", "Vary: *", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newCachedAPI(t, nil)
			target := "/orders?" + set(tt.header)
			first := a.get(t, target)
			second := a.get(t, target)
			if tt.stored {
				assert.Equal(t, 1, a.runs())
				assert.Equal(t, first, second)
			} else {
				assert.Equal(t, 2, a.runs())
				assert.NotEqual(t, first, second)
			}
		})
	}
}

func TestTheResponseCacheKeepsAnEntryNoLongerThanItsFreshness(t *testing.T) {
	a := newCachedAPI(t, nil)
	target := "/orders?" + set("Cache-Control: max-age=60")
	a.get(t, target)
	a.clock.Advance(59 * time.Second)
	a.get(t, target)
	assert.Equal(t, 1, a.runs(), "fresh for 60 s")
	a.clock.Advance(time.Second)
	a.get(t, target)
	assert.Equal(t, 2, a.runs(), "not after, though the cache's TTL is an hour")

	target = "/orders?" + set("Cache-Control: max-age=60") + "&" + set("Age: 50")
	a.get(t, target)
	a.clock.Advance(10 * time.Second)
	a.get(t, target)
	assert.Equal(t, 4, a.runs(), "Age counts against the lifetime")
}

// The issue: with no subject, one user got another's cached orders.
func TestTheResponseCacheDoesNotServeOneUsersResponseToAnother(t *testing.T) {
	t.Run("a request with credentials and no subject neither reads nor fills the cache", func(t *testing.T) {
		for _, cred := range []string{"Authorization", "Cookie"} {
			t.Run(cred, func(t *testing.T) {
				a := newCachedAPI(t, nil)
				anonymous := a.get(t, "/orders")
				alice := a.get(t, "/orders", cred+": alice")
				bob := a.get(t, "/orders", cred+": bob")
				assert.Contains(t, alice, `"user":"alice"`)
				assert.Contains(t, bob, `"user":"bob"`)
				assert.Equal(t, 3, a.runs(), "not the anonymous entry, nor alice's")
				assert.Equal(t, anonymous, a.get(t, "/orders"), "anonymous requests still share one")
				assert.Equal(t, 3, a.runs())
			})
		}
	})
	t.Run("with a subject, each user has entries of their own", func(t *testing.T) {
		a := newCachedAPI(t, &httpfit.Options{Subject: func(r *http.Request) string { return r.Header.Get("Authorization") }})
		alice := a.get(t, "/orders", "Authorization: alice")
		assert.Equal(t, alice, a.get(t, "/orders", "Authorization: alice"))
		bob := a.get(t, "/orders", "Authorization: bob")
		assert.Contains(t, bob, `"user":"bob"`)
		assert.Equal(t, 2, a.runs())
	})
}

func TestTheResponseCacheKeysOnTheVaryFields(t *testing.T) {
	a := newCachedAPI(t, nil)
	target := "/greeting?" + set("Vary: Accept-Language, accept-encoding")
	en := a.get(t, target, "Accept-Language: en")
	fr := a.get(t, target, "Accept-Language: fr")
	none := a.get(t, target)
	empty := a.get(t, target, "Accept-Language: ")
	assert.Contains(t, en, `"lang":"en"`)
	assert.Contains(t, fr, `"lang":"fr"`)
	assert.Equal(t, 4, a.runs(), "each language, no language and an empty one are variants")

	assert.Equal(t, en, a.get(t, target, "Accept-Language: en"))
	assert.Equal(t, fr, a.get(t, target, "Accept-Language: fr"))
	assert.Equal(t, none, a.get(t, target))
	assert.Equal(t, empty, a.get(t, target, "Accept-Language: "))
	assert.Equal(t, 4, a.runs(), "each variant is served from the cache")

	a.get(t, target, "Accept-Language: en", "Accept-Encoding: br")
	assert.Equal(t, 5, a.runs(), "every field Vary names counts")
}

func TestTheResponseCacheHonoursARequestsNoStore(t *testing.T) {
	a := newCachedAPI(t, nil)
	first := a.get(t, "/orders", "Cache-Control: no-store")
	a.get(t, "/orders")
	assert.Equal(t, 2, a.runs(), "the no-store request's response was not stored")
	assert.NotEqual(t, first, a.get(t, "/orders", "Cache-Control: no-store"), "it may read a stored one")
	assert.Equal(t, 2, a.runs())
}

func TestTheResponseCacheKeysOnTheQuerysRawBytes(t *testing.T) {
	a := newCachedAPI(t, nil)
	ff := a.get(t, "/search?q=%ff")
	fe := a.get(t, "/search?q=%fe")
	assert.Contains(t, ff, `"q":"ff"`)
	assert.Contains(t, fe, `"q":"fe"`, "invalid UTF-8 does not collapse into one entry")
	assert.Equal(t, 2, a.runs())

	assert.Equal(t, ff, a.get(t, "/search?q=%FF"), "the same bytes, escaped in upper case")
	assert.Equal(t, 2, a.runs())
	a.get(t, "/search?q=a+b&n=1")
	a.get(t, "/search?n=1&q=a%20b")
	assert.Equal(t, 3, a.runs(), "the same parameters in another order and escaping")
	a.get(t, "/search?q=a+b&n=1&cursor=&limit=5")
	assert.Equal(t, 3, a.runs(), "ctxfit's own parameters are not part of the key")
}
