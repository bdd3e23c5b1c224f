package cache_test

import (
	"context"
	"fmt"
	"time"

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

func ExampleCache_Lookup() {
	c := cache.New(nil) // 1 hour, 1,000 entries, 64 MiB
	defer c.Close()
	fetch := func(context.Context) (cache.Entry, error) {
		fmt.Println("running the tool")
		return cache.Entry{Body: []byte(`[{"id":1}]`), ContentType: "application/json"}, nil
	}
	first := cache.Request{Endpoint: "list_bookings", Filters: []byte(`{"status":"open","city":"Oslo"}`)}
	second := cache.Request{Endpoint: "list_bookings", Filters: []byte(`{"city":"Oslo","status":"open"}`)}
	for _, req := range []cache.Request{first, second} {
		e, outcome, _ := c.Lookup(req).Do(context.Background(), fetch)
		fmt.Println(string(e.Body), "hit:", outcome.Hit())
	}
	// Output:
	// running the tool
	// [{"id":1}] hit: false
	// [{"id":1}] hit: true
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
