package cache_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ctxfit/ctxfit/cache"
)

var sizes = []int{1 << 10, 64 << 10, 1 << 20}

func BenchmarkCacheGet(b *testing.B) {
	ctx := context.Background()
	for _, size := range sizes {
		b.Run(fmt.Sprintf("body=%dB", size), func(b *testing.B) {
			c := cache.New(&cache.Options{MaxBytes: -1})
			defer c.Close()
			keys := make([]string, 1000)
			for i := range keys {
				keys[i] = fmt.Sprintf("key-%d", i)
				_ = c.Put(ctx, keys[i], cache.Entry{Body: bytes.Repeat([]byte("x"), size)})
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				if _, ok := c.Get(ctx, keys[i%len(keys)]); !ok {
					b.Fatal("miss")
				}
				i++
			}
		})
	}
}

func BenchmarkCachePut(b *testing.B) {
	ctx := context.Background()
	for _, size := range sizes {
		b.Run(fmt.Sprintf("body=%dB", size), func(b *testing.B) {
			c := cache.New(&cache.Options{MaxBytes: -1})
			defer c.Close()
			e := cache.Entry{Body: bytes.Repeat([]byte("x"), size)}
			keys := make([]string, 2000) // twice the capacity: every Put evicts
			for i := range keys {
				keys[i] = fmt.Sprintf("key-%d", i)
			}
			b.ReportAllocs()
			b.SetBytes(int64(size))
			i := 0
			for b.Loop() {
				_ = c.Put(ctx, keys[i%len(keys)], e)
				i++
			}
		})
	}
}

func BenchmarkMemoryGetParallel(b *testing.B) {
	ctx := context.Background()
	m := cache.NewMemory(nil)
	for i := range 1000 {
		_ = m.Set(ctx, fmt.Sprint(i), cache.Entry{Body: []byte("v")}, time.Hour)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			_, _, _ = m.Get(ctx, fmt.Sprint(i%1000))
			i++
		}
	})
}

func BenchmarkKey(b *testing.B) {
	for _, n := range []int{0, 4, 32} {
		b.Run(fmt.Sprintf("filters=%d", n), func(b *testing.B) {
			f := make(map[string]string, n)
			for i := range n {
				f[fmt.Sprintf("param%d", i)] = "value"
			}
			raw, _ := json.Marshal(f)
			req := cache.Request{Endpoint: "GET /items", Path: "/items", Subject: "tenant", Filters: raw}
			b.ReportAllocs()
			for b.Loop() {
				_ = cache.Key(req)
			}
		})
	}
}
