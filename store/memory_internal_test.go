package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/testing/fakeclock"
)

// The bookkeeping of claims, subjects and heaps holds after any sequence of
// Put, Get and sweeps: a property test over random operations.
func TestMemoryBookkeepingHoldsAfterRandomOperations(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0))
			clk := fakeclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
			m := NewMemory(&MemoryOptions{MaxBytes: 20, MaxItems: 6, Now: clk.Now})
			t.Cleanup(func() { _ = m.Close() })
			subjects := []string{"", "a", "b", "c"}
			for i := range 2000 {
				ctx := WithSubject(t.Context(), subjects[rng.IntN(len(subjects))])
				id := fmt.Sprint(rng.IntN(12))
				switch op := rng.IntN(10); {
				case op < 6:
					ttl := time.Duration(rng.IntN(6)) * time.Minute
					err := m.Put(ctx, id, make([]byte, rng.IntN(9)), ttl)
					if err != nil && !errors.Is(err, ErrFull) {
						t.Fatalf("op %d: Put: %v", i, err)
					}
				case op < 8:
					_, _, err := m.Get(ctx, id)
					require.NoError(t, err)
				case op < 9:
					m.removeExpired()
				default:
					clk.Advance(time.Duration(rng.IntN(90)) * time.Second)
				}
				if err := m.checkBookkeeping(); err != nil {
					t.Fatalf("after op %d: %v", i, err)
				}
			}
		})
	}
}

// checkBookkeeping returns what is wrong with m's bookkeeping, if anything.
func (m *Memory) checkBookkeeping() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var bytes int64
	type tally struct {
		bytes int64
		count int
	}
	charged := map[*subject]tally{}
	claims := map[*claim]bool{}
	for id, e := range m.entries {
		if e.id != id {
			return fmt.Errorf("entry %q filed under %q", e.id, id)
		}
		if len(e.claims) == 0 {
			return fmt.Errorf("entry %q has no claim", id)
		}
		bytes += int64(len(e.data))
		seen := map[*subject]bool{}
		for _, c := range e.claims {
			if c.entry != e || seen[c.subject] || m.subjects[c.subject.name] != c.subject {
				return fmt.Errorf("entry %q: a foreign, repeated or unknown subject's claim", id)
			}
			seen[c.subject] = true
			claims[c] = true
			t := charged[c.subject]
			charged[c.subject] = tally{t.bytes + int64(len(e.data)), t.count + 1}
		}
	}
	if bytes != m.bytes || bytes > m.maxBytes || len(m.entries) > m.maxItems {
		return fmt.Errorf("bytes %d (counted %d, bound %d), entries %d (bound %d)", m.bytes, bytes, m.maxBytes, len(m.entries), m.maxItems)
	}
	if len(m.subjects) != len(charged) {
		return fmt.Errorf("%d subjects, %d holding claims", len(m.subjects), len(charged))
	}
	weighed := 0
	for name, s := range m.subjects {
		if c := charged[s]; c.bytes != s.bytes || c.count != s.count {
			return fmt.Errorf("subject %q charged %d bytes and %d claims, holds %d and %d", name, s.bytes, s.count, c.bytes, c.count)
		}
		if s.claims.len() != s.count || s.at < 0 || m.byWeight.items[s.at] != s {
			return fmt.Errorf("subject %q: %d claims in its heap of %d, at %d", name, s.claims.len(), s.count, s.at)
		}
		for i, c := range s.claims.items {
			if c.own != i || c.subject != s || !claims[c] {
				return fmt.Errorf("subject %q: claim %d misplaced", name, i)
			}
		}
		if err := heapOrdered(&s.claims); err != nil {
			return fmt.Errorf("subject %q: %w", name, err)
		}
		weighed++
	}
	if m.byWeight.len() != weighed {
		return fmt.Errorf("%d subjects weighed, %d hold claims", m.byWeight.len(), weighed)
	}
	if m.byExpiry.len() != len(claims) {
		return fmt.Errorf("%d claims by expiry, %d held", m.byExpiry.len(), len(claims))
	}
	for i, c := range m.byExpiry.items {
		if c.at != i || !claims[c] {
			return fmt.Errorf("claim %d by expiry misplaced", i)
		}
	}
	return errors.Join(heapOrdered(&m.byExpiry), heapOrdered(&m.byWeight))
}

func heapOrdered[T any](h *indexedHeap[T]) error {
	for i := 1; i < h.len(); i++ {
		if h.less(h.items[i], h.items[(i-1)/2]) {
			return fmt.Errorf("heap out of order at %d", i)
		}
	}
	return nil
}

// Snapshots are keyed by their content: the same data put again under its
// id shares the copy the store holds, and other data gets a copy of its own.
func TestMemoryKeepsOneCopyOfDataPutAgain(t *testing.T) {
	m := NewMemory(nil)
	t.Cleanup(func() { _ = m.Close() })
	ctx := t.Context()
	require.NoError(t, m.Put(ctx, "id", []byte("the same bytes"), time.Minute))
	first, ok, err := m.Get(ctx, "id")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, putFor(m, "another subject", "id", []byte("the same bytes")))
	again, _, _ := m.Get(ctx, "id")
	require.Same(t, &first[0], &again[0], "the same data put again shares the stored copy")
	data := []byte("other bytes, same id")
	require.NoError(t, m.Put(ctx, "id", data, time.Minute))
	other, _, _ := m.Get(ctx, "id")
	require.Equal(t, "other bytes, same id", string(other))
	require.NotSame(t, &data[0], &other[0], "the store keeps its own copy, never the caller's slice")
}

// putFor puts data under id for subject, for a minute.
func putFor(m *Memory, subject, id string, data []byte) error {
	return m.Put(WithSubject(context.Background(), subject), id, data, time.Minute)
}
