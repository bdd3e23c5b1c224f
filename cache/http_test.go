package cache_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/cachedfetch"
)

// httpFetch returns a Fetch that reports header to the cache and answers
// body, counting its calls.
func httpFetch(calls *atomic.Int32, body string, header map[string][]string) ctxfit.Fetch {
	return func(ctx context.Context) (ctxfit.Response, error) {
		calls.Add(1)
		cache.ResponseHeader(ctx, header)
		return ctxfit.Response{Body: []byte(body), ContentType: "application/json"}, nil
	}
}

func TestCachedHTTP(t *testing.T) {
	req := ctxfit.Request{Endpoint: "GET /orders", Path: "/orders"}
	get := func(t *testing.T, c *cache.Cache, r cache.HTTP, fetch ctxfit.Fetch) ctxfit.Response {
		t.Helper()
		resp, err := cachedfetch.WrapHTTP(c, req, r, fetch)(t.Context())
		require.NoError(t, err)
		return resp
	}
	t.Run("a nil cache returns the fetch", func(t *testing.T) {
		var calls atomic.Int32
		for range 2 {
			resp := get(t, nil, cache.HTTP{}, httpFetch(&calls, "x", nil))
			assert.Nil(t, resp.CacheHit)
		}
		assert.Equal(t, int32(2), calls.Load())
	})
	t.Run("a fetch that does not report its header stores nothing", func(t *testing.T) {
		c := cache.New(nil)
		defer c.Close()
		calls := 0
		fetch := func(context.Context) (ctxfit.Response, error) {
			calls++
			return ctxfit.Response{Body: []byte("x")}, nil
		}
		get(t, c, cache.HTTP{}, fetch)
		get(t, c, cache.HTTP{}, fetch)
		assert.Equal(t, 2, calls)
	})
	t.Run("DontStore wins over a header that allows storing", func(t *testing.T) {
		c := cache.New(nil)
		defer c.Close()
		var calls atomic.Int32
		fetch := func(ctx context.Context) (ctxfit.Response, error) {
			cache.DontStore(ctx)
			return httpFetch(&calls, "x", nil)(ctx)
		}
		get(t, c, cache.HTTP{}, fetch)
		get(t, c, cache.HTTP{}, fetch)
		assert.Equal(t, int32(2), calls.Load())
	})
	t.Run("a request with credentials and no subject is not looked up", func(t *testing.T) {
		c := cache.New(nil)
		defer c.Close()
		var calls atomic.Int32
		alice := cache.HTTP{Header: map[string][]string{"Authorization": {"Bearer alice"}}}
		for range 2 {
			resp := get(t, c, alice, httpFetch(&calls, "x", nil))
			assert.Nil(t, resp.CacheHit, "no cache was involved")
		}
		assert.Equal(t, int32(2), calls.Load())
		assert.Equal(t, cache.Stats{}, c.Stats())
	})
	t.Run("an empty credential header is no credential", func(t *testing.T) {
		c := cache.New(nil)
		defer c.Close()
		var calls atomic.Int32
		r := cache.HTTP{Header: map[string][]string{"Cookie": {" "}}}
		get(t, c, r, httpFetch(&calls, "x", nil))
		assert.True(t, *get(t, c, r, httpFetch(&calls, "x", nil)).CacheHit)
	})
	t.Run("the key is the raw query's parameters in any order, not the filters", func(t *testing.T) {
		c := cache.New(nil)
		defer c.Close()
		var calls atomic.Int32
		get(t, c, cache.HTTP{RawQuery: "a=1&b=%ff&b=2"}, httpFetch(&calls, "x", nil))
		get(t, c, cache.HTTP{RawQuery: "b=%FF&a=1&&b=2"}, httpFetch(&calls, "x", nil))
		assert.Equal(t, int32(1), calls.Load())
		for _, q := range []string{"a=1&b=2&b=%ff", "a=1&b=%fe&b=2", "a=1&b=%ff&b=2&c", "a=1&b=%ff&b=2&c=", "a=1&b=%ff&b=2&c=%zz"} {
			get(t, c, cache.HTTP{RawQuery: q}, httpFetch(&calls, "x", nil))
		}
		assert.Equal(t, int32(6), calls.Load(), "repeated values in another order, other bytes, a bare name, an empty value and a malformed escape are other entries")
	})
}

// Concurrent misses of one key wait for one fetch; when its response varies,
// only the waiters whose header selects the same variant share it.
func TestCachedHTTPSharesAFetchOnlyWithTheSameVariant(t *testing.T) {
	c := cache.New(nil)
	defer c.Close()
	req := ctxfit.Request{Endpoint: "GET /greeting", Path: "/greeting"}
	release := make(chan struct{})
	var calls atomic.Int32
	fetch := func(lang string) ctxfit.Fetch {
		return func(ctx context.Context) (ctxfit.Response, error) {
			if calls.Add(1) == 1 {
				<-release
			}
			cache.ResponseHeader(ctx, map[string][]string{"Vary": {"Accept-Language"}})
			return ctxfit.Response{Body: []byte(lang)}, nil
		}
	}
	lang := func(l string) cache.HTTP { return cache.HTTP{Header: map[string][]string{"Accept-Language": {l}}} }

	var wg sync.WaitGroup
	got := make([]string, 3)
	for i, l := range []string{"en", "fr", "en"} {
		if i > 0 {
			require.Eventually(t, func() bool { return calls.Load() == 1 }, 30*time.Second, time.Millisecond)
		}
		wg.Go(func() {
			resp, err := cachedfetch.WrapHTTP(c, req, lang(l), fetch(l))(t.Context())
			assert.NoError(t, err)
			got[i] = string(resp.Body)
		})
	}
	time.Sleep(20 * time.Millisecond) // let the others reach the wait; the checks hold either way
	close(release)
	wg.Wait()
	assert.Equal(t, []string{"en", "fr", "en"}, got)
	assert.Equal(t, int32(2), calls.Load(), "fr ran its own fetch; the second en shared the first")
}
