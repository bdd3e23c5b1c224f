package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ctxfit/ctxfit/store"
)

// benchSizes are snapshot sizes: a small page, a typical response, a large one.
var benchSizes = []int{256, 16 << 10, 1 << 20}

// benchIDs returns n snapshot IDs.
func benchIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = store.NewID()
	}
	return ids
}

func BenchmarkMemoryPut(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			m := store.NewMemory(nil)
			b.Cleanup(func() { m.Close() })
			ids := benchIDs(1000) // overwrites, once the store holds them all
			data := make([]byte, size)
			ctx := b.Context()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := m.Put(ctx, ids[i%len(ids)], data, time.Minute); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkMemoryPutEvicting(b *testing.B) {
	// Every Put of a new ID evicts a claim of the heaviest subject, closest
	// to expiry.
	for _, subjects := range []int{1, 100} {
		b.Run(fmt.Sprintf("%d subjects", subjects), func(b *testing.B) {
			m := store.NewMemory(&store.MemoryOptions{MaxItems: 1000})
			b.Cleanup(func() { m.Close() })
			ids := benchIDs(10000)
			ctxs := make([]context.Context, subjects)
			for i := range ctxs {
				ctxs[i] = store.WithSubject(b.Context(), fmt.Sprint(i))
			}
			data := make([]byte, 256)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := m.Put(ctxs[i%subjects], ids[i%len(ids)], data, time.Duration(1+i%60)*time.Minute); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkMemoryGet(b *testing.B) {
	m := store.NewMemory(nil)
	b.Cleanup(func() { m.Close() })
	ids := benchIDs(1000)
	ctx := b.Context()
	for _, id := range ids {
		if err := m.Put(ctx, id, make([]byte, 16<<10), time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok, err := m.Get(ctx, ids[i%len(ids)]); err != nil || !ok {
			b.Fatal(ok, err)
		}
		i++
	}
}

func BenchmarkMemoryParallel(b *testing.B) {
	for _, c := range []struct {
		name     string
		putEvery int // one Put every putEvery operations; 0 means none
	}{
		{"get", 0},
		{"get with 10% put", 10},
		{"put", 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := store.NewMemory(nil)
			b.Cleanup(func() { m.Close() })
			ids := benchIDs(1000)
			data := make([]byte, 1<<10)
			ctx := b.Context()
			for _, id := range ids {
				if err := m.Put(ctx, id, data, time.Hour); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					id := ids[i%len(ids)]
					if c.putEvery > 0 && i%c.putEvery == 0 {
						if err := m.Put(ctx, id, data, time.Hour); err != nil {
							b.Error(err)
							return
						}
					} else if _, _, err := m.Get(ctx, id); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}
