package cache_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/cache"
)

func entry(s string) cache.Entry { return cache.Entry{Body: []byte(s), ContentType: "text/plain"} }

func TestMemoryExpiry(t *testing.T) {
	tests := []struct {
		name    string
		advance time.Duration
		found   bool
	}{
		{"an entry is served just before its TTL ends", time.Minute - time.Nanosecond, true},
		{"an entry is gone when its TTL ends", time.Minute, false},
		{"an entry is gone after its TTL", time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			m := cache.NewMemory(&cache.MemoryOptions{Now: clk.Now})
			require.NoError(t, m.Set(ctx, "k", entry("v"), time.Minute))
			clk.Advance(tt.advance)
			e, ok, err := m.Get(ctx, "k")
			require.NoError(t, err)
			assert.Equal(t, tt.found, ok)
			if tt.found {
				assert.Equal(t, "v", string(e.Body))
			} else {
				assert.Zero(t, m.Len(), "an expired entry is dropped when read")
			}
		})
	}
}

func TestMemoryEvictsLeastRecentlyUsed(t *testing.T) {
	tests := []struct {
		name    string
		ops     func(ctx context.Context, m *cache.Memory) // after a, b, c were set in that order
		evicted string
		kept    []string
	}{
		{"the oldest entry goes first when none was read", func(context.Context, *cache.Memory) {}, "a", []string{"b", "c", "d"}},
		{"an entry that was read is kept over an older unread one", func(ctx context.Context, m *cache.Memory) {
			_, _, _ = m.Get(ctx, "a")
		}, "b", []string{"a", "c", "d"}},
		{"an entry that was replaced counts as recently used", func(ctx context.Context, m *cache.Memory) {
			_ = m.Set(ctx, "a", entry("a2"), time.Hour)
			_, _, _ = m.Get(ctx, "b")
		}, "c", []string{"a", "b", "d"}},
		{"a deleted entry makes room without an eviction", func(ctx context.Context, m *cache.Memory) {
			_ = m.Delete(ctx, "b")
		}, "b", []string{"a", "c", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m := cache.NewMemory(&cache.MemoryOptions{MaxEntries: 3})
			for _, k := range []string{"a", "b", "c"} {
				require.NoError(t, m.Set(ctx, k, entry(k), time.Hour))
			}
			tt.ops(ctx, m)
			require.NoError(t, m.Set(ctx, "d", entry("d"), time.Hour))
			_, ok, err := m.Get(ctx, tt.evicted)
			require.NoError(t, err)
			assert.False(t, ok, "%s is evicted", tt.evicted)
			for _, k := range tt.kept {
				_, ok, err := m.Get(ctx, k)
				require.NoError(t, err)
				assert.True(t, ok, "%s is kept", k)
			}
			assert.Equal(t, 3, m.Len())
		})
	}
}

func TestMemoryBounds(t *testing.T) {
	// Each entry "kN" -> 10-byte body, content type "text/plain" counts 2+10+10 = 22 bytes.
	body := cache.Entry{Body: []byte("0123456789"), ContentType: "text/plain"}
	tests := []struct {
		name      string
		opts      cache.MemoryOptions
		sets      int
		wantLen   int
		wantBytes int64
	}{
		{"the default holds 1,000 entries", cache.MemoryOptions{}, 1200, cache.DefaultMaxEntries, cache.DefaultMaxEntries * 25},
		{"MaxEntries bounds the number of entries", cache.MemoryOptions{MaxEntries: 5}, 20, 5, 5 * 22},
		{"MaxBytes bounds the bytes of the entries", cache.MemoryOptions{MaxBytes: 100}, 20, 4, 4 * 22},
		{"the tighter of both bounds wins", cache.MemoryOptions{MaxEntries: 2, MaxBytes: 100}, 20, 2, 2 * 22},
		{"negative bounds mean none", cache.MemoryOptions{MaxEntries: -1, MaxBytes: -1}, 1500, 1500, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m := cache.NewMemory(&tt.opts)
			for i := range tt.sets {
				k := fmt.Sprintf("k%d", i%10)
				if tt.sets > 100 {
					k = fmt.Sprintf("k%04d", i)
				}
				require.NoError(t, m.Set(ctx, k, body, time.Hour))
				if tt.opts.MaxBytes > 0 {
					assert.LessOrEqual(t, m.Bytes(), tt.opts.MaxBytes)
				}
			}
			assert.Equal(t, tt.wantLen, m.Len())
			if tt.wantBytes >= 0 {
				assert.Equal(t, tt.wantBytes, m.Bytes())
			}
		})
	}
}

func TestMemoryDoesNotStoreAnEntryLargerThanMaxBytes(t *testing.T) {
	ctx := context.Background()
	m := cache.NewMemory(&cache.MemoryOptions{MaxBytes: 10})
	require.NoError(t, m.Set(ctx, "k", entry("small"), time.Hour))
	require.NoError(t, m.Set(ctx, "k", entry("much too large"), time.Hour))
	_, ok, err := m.Get(ctx, "k")
	require.NoError(t, err)
	assert.False(t, ok, "the oversized entry is not stored and the old one is gone")
	assert.Zero(t, m.Bytes())
}

func TestMemoryAfterClose(t *testing.T) {
	ctx := context.Background()
	m := cache.NewMemory(nil)
	require.NoError(t, m.Set(ctx, "k", entry("v"), time.Hour))
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close may be called twice")
	_, _, err := m.Get(ctx, "k")
	assert.ErrorIs(t, err, cache.ErrClosed)
	assert.ErrorIs(t, m.Set(ctx, "k", entry("v"), time.Hour), cache.ErrClosed)
	assert.ErrorIs(t, m.Delete(ctx, "k"), cache.ErrClosed)
	assert.Zero(t, m.Len())
}
