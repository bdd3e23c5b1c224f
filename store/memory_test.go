package store_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/testing/fakeclock"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/store/storetest"
)

// Tests here must not call t.Parallel at the top level: the goroutine leak
// tests count every sweeper in the process.

func TestMemoryConformance(t *testing.T) {
	t.Run("default options", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
			return store.NewMemory(&store.MemoryOptions{Now: now})
		})
	})
	t.Run("with a sweeper running every millisecond", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
			return store.NewMemory(&store.MemoryOptions{Now: now, SweepInterval: time.Millisecond})
		})
	})
	t.Run("with the real clock", func(t *testing.T) {
		storetest.RunWithOptions(t, func(t *testing.T, now func() time.Time) store.Store {
			return store.NewMemory(&store.MemoryOptions{SweepInterval: 10 * time.Millisecond})
		}, &storetest.RunOptions{RealClock: true, ShortTTL: 50 * time.Millisecond})
	})
}

// clock is a fake clock for the tests; safe for concurrent use.
type clock = fakeclock.Clock

func newClock() *clock { return fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) }

// newMemory returns a Memory on a fake clock, closed at the end of the test.
func newMemory(t *testing.T, opts store.MemoryOptions) (*store.Memory, *clock) {
	t.Helper()
	clk := newClock()
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	m := store.NewMemory(&opts)
	t.Cleanup(func() { assert.NoError(t, m.Close()) })
	return m, clk
}

// put is a step of a bounds case: Put id with size bytes for ttl.
type put struct {
	id   string
	size int
	ttl  time.Duration
}

func TestMemoryBounds(t *testing.T) {
	cases := []struct {
		name      string
		opts      store.MemoryOptions
		puts      []put
		advance   time.Duration // before the last put
		wantIDs   []string
		wantBytes int64
	}{
		{
			name:      "MaxItems evicts the entry closest to expiry",
			opts:      store.MemoryOptions{MaxItems: 3},
			puts:      []put{{"a", 1, 3 * time.Minute}, {"b", 1, time.Minute}, {"c", 1, 2 * time.Minute}, {"d", 1, 5 * time.Minute}},
			wantIDs:   []string{"a", "c", "d"},
			wantBytes: 3,
		},
		{
			name:      "MaxItems evicts the older of two entries with the same expiry",
			opts:      store.MemoryOptions{MaxItems: 2},
			puts:      []put{{"a", 1, time.Minute}, {"b", 1, time.Minute}, {"c", 1, time.Minute}},
			wantIDs:   []string{"b", "c"},
			wantBytes: 2,
		},
		{
			name:      "MaxItems evicts the new entry's elders even with a shorter TTL than theirs",
			opts:      store.MemoryOptions{MaxItems: 2},
			puts:      []put{{"a", 1, time.Hour}, {"b", 1, time.Hour}, {"c", 1, time.Second}},
			wantIDs:   []string{"b", "c"},
			wantBytes: 2,
		},
		{
			name:      "an expired entry is evicted before live ones",
			opts:      store.MemoryOptions{MaxItems: 2},
			puts:      []put{{"a", 1, time.Hour}, {"b", 1, time.Minute}, {"c", 1, time.Hour}},
			advance:   2 * time.Minute,
			wantIDs:   []string{"a", "c"},
			wantBytes: 2,
		},
		{
			name:      "MaxBytes evicts the entry closest to expiry",
			opts:      store.MemoryOptions{MaxBytes: 10},
			puts:      []put{{"a", 4, 2 * time.Minute}, {"b", 4, time.Minute}, {"c", 4, 3 * time.Minute}},
			wantIDs:   []string{"a", "c"},
			wantBytes: 8,
		},
		{
			name:      "MaxBytes evicts as many entries as it takes",
			opts:      store.MemoryOptions{MaxBytes: 10},
			puts:      []put{{"a", 3, 2 * time.Minute}, {"b", 3, time.Minute}, {"c", 3, 3 * time.Minute}, {"d", 9, time.Minute}},
			wantIDs:   []string{"d"},
			wantBytes: 9,
		},
		{
			name:      "data of exactly MaxBytes fits",
			opts:      store.MemoryOptions{MaxBytes: 10},
			puts:      []put{{"a", 3, time.Minute}, {"b", 10, time.Minute}},
			wantIDs:   []string{"b"},
			wantBytes: 10,
		},
		{
			name:      "an overwrite at MaxItems evicts nothing",
			opts:      store.MemoryOptions{MaxItems: 2},
			puts:      []put{{"a", 1, time.Minute}, {"b", 1, time.Hour}, {"a", 2, time.Minute}},
			wantIDs:   []string{"a", "b"},
			wantBytes: 3,
		},
		{
			name:      "an overwrite frees its old bytes before evicting others",
			opts:      store.MemoryOptions{MaxBytes: 10},
			puts:      []put{{"a", 6, time.Minute}, {"b", 4, time.Hour}, {"a", 6, time.Minute}},
			wantIDs:   []string{"a", "b"},
			wantBytes: 10,
		},
		{
			name:      "the entry being put is never evicted, even if it expires first",
			opts:      store.MemoryOptions{MaxItems: 1},
			puts:      []put{{"a", 1, time.Hour}, {"b", 1, time.Nanosecond}},
			wantIDs:   []string{"b"},
			wantBytes: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, clk := newMemory(t, c.opts)
			for i, p := range c.puts {
				if i == len(c.puts)-1 {
					clk.Advance(c.advance)
				}
				require.NoError(t, m.Put(t.Context(), p.id, bytes.Repeat([]byte{'x'}, p.size), p.ttl))
			}
			assert.Equal(t, len(c.wantIDs), m.Len(), "Len")
			assert.Equal(t, c.wantBytes, m.Bytes(), "Bytes")
			var held []string
			for _, id := range []string{"a", "b", "c", "d"} {
				if _, ok, err := m.Get(t.Context(), id); assert.NoError(t, err) && ok {
					held = append(held, id)
				}
			}
			assert.Equal(t, c.wantIDs, held)
		})
	}
}

func TestMemoryTooLarge(t *testing.T) {
	t.Run("data larger than MaxBytes is refused with ErrTooLarge", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{MaxBytes: 10})
		require.NoError(t, m.Put(t.Context(), "other", []byte("12345"), time.Minute))
		err := m.Put(t.Context(), "big", make([]byte, 11), time.Minute)
		require.ErrorIs(t, err, store.ErrTooLarge)
		assert.True(t, strings.HasPrefix(err.Error(), "store: "), "message starts with the package name: %q", err)
		assert.Contains(t, err.Error(), "11 bytes")
		_, ok, err := m.Get(t.Context(), "big")
		require.NoError(t, err)
		assert.False(t, ok, "the refused entry is not stored")
		_, ok, err = m.Get(t.Context(), "other")
		require.NoError(t, err)
		assert.True(t, ok, "nothing is evicted for a refused entry")
		assert.Equal(t, int64(5), m.Bytes())
	})
	t.Run("a refused overwrite leaves the previous entry in place", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{MaxBytes: 10})
		require.NoError(t, m.Put(t.Context(), "id", []byte("small"), time.Minute))
		require.ErrorIs(t, m.Put(t.Context(), "id", make([]byte, 100), time.Minute), store.ErrTooLarge)
		got, ok, err := m.Get(t.Context(), "id")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "small", string(got))
		assert.Equal(t, 1, m.Len())
		assert.Equal(t, int64(5), m.Bytes())
	})
	t.Run("after Close an oversized Put reports ErrClosed", func(t *testing.T) {
		m := store.NewMemory(&store.MemoryOptions{MaxBytes: 10})
		require.NoError(t, m.Close())
		assert.ErrorIs(t, m.Put(t.Context(), "id", make([]byte, 11), time.Minute), store.ErrClosed)
	})
}

func TestMemoryExpiry(t *testing.T) {
	t.Run("an entry expires exactly ttl after its Put", func(t *testing.T) {
		m, clk := newMemory(t, store.MemoryOptions{})
		require.NoError(t, m.Put(t.Context(), "id", []byte("v"), time.Minute))
		clk.Advance(time.Minute - time.Nanosecond)
		_, ok, err := m.Get(t.Context(), "id")
		require.NoError(t, err)
		assert.True(t, ok, "present a nanosecond before")
		clk.Advance(time.Nanosecond)
		_, ok, err = m.Get(t.Context(), "id")
		require.NoError(t, err)
		assert.False(t, ok, "gone at ttl")
	})
	t.Run("Get of an expired entry removes it", func(t *testing.T) {
		m, clk := newMemory(t, store.MemoryOptions{})
		require.NoError(t, m.Put(t.Context(), "short", []byte("123"), time.Minute))
		require.NoError(t, m.Put(t.Context(), "long", []byte("4567"), time.Hour))
		clk.Advance(2 * time.Minute)
		assert.Equal(t, 2, m.Len(), "expired entries are held until removed")
		_, ok, err := m.Get(t.Context(), "short")
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, 1, m.Len())
		assert.Equal(t, int64(4), m.Bytes())
	})
	for _, ttl := range []time.Duration{0, -time.Second} {
		t.Run(fmt.Sprintf("a Put with ttl %v removes the entry and stores nothing", ttl), func(t *testing.T) {
			m, _ := newMemory(t, store.MemoryOptions{})
			require.NoError(t, m.Put(t.Context(), "id", []byte("v"), time.Minute))
			require.NoError(t, m.Put(t.Context(), "id", []byte("v2"), ttl))
			require.NoError(t, m.Put(t.Context(), "new", []byte("v3"), ttl))
			for _, id := range []string{"id", "new"} {
				_, ok, err := m.Get(t.Context(), id)
				require.NoError(t, err)
				assert.False(t, ok, id)
			}
			assert.Zero(t, m.Len())
			assert.Zero(t, m.Bytes())
		})
	}
}

func TestMemoryAccounting(t *testing.T) {
	m, clk := newMemory(t, store.MemoryOptions{MaxItems: 3})
	ctx := t.Context()
	check := func(step string, wantLen int, wantBytes int64) {
		t.Helper()
		assert.Equal(t, wantLen, m.Len(), "Len after %s", step)
		assert.Equal(t, wantBytes, m.Bytes(), "Bytes after %s", step)
	}
	check("NewMemory", 0, 0)
	require.NoError(t, m.Put(ctx, "a", make([]byte, 10), time.Minute))
	require.NoError(t, m.Put(ctx, "b", make([]byte, 20), 2*time.Minute))
	check("two puts", 2, 30)
	require.NoError(t, m.Put(ctx, "a", make([]byte, 15), time.Minute))
	check("a larger overwrite", 2, 35)
	require.NoError(t, m.Put(ctx, "b", make([]byte, 5), 2*time.Minute))
	check("a smaller overwrite", 2, 20)
	require.NoError(t, m.Put(ctx, "c", make([]byte, 1), 3*time.Minute))
	require.NoError(t, m.Put(ctx, "d", make([]byte, 2), 4*time.Minute))
	check("an eviction of a", 3, 8)
	clk.Advance(150 * time.Second) // b expires
	check("an expiry not yet removed", 3, 8)
	_, ok, err := m.Get(ctx, "b")
	require.NoError(t, err)
	require.False(t, ok)
	check("a Get of the expired entry", 2, 3)
	require.NoError(t, m.Put(ctx, "c", nil, 0))
	check("a Put with zero ttl", 1, 2)
	require.NoError(t, m.Close())
	check("Close", 0, 0)
}

func TestMemorySweeper(t *testing.T) {
	t.Run("sweeps expired entries in the background", func(t *testing.T) {
		m, clk := newMemory(t, store.MemoryOptions{SweepInterval: time.Millisecond})
		require.NoError(t, m.Put(t.Context(), "a", []byte("1"), time.Minute))
		require.NoError(t, m.Put(t.Context(), "b", []byte("22"), 2*time.Minute))
		require.NoError(t, m.Put(t.Context(), "c", []byte("333"), time.Hour))
		clk.Advance(90 * time.Second)
		require.Eventually(t, func() bool { return m.Len() == 2 }, 30*time.Second, time.Millisecond)
		clk.Advance(time.Minute)
		require.Eventually(t, func() bool { return m.Len() == 1 }, 30*time.Second, time.Millisecond)
		assert.Equal(t, int64(3), m.Bytes())
		_, ok, err := m.Get(t.Context(), "c")
		require.NoError(t, err)
		assert.True(t, ok, "live entries are not swept")
	})
	t.Run("starts at the first Put and stops at Close", func(t *testing.T) {
		requireNoSweepers(t)
		m := store.NewMemory(&store.MemoryOptions{SweepInterval: time.Millisecond})
		assert.Zero(t, countSweepers(), "no goroutine before the first Put")
		_, _, err := m.Get(t.Context(), "id")
		require.NoError(t, err)
		assert.Zero(t, countSweepers(), "no goroutine after a Get")
		require.NoError(t, m.Put(t.Context(), "id", []byte("v"), time.Minute))
		require.NoError(t, m.Put(t.Context(), "id2", []byte("v"), time.Minute))
		assert.Equal(t, 1, countSweepers(), "one goroutine after Puts")
		require.NoError(t, m.Close())
		requireNoSweepers(t)
	})
	t.Run("no goroutine is left after Close", func(t *testing.T) {
		requireNoSweepers(t)
		before := runtime.NumGoroutine()
		var stores []*store.Memory
		for range 50 {
			m := store.NewMemory(&store.MemoryOptions{SweepInterval: time.Millisecond})
			require.NoError(t, m.Put(t.Context(), store.NewID(), []byte("v"), time.Minute))
			stores = append(stores, m)
		}
		assert.Equal(t, 50, countSweepers())
		var wg sync.WaitGroup
		for _, m := range stores {
			wg.Go(func() { assert.NoError(t, m.Close()) })
			wg.Go(func() { assert.NoError(t, m.Close()) })
		}
		wg.Wait()
		requireNoSweepers(t)
		// Polled by hand: require.Eventually runs goroutines of its own.
		for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; {
			require.True(t, time.Now().Before(deadline), "goroutines before: %d, now: %d", before, runtime.NumGoroutine())
			time.Sleep(time.Millisecond)
		}
	})
	t.Run("a Memory closed without a Put never started one", func(t *testing.T) {
		requireNoSweepers(t)
		m := store.NewMemory(nil)
		require.NoError(t, m.Close())
		assert.Zero(t, countSweepers())
	})
}

// countSweepers returns the number of Memory sweeper goroutines in the
// process, read from their stacks: a goleak written by hand.
func countSweepers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	// Every goroutine's trace ends with its creator, even one that has not
	// started running yet.
	return strings.Count(string(buf), "created by github.com/ctxfit/ctxfit/store.(*Memory).startSweeper")
}

// requireNoSweepers waits briefly for sweepers to exit: Close returns once
// a sweeper has signalled that it stops, a moment before its goroutine ends.
func requireNoSweepers(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return countSweepers() == 0 }, 30*time.Second, time.Millisecond,
		"Memory sweeper goroutines still running")
}

func TestMemoryConcurrentEviction(t *testing.T) {
	const maxItems, maxBytes = 20, 1000
	m, clk := newMemory(t, store.MemoryOptions{MaxItems: maxItems, MaxBytes: maxBytes, SweepInterval: time.Millisecond})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			ctx := store.WithSubject(t.Context(), fmt.Sprint(w%3)) // subjects share the store
			for i := range 300 {
				id := fmt.Sprintf("%d-%d", w, i%40)
				data := bytes.Repeat([]byte{byte(w)}, (w*37+i*11)%120)
				// ErrFull: the other subjects are within their shares.
				if err := m.Put(ctx, id, data, time.Duration(1+i%7)*time.Minute); !errors.Is(err, store.ErrFull) {
					assert.NoError(t, err)
					if got, ok, err := m.Get(ctx, id); assert.NoError(t, err) && ok {
						assert.Equal(t, len(data), len(got)) // nobody else writes id
					}
				}
				if i%50 == 0 {
					clk.Advance(time.Minute)
				}
				assert.LessOrEqual(t, m.Len(), maxItems)
				assert.LessOrEqual(t, m.Bytes(), int64(maxBytes))
			}
		})
	}
	wg.Wait()
}

func TestMemoryGetResultIsCapped(t *testing.T) {
	m, _ := newMemory(t, store.MemoryOptions{})
	require.NoError(t, m.Put(t.Context(), "id", []byte("abc"), time.Minute))
	got, ok, err := m.Get(t.Context(), "id")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, len(got), cap(got))
	_ = append(got, "def"...)
	got, _, err = m.Get(t.Context(), "id")
	require.NoError(t, err)
	assert.Equal(t, "abc", string(got), "appending to a result does not change the store")
}

func TestNewMemory(t *testing.T) {
	t.Run("panics on a negative option", func(t *testing.T) {
		for _, opts := range []store.MemoryOptions{
			{MaxBytes: -1},
			{MaxItems: -1},
			{SweepInterval: -time.Second},
		} {
			assert.Panics(t, func() { store.NewMemory(&opts) }, "%+v", opts)
		}
	})
	t.Run("copies its options", func(t *testing.T) {
		opts := &store.MemoryOptions{MaxItems: 1}
		m, _ := newMemory(t, *opts)
		opts.MaxItems = 100
		require.NoError(t, m.Put(t.Context(), "a", nil, time.Minute))
		require.NoError(t, m.Put(t.Context(), "b", nil, time.Minute))
		assert.Equal(t, 1, m.Len())
	})
	t.Run("nil options mean the defaults", func(t *testing.T) {
		m := store.NewMemory(nil)
		t.Cleanup(func() { assert.NoError(t, m.Close()) })
		require.NoError(t, m.Put(t.Context(), "a", make([]byte, store.DefaultMaxBytes), time.Minute))
		assert.ErrorIs(t, m.Put(t.Context(), "b", make([]byte, store.DefaultMaxBytes+1), time.Minute), store.ErrTooLarge)
		for i := range store.DefaultMaxItems + 5 {
			require.NoError(t, m.Put(t.Context(), fmt.Sprint(i), nil, time.Minute))
		}
		assert.Equal(t, store.DefaultMaxItems, m.Len())
	})
}

func TestNewID(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := store.NewID()
		require.Len(t, id, 22)
		raw, err := base64.RawURLEncoding.DecodeString(id)
		require.NoError(t, err, id)
		require.Len(t, raw, 16, "128 bits")
		require.False(t, seen[id], "duplicate ID %s", id)
		seen[id] = true
	}
}
