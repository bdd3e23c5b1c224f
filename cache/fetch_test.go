package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/cachedfetch"
	"github.com/ctxfit/ctxfit/telemetry"
)

func TestCached(t *testing.T) {
	req := ctxfit.Request{Endpoint: "search", Path: "search", Filters: json.RawMessage(`{"q":"x","n":1}`)}
	reordered := req
	reordered.Filters = json.RawMessage(`{"n":1,"q":"x"}`)
	reordered.Cursor, reordered.Limit, reordered.Fields, reordered.StartLine, reordered.EndLine, reordered.RequestID = "ignored", 3, "all", 1, 9, "req-2"
	other := req
	other.Subject = "someone else"
	errUpstream := errors.New("upstream down")
	tests := []struct {
		name      string
		second    ctxfit.Request
		resp      ctxfit.Response
		err       error
		cacheable func(cache.Request, cache.Entry) bool
		wantCalls int
	}{
		{"the same request is served from the cache", req, ctxfit.Response{Body: []byte(`[1]`), ContentType: "application/json"}, nil, nil, 1},
		{"reordered parameters and ctxfit's own are served from the cache", reordered, ctxfit.Response{Body: []byte(`[1]`)}, nil, nil, 1},
		{"another subject runs the upstream", other, ctxfit.Response{Body: []byte(`[1]`)}, nil, nil, 2},
		{"an error is returned as it is and not stored", req, ctxfit.Response{}, errUpstream, nil, 2},
		{"an empty body is not stored by default", req, ctxfit.Response{ContentType: "application/json"}, nil, nil, 2},
		{"Cacheable decides what is stored", req, ctxfit.Response{Body: []byte(`[1]`)}, nil,
			func(cache.Request, cache.Entry) bool { return false }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := cache.New(&cache.Options{Cacheable: tt.cacheable})
			defer c.Close()
			calls := 0
			fetch := func(context.Context) (ctxfit.Response, error) {
				calls++
				return tt.resp, tt.err
			}
			for _, r := range []ctxfit.Request{req, tt.second} {
				got, err := cachedfetch.Wrap(c, r, fetch)(ctx)
				if tt.err != nil {
					require.ErrorIs(t, err, tt.err)
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, string(tt.resp.Body), string(got.Body))
				assert.Equal(t, tt.resp.ContentType, got.ContentType)
			}
			assert.Equal(t, tt.wantCalls, calls)
		})
	}
}

func TestCachedWithNilCacheReturnsTheFetch(t *testing.T) {
	calls := 0
	fetch := ctxfit.Fetch(func(context.Context) (ctxfit.Response, error) {
		calls++
		return ctxfit.Response{Body: []byte("x")}, nil
	})
	w := cachedfetch.Wrap(nil, ctxfit.Request{}, fetch)
	for range 2 {
		_, err := w(context.Background())
		require.NoError(t, err)
	}
	assert.Equal(t, 2, calls)
}

func TestCachedServesEveryPageOfACachedResponse(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "0123456789abcdef0123456789abcdef", Threshold: 200, PageSize: 5}})
	require.NoError(t, err)
	defer g.Close()
	c := cache.New(nil)
	defer c.Close()
	items := make([]map[string]any, 200)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": "item"}
	}
	body, err := json.Marshal(items)
	require.NoError(t, err)
	calls := 0
	fetch := func(context.Context) (ctxfit.Response, error) {
		calls++
		return ctxfit.Response{Body: body, ContentType: "application/json"}, nil
	}
	req := ctxfit.Request{Endpoint: "GET /items", Path: "/items"}
	first, err := g.Handle(context.Background(), req, cachedfetch.Wrap(c, req, fetch))
	require.NoError(t, err)
	require.True(t, first.Shaped, "the response is over budget and paged")
	again, err := g.Handle(context.Background(), req, cachedfetch.Wrap(c, req, fetch))
	require.NoError(t, err)
	assert.Equal(t, string(first.Body[:40]), string(again.Body[:40]), "a hit is shaped like the miss")
	assert.Equal(t, 1, calls, "the second request is served from the cache")
	assert.Equal(t, cache.Stats{Hits: 1, Misses: 1}, c.Stats())
}

func TestTheGuardRecordsCacheHitsAndMisses(t *testing.T) {
	var records []telemetry.Record
	var mu sync.Mutex
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: strings.Repeat("s", 32)},
		Sink: telemetry.SinkFunc(func(_ context.Context, r telemetry.Record) error {
			mu.Lock()
			defer mu.Unlock()
			records = append(records, r)
			return nil
		})})
	require.NoError(t, err)
	c := cache.New(nil)
	defer c.Close()
	req := ctxfit.Request{Endpoint: "list"}
	fetch := func(context.Context) (ctxfit.Response, error) {
		return ctxfit.Response{Body: []byte(`[1,2,3]`), ContentType: "application/json"}, nil
	}
	for range 2 {
		_, err := g.Handle(context.Background(), req, cachedfetch.Wrap(c, req, fetch))
		require.NoError(t, err)
	}
	require.NoError(t, g.Close()) // flushes telemetry
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, records, 2)
	require.NotNil(t, records[0].CacheHit)
	require.NotNil(t, records[1].CacheHit)
	assert.False(t, *records[0].CacheHit, "the first request is a miss")
	assert.True(t, *records[1].CacheHit, "the second is served from the cache")
}
