package cachedfetch_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/cachedfetch"
)

func ExampleWrap() {
	c := cache.New(nil) // 1 hour, 1,000 entries, 64 MiB
	defer c.Close()
	fetch := func(context.Context) (ctxfit.Response, error) {
		fmt.Println("running the tool")
		return ctxfit.Response{Body: []byte(`[{"id":1}]`), ContentType: "application/json"}, nil
	}
	first := ctxfit.Request{Endpoint: "list_bookings", Filters: []byte(`{"status":"open","city":"Oslo"}`)}
	second := ctxfit.Request{Endpoint: "list_bookings", Filters: []byte(`{"city":"Oslo","status":"open"}`), Limit: 10}
	for _, req := range []ctxfit.Request{first, second} {
		// In an adapter: g.Handle(ctx, req, cachedfetch.Wrap(c, req, fetch))
		resp, _ := cachedfetch.Wrap(c, req, fetch)(context.Background())
		fmt.Println(string(resp.Body))
	}
	// Output:
	// running the tool
	// [{"id":1}]
	// [{"id":1}]
}

func ExampleWrapHTTP() {
	c := cache.New(nil)
	defer c.Close()
	// What an HTTP adapter's Fetch does: run the handler, report its
	// response header.
	handler := func(lang string) ctxfit.Fetch {
		return func(ctx context.Context) (ctxfit.Response, error) {
			fmt.Println("running the handler for", lang)
			cache.ResponseHeader(ctx, map[string][]string{"Vary": {"Accept-Language"}, "Cache-Control": {"max-age=300"}})
			return ctxfit.Response{Body: []byte(`{"greeting":"` + lang + `"}`), ContentType: "application/json"}, nil
		}
	}
	req := ctxfit.Request{Endpoint: "GET /greeting", Path: "/greeting"}
	for _, lang := range []string{"en", "fr", "en"} {
		r := cache.HTTP{Header: map[string][]string{"Accept-Language": {lang}}, RawQuery: "style=short"}
		resp, _ := cachedfetch.WrapHTTP(c, req, r, handler(lang))(context.Background())
		fmt.Println(string(resp.Body), "hit:", *resp.CacheHit)
	}
	// Output:
	// running the handler for en
	// {"greeting":"en"} hit: false
	// running the handler for fr
	// {"greeting":"fr"} hit: false
	// {"greeting":"en"} hit: true
}

func TestWrapReportsNoCacheHitOnAClosedCache(t *testing.T) {
	c := cache.New(nil)
	req := ctxfit.Request{Endpoint: "list"}
	fetch := func(context.Context) (ctxfit.Response, error) {
		return ctxfit.Response{Body: []byte(`[1]`)}, nil
	}
	resp, err := cachedfetch.Wrap(c, req, fetch)(t.Context())
	require.NoError(t, err)
	require.NotNil(t, resp.CacheHit)
	assert.False(t, *resp.CacheHit, "an open cache reports a miss")
	require.NoError(t, c.Close())
	resp, err = cachedfetch.Wrap(c, req, fetch)(t.Context())
	require.NoError(t, err)
	assert.Nil(t, resp.CacheHit, "a closed cache is not consulted")
	assert.Equal(t, "[1]", string(resp.Body))
}
