package store_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/store"
)

// as returns the test's context carrying subject.
func as(t *testing.T, subject string) context.Context {
	return store.WithSubject(t.Context(), subject)
}

// present reports whether m holds id.
func present(t *testing.T, m *store.Memory, id string) bool {
	t.Helper()
	_, ok, err := m.Get(t.Context(), id)
	require.NoError(t, err)
	return ok
}

func TestSubjectContext(t *testing.T) {
	assert.Equal(t, "", store.SubjectFrom(t.Context()), "no subject is the subject \"\"")
	ctx := store.WithSubject(t.Context(), "alice")
	assert.Equal(t, "alice", store.SubjectFrom(ctx))
	assert.Equal(t, "", store.SubjectFrom(store.WithSubject(ctx, "")), "an inner WithSubject wins, even with \"\"")
}

// The scenario: 70 requests for distinct 1 MB responses in 10 s
// evicted another client's snapshot, whose next page got cursor_stale.
func TestMemoryAFloodFromOneSubjectDoesNotEvictAnotherWithinItsShare(t *testing.T) {
	m, clk := newMemory(t, store.MemoryOptions{}) // the defaults: 64 MiB, 10,000 entries
	mb := func(b byte) []byte { return bytes.Repeat([]byte{b}, 1<<20) }

	victim := store.IDOf(mb('v'))
	require.NoError(t, m.Put(as(t, "bob"), victim, mb('v'), 10*time.Minute))
	var last string
	for i := range 70 {
		data := mb(byte(i))
		last = store.IDOf(data)
		require.NoError(t, m.Put(as(t, "mallory"), last, data, 10*time.Minute), "put %d", i)
		clk.Advance(10 * time.Second / 70)
	}
	assert.True(t, present(t, m, victim), "bob's snapshot survives mallory's flood")
	assert.True(t, present(t, m, last), "mallory's latest snapshot is kept: she evicts her own oldest")
	assert.LessOrEqual(t, m.Bytes(), int64(store.DefaultMaxBytes))
}

func TestMemoryShares(t *testing.T) {
	ctx := func(t *testing.T, s string) context.Context { return as(t, s) }
	t.Run("a flood of many small entries does not evict another subject within its share of MaxItems", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{MaxItems: 100})
		require.NoError(t, m.Put(ctx(t, "bob"), "bob", []byte("b"), time.Hour))
		for i := range 1000 {
			require.NoError(t, m.Put(ctx(t, "mallory"), fmt.Sprint(i), []byte("m"), time.Hour))
		}
		assert.True(t, present(t, m, "bob"))
		assert.Equal(t, 100, m.Len())
	})
	t.Run("a subject over its share is evicted to make room for one within it", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{MaxBytes: 10})
		require.NoError(t, m.Put(ctx(t, "a"), "a1", make([]byte, 4), time.Hour))
		require.NoError(t, m.Put(ctx(t, "a"), "a2", make([]byte, 4), 2*time.Hour))
		require.NoError(t, m.Put(ctx(t, "b"), "b1", make([]byte, 4), time.Minute))
		assert.False(t, present(t, m, "a1"), "the heaviest subject's entry closest to expiry goes")
		assert.True(t, present(t, m, "a2"))
		assert.True(t, present(t, m, "b1"), "even though it expires first")
	})
	t.Run("the heaviest subject is the one with the largest share of either bound", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{MaxBytes: 100, MaxItems: 4})
		require.NoError(t, m.Put(ctx(t, "big"), "big", make([]byte, 40), time.Hour)) // 40% of bytes, 25% of items
		require.NoError(t, m.Put(ctx(t, "many"), "m1", nil, time.Hour))
		require.NoError(t, m.Put(ctx(t, "many"), "m2", nil, time.Hour)) // 50% of items
		require.NoError(t, m.Put(ctx(t, "big"), "big2", make([]byte, 1), time.Hour))
		require.NoError(t, m.Put(ctx(t, "new"), "n", nil, time.Hour))
		// Over MaxItems: "big" holds 2 entries and 41% of the bytes, "many"
		// 2 entries and no bytes; "big" weighs more.
		assert.False(t, present(t, m, "big"))
		assert.True(t, present(t, m, "m1"))
		assert.True(t, present(t, m, "n"))
	})
	t.Run("a Put that fits only by evicting another subject within its share fails with ErrFull", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{MaxBytes: 10})
		require.NoError(t, m.Put(ctx(t, "bob"), "bob", make([]byte, 5), time.Hour))
		require.NoError(t, m.Put(ctx(t, "mallory"), "m", make([]byte, 2), time.Hour))
		err := m.Put(ctx(t, "mallory"), "m", make([]byte, 6), time.Hour)
		require.ErrorIs(t, err, store.ErrFull)
		assert.NotErrorIs(t, err, store.ErrUnavailable)
		assert.NotErrorIs(t, err, store.ErrTooLarge)
		assert.True(t, present(t, m, "bob"))
		got, ok, err := m.Get(t.Context(), "m")
		require.NoError(t, err)
		require.True(t, ok, "the refused overwrite leaves the previous entry")
		assert.Len(t, got, 2)
		assert.Equal(t, int64(7), m.Bytes())
		require.NoError(t, m.Put(ctx(t, "mallory"), "m2", make([]byte, 3), time.Hour), "what fits still fits")
	})
	t.Run("a lone subject has the whole store", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{MaxBytes: 10})
		require.NoError(t, m.Put(ctx(t, "a"), "a1", make([]byte, 6), time.Hour))
		require.NoError(t, m.Put(ctx(t, "a"), "a2", make([]byte, 10), time.Hour))
		assert.Equal(t, 1, m.Len())
	})
	t.Run("expired claims of any subject go before live ones", func(t *testing.T) {
		m, clk := newMemory(t, store.MemoryOptions{MaxBytes: 10})
		require.NoError(t, m.Put(ctx(t, "bob"), "old", make([]byte, 3), time.Minute))
		require.NoError(t, m.Put(ctx(t, "mallory"), "m1", make([]byte, 6), time.Hour))
		clk.Advance(2 * time.Minute)
		require.NoError(t, m.Put(ctx(t, "mallory"), "m2", make([]byte, 4), time.Hour))
		assert.True(t, present(t, m, "m1"))
		assert.True(t, present(t, m, "m2"))
	})
}

func TestMemorySharedEntries(t *testing.T) {
	ctx := func(t *testing.T, s string) context.Context { return as(t, s) }
	data := []byte("the same response for both")
	id := store.IDOf(data)
	t.Run("an entry put by two subjects is held once", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{})
		require.NoError(t, m.Put(ctx(t, "a"), id, data, time.Hour))
		require.NoError(t, m.Put(ctx(t, "b"), id, data, time.Hour))
		assert.Equal(t, 1, m.Len())
		assert.Equal(t, int64(len(data)), m.Bytes())
	})
	t.Run("it lives until the last subject's claim expires", func(t *testing.T) {
		m, clk := newMemory(t, store.MemoryOptions{})
		require.NoError(t, m.Put(ctx(t, "b"), id, data, 10*time.Minute))
		require.NoError(t, m.Put(ctx(t, "a"), id, data, time.Minute))
		clk.Advance(5 * time.Minute)
		assert.True(t, present(t, m, id), "a's shorter Put does not shorten b's")
		clk.Advance(5 * time.Minute)
		assert.False(t, present(t, m, id))
		assert.Zero(t, m.Len())
	})
	t.Run("a subject's own Put replaces its own TTL", func(t *testing.T) {
		m, clk := newMemory(t, store.MemoryOptions{})
		require.NoError(t, m.Put(ctx(t, "a"), id, data, time.Hour))
		require.NoError(t, m.Put(ctx(t, "a"), id, data, time.Minute))
		clk.Advance(time.Minute)
		assert.False(t, present(t, m, id))
	})
	t.Run("a Put with ttl 0 drops only its own subject's claim", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{})
		require.NoError(t, m.Put(ctx(t, "b"), id, data, time.Hour))
		require.NoError(t, m.Put(ctx(t, "a"), id, data, time.Hour))
		require.NoError(t, m.Put(ctx(t, "a"), id, nil, 0))
		assert.True(t, present(t, m, id), "b's claim keeps it")
		require.NoError(t, m.Put(ctx(t, "mallory"), id, nil, 0))
		assert.True(t, present(t, m, id), "a subject without a claim removes nothing")
		require.NoError(t, m.Put(ctx(t, "b"), id, nil, 0))
		assert.False(t, present(t, m, id), "the last claim takes the entry with it")
	})
	t.Run("each subject is charged the whole entry, so sharing does not shelter a flood", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{MaxBytes: 10})
		require.NoError(t, m.Put(ctx(t, "bob"), "shared", make([]byte, 4), time.Hour))
		require.NoError(t, m.Put(ctx(t, "mallory"), "shared", make([]byte, 4), time.Hour))
		require.NoError(t, m.Put(ctx(t, "mallory"), "m1", make([]byte, 4), time.Hour))
		// 8 bytes held. Mallory is charged 8, bob 4: mallory's claims go
		// first, and dropping her claim on "shared" frees nothing while bob
		// holds it.
		require.NoError(t, m.Put(ctx(t, "mallory"), "m2", make([]byte, 5), time.Hour))
		assert.True(t, present(t, m, "shared"), "bob's claim keeps it")
		assert.False(t, present(t, m, "m1"))
		assert.True(t, present(t, m, "m2"))
		assert.Equal(t, int64(9), m.Bytes())
		require.NoError(t, m.Put(ctx(t, "mallory"), "m3", make([]byte, 6), time.Hour), "mallory makes room with her own m2")
		assert.False(t, present(t, m, "m2"))
		err := m.Put(ctx(t, "mallory"), "m4", make([]byte, 7), time.Hour)
		assert.ErrorIs(t, err, store.ErrFull, "bob, with 4 of 10 bytes, is within his share")
		assert.True(t, present(t, m, "shared"))
	})
	t.Run("an overwrite with other data charges every holder its new length", func(t *testing.T) {
		m, _ := newMemory(t, store.MemoryOptions{MaxBytes: 10})
		require.NoError(t, m.Put(ctx(t, "a"), "x", make([]byte, 2), time.Hour))
		require.NoError(t, m.Put(ctx(t, "b"), "x", make([]byte, 2), time.Hour))
		require.NoError(t, m.Put(ctx(t, "b"), "x", make([]byte, 6), time.Hour))
		assert.Equal(t, int64(6), m.Bytes())
		require.NoError(t, m.Put(ctx(t, "c"), "c", make([]byte, 4), time.Hour))
		got, ok, err := m.Get(t.Context(), "x")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Len(t, got, 6)
	})
}
