package cache_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
)

func ExampleNew() {
	c := cache.New(&cache.Options{TTL: 10 * time.Minute, MaxEntries: 500})
	defer c.Close()
	ctx := context.Background()
	fetch := func(context.Context) (cache.Entry, error) {
		fmt.Println("calling the upstream")
		return cache.Entry{Body: []byte(`{"ok":true}`), ContentType: "application/json"}, nil
	}
	for range 2 {
		e, hit, _ := c.Do(ctx, "weather:oslo", fetch)
		fmt.Println(string(e.Body), "hit:", hit)
	}
	fmt.Printf("%+v\n", c.Stats())
	// Output:
	// calling the upstream
	// {"ok":true} hit: false
	// {"ok":true} hit: true
	// {Hits:1 Shared:0 Misses:1 BackendErrors:0}
}

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
		// In an adapter: g.Handle(ctx, req, cache.Wrap(c, req, fetch))
		resp, _ := cache.Wrap(c, req, fetch)(context.Background())
		fmt.Println(string(resp.Body))
	}
	// Output:
	// running the tool
	// [{"id":1}]
	// [{"id":1}]
}

func ExampleNewMemory() {
	ctx := context.Background()
	m := cache.NewMemory(&cache.MemoryOptions{MaxEntries: 2})
	for _, k := range []string{"a", "b", "c"} {
		_ = m.Set(ctx, k, cache.Entry{Body: []byte(k)}, time.Hour)
	}
	_, ok, _ := m.Get(ctx, "a")
	fmt.Println("a kept:", ok, "entries:", m.Len())
	// Output:
	// a kept: false entries: 2
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
		resp, _ := cache.WrapHTTP(c, req, r, handler(lang))(context.Background())
		fmt.Println(string(resp.Body), "hit:", *resp.CacheHit)
	}
	// Output:
	// running the handler for en
	// {"greeting":"en"} hit: false
	// running the handler for fr
	// {"greeting":"fr"} hit: false
	// {"greeting":"en"} hit: true
}
