// Package storetest is the conformance suite that every [store.Store]
// implementation passes: the in-memory [store.Memory] and the Redis store
// alike. Call [Run] (or [RunWithOptions]) from a test in the
// implementation's package:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
//			return store.NewMemory(&store.MemoryOptions{Now: now})
//		})
//	}
//
// The suite checks the behaviour the [store.Store] interface documents,
// and [store.RangeReader]'s for stores that implement it (the GetRange cases
// are skipped for the others). It does not check capacity bounds nor how
// subjects are charged, which differ between implementations and belong in
// each implementation's own tests.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/testing/fakeclock"
	"github.com/ctxfit/ctxfit/store"
)

// DefaultShortTTL is the TTL that TTL cases use with a real clock when
// [RunOptions.ShortTTL] is zero.
const DefaultShortTTL = 200 * time.Millisecond

// RunOptions adjust the suite to an implementation. The zero value suits a
// store that takes an injected clock and copies data on Put, as
// [store.Memory] does.
type RunOptions struct {
	// RealClock tells the suite that the store measures TTLs with its own
	// clock (a Redis server does) and ignores the now it is given. TTL cases
	// then put entries with ShortTTL and poll until they expire instead of
	// advancing a fake clock. False (the default) means the store measures
	// TTLs with the injected now, and the suite advances it.
	RealClock bool
	// ShortTTL is the TTL of the expiring entries when RealClock is set: long
	// enough for a Put and a Get to complete well within it, short enough to
	// keep the suite fast. Zero means DefaultShortTTL. Unused without
	// RealClock.
	ShortTTL time.Duration
	// SharesData tells the suite that the store may keep the slice passed to
	// Put instead of a copy (the interface allows it); the data isolation
	// case is skipped. False (the default) means the store copies, and the
	// suite checks that modifying the slice after Put changes nothing.
	SharesData bool
}

// Run runs the conformance suite against the stores that newStore returns,
// with the default options: an injected clock and copied data. See
// [RunWithOptions].
func Run(t *testing.T, newStore func(t *testing.T, now func() time.Time) store.Store) {
	t.Helper()
	RunWithOptions(t, newStore, nil)
}

// RunWithOptions runs the conformance suite against the stores that
// newStore returns, as t.Run subtests that run in parallel; nil opts means
// the zero RunOptions.
//
// Each subtest calls newStore once, with its own subtest's t and a clock:
// a fake clock that the subtest advances, or time.Now with
// [RunOptions.RealClock]. A store that takes an injected clock must measure
// every TTL with now; one whose backend has its own clock (Redis) ignores it
// and is run with RealClock. Stores may share a backend: every subtest uses
// fresh IDs from [store.NewID]. The suite closes each store when its subtest
// ends; newStore may register more cleanup with t.Cleanup.
func RunWithOptions(t *testing.T, newStore func(t *testing.T, now func() time.Time) store.Store, opts *RunOptions) {
	t.Helper()
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	if o.ShortTTL == 0 {
		o.ShortTTL = DefaultShortTTL
	}
	s := suite{newStore: newStore, opts: o}
	for _, c := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"put and get round trip", s.roundTrip},
		{"get of a missing key is ok=false and no error", s.missing},
		{"overwrite replaces the data", s.overwriteData},
		{"overwrite replaces the TTL", s.overwriteTTL},
		{"an expired entry is ok=false", s.expiry},
		{"reads do not extend the TTL", s.readsDoNotExtend},
		{"modifying the slice after Put does not change what Get returns", s.isolation},
		{"an empty value round trips", s.empty},
		{"a large value round trips", s.large},
		{"binary data with all 256 byte values round trips", s.binary},
		{"keys are independent", s.independentKeys},
		{"concurrent Put and Get from many goroutines are consistent", s.concurrent},
		{"a cancelled context fails Put and Get", s.cancelled},
		{"after Close every call returns ErrClosed", s.closed},
		{"Close twice is safe", s.closeTwice},
		{"Close during concurrent calls is safe", s.closeConcurrent},
		{"puts of one id for two subjects are one entry that anyone reads", s.subjects},
		{"a subject's Put with ttl 0 removes the entry it alone put", s.subjectDeletes},
		{"GetRange reads the clamped range [start, end)", s.getRange},
		{"GetRange of a missing or expired entry is ok=false", s.getRangeMissing},
		{"GetRange fails like Get when the context is done or the store closed", s.getRangeErrors},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}

type suite struct {
	newStore func(t *testing.T, now func() time.Time) store.Store
	opts     RunOptions
}

// open returns a new store and its clock, and closes the store at the end
// of the test.
func (s suite) open(t *testing.T) (store.Store, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	now := clk.Now
	if s.opts.RealClock {
		now = time.Now
	}
	st := s.newStore(t, now)
	require.NotNil(t, st, "newStore returned nil")
	t.Cleanup(func() {
		assert.NoError(t, st.Close(), "Close at the end of the test")
	})
	return st, clk
}

func (s suite) roundTrip(t *testing.T) {
	st, _ := s.open(t)
	ctx := t.Context()
	id := store.NewID()
	require.NoError(t, st.Put(ctx, id, []byte(`{"items":[1,2,3]}`), time.Minute))
	got, ok, err := st.Get(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, `{"items":[1,2,3]}`, string(got))

	// Reading twice returns the same data.
	got, ok, err = st.Get(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, `{"items":[1,2,3]}`, string(got))
}

func (s suite) missing(t *testing.T) {
	st, _ := s.open(t)
	got, ok, err := st.Get(t.Context(), store.NewID())
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Empty(t, got)
}

func (s suite) overwriteData(t *testing.T) {
	st, _ := s.open(t)
	ctx := t.Context()
	id := store.NewID()
	require.NoError(t, st.Put(ctx, id, []byte("first, and longer"), time.Minute))
	require.NoError(t, st.Put(ctx, id, []byte("second"), time.Minute))
	got, ok, err := st.Get(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "second", string(got))
}

func (s suite) overwriteTTL(t *testing.T) {
	st, clk := s.open(t)
	ctx := t.Context()
	if s.opts.RealClock {
		// A long TTL replaced by a short one: the entry expires.
		id := store.NewID()
		require.NoError(t, st.Put(ctx, id, []byte("long"), time.Hour))
		require.NoError(t, st.Put(ctx, id, []byte("short"), s.opts.ShortTTL))
		s.eventuallyGone(t, st, id)
		return
	}

	// A longer TTL replaces a shorter one...
	longer := store.NewID()
	require.NoError(t, st.Put(ctx, longer, []byte("v1"), time.Minute))
	clk.Advance(50 * time.Second)
	require.NoError(t, st.Put(ctx, longer, []byte("v2"), time.Minute))
	// ...and so does a shorter one.
	shorter := store.NewID()
	require.NoError(t, st.Put(ctx, shorter, []byte("v1"), time.Hour))
	require.NoError(t, st.Put(ctx, shorter, []byte("v2"), 30*time.Second))

	clk.Advance(40 * time.Second) // 90s after the first Put, 40s after the second
	s.requirePresent(t, st, longer, "v2")
	s.requireGone(t, st, shorter)
}

func (s suite) expiry(t *testing.T) {
	st, clk := s.open(t)
	ctx := t.Context()
	id := store.NewID()
	if s.opts.RealClock {
		require.NoError(t, st.Put(ctx, id, []byte("soon gone"), s.opts.ShortTTL))
		s.requirePresent(t, st, id, "soon gone")
		s.eventuallyGone(t, st, id)
		return
	}
	require.NoError(t, st.Put(ctx, id, []byte("soon gone"), time.Minute))
	clk.Advance(time.Minute - time.Millisecond)
	s.requirePresent(t, st, id, "soon gone")
	clk.Advance(time.Millisecond)
	s.requireGone(t, st, id)
	// And it stays gone.
	clk.Advance(time.Hour)
	s.requireGone(t, st, id)
}

func (s suite) readsDoNotExtend(t *testing.T) {
	st, clk := s.open(t)
	ctx := t.Context()
	id := store.NewID()
	if s.opts.RealClock {
		// Read continuously: if reads extended the TTL the entry would
		// never expire.
		ttl := s.opts.ShortTTL
		require.NoError(t, st.Put(ctx, id, []byte("read often"), ttl))
		deadline := time.Now().Add(ttl + 5*time.Second)
		for {
			_, ok, err := st.Get(ctx, id)
			require.NoError(t, err)
			if !ok {
				return
			}
			require.True(t, time.Now().Before(deadline),
				"entry with TTL %v still present after %v of reads every %v", ttl, ttl+5*time.Second, ttl/10)
			time.Sleep(ttl / 10)
		}
	}
	require.NoError(t, st.Put(ctx, id, []byte("read often"), time.Minute))
	for range 4 {
		clk.Advance(10 * time.Second)
		s.requirePresent(t, st, id, "read often")
	}
	clk.Advance(20 * time.Second) // 60s after Put, 20s after the last read
	s.requireGone(t, st, id)
}

func (s suite) isolation(t *testing.T) {
	if s.opts.SharesData {
		t.Skip("the store may keep the caller's slice (RunOptions.SharesData)")
	}
	st, _ := s.open(t)
	ctx := t.Context()
	id := store.NewID()
	buf := []byte("original")
	require.NoError(t, st.Put(ctx, id, buf, time.Minute))
	copy(buf, "MODIFIED")
	s.requirePresent(t, st, id, "original")
}

func (s suite) empty(t *testing.T) {
	st, _ := s.open(t)
	ctx := t.Context()
	for name, data := range map[string][]byte{"empty": {}, "nil": nil} {
		id := store.NewID()
		require.NoError(t, st.Put(ctx, id, data, time.Minute), name)
		got, ok, err := st.Get(ctx, id)
		require.NoError(t, err, name)
		assert.True(t, ok, "%s value is present", name)
		assert.Empty(t, got, name)
	}
}

func (s suite) large(t *testing.T) {
	st, _ := s.open(t)
	ctx := t.Context()
	id := store.NewID()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB
	require.NoError(t, st.Put(ctx, id, data, time.Minute))
	got, ok, err := st.Get(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, bytes.Equal(data, got), "got %d bytes, want the %d put", len(got), len(data))
}

func (s suite) binary(t *testing.T) {
	st, _ := s.open(t)
	ctx := t.Context()
	id := store.NewID()
	data := make([]byte, 0, 512)
	for i := range 256 {
		data = append(data, byte(i))
	}
	for i := range 256 {
		data = append(data, byte(255-i))
	}
	require.NoError(t, st.Put(ctx, id, data, time.Minute))
	got, ok, err := st.Get(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, data, got)
}

func (s suite) independentKeys(t *testing.T) {
	st, clk := s.open(t)
	ctx := t.Context()
	a, b := store.NewID(), store.NewID()
	require.NoError(t, st.Put(ctx, a, []byte("a"), time.Hour))
	require.NoError(t, st.Put(ctx, b, []byte("b"), time.Hour))
	require.NoError(t, st.Put(ctx, b, []byte("b2"), time.Hour))
	s.requirePresent(t, st, a, "a")
	s.requirePresent(t, st, b, "b2")
	if !s.opts.RealClock {
		short := store.NewID()
		require.NoError(t, st.Put(ctx, short, []byte("short"), time.Minute))
		clk.Advance(2 * time.Minute)
		s.requireGone(t, st, short)
		s.requirePresent(t, st, a, "a")
	}
}

func (s suite) concurrent(t *testing.T) {
	st, _ := s.open(t)
	ctx := t.Context()
	const (
		workers = 16
		rounds  = 100
	)
	shared := make([]string, 4)
	for i := range shared {
		shared[i] = store.NewID()
	}
	// Every value names its key, so a torn or misplaced value shows.
	value := func(id string, worker, round int) []byte {
		return []byte(strings.Repeat(fmt.Sprintf("%s/%d/%d;", id, worker, round), 8))
	}
	valid := func(id string, v []byte) bool {
		var w, r int
		unit := string(v[:len(v)/8])
		if _, err := fmt.Sscanf(unit, id+"/%d/%d;", &w, &r); err != nil {
			return false
		}
		return bytes.Equal(v, value(id, w, r))
	}

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			own := store.NewID()
			for r := range rounds {
				sh := shared[(w+r)%len(shared)]
				if err := st.Put(ctx, sh, value(sh, w, r), time.Hour); err != nil {
					errs <- fmt.Errorf("put %s: %w", sh, err)
					return
				}
				if err := st.Put(ctx, own, value(own, w, r), time.Hour); err != nil {
					errs <- fmt.Errorf("put own: %w", err)
					return
				}
				got, ok, err := st.Get(ctx, own)
				switch {
				case err != nil:
					errs <- fmt.Errorf("get own: %w", err)
					return
				case !ok || !bytes.Equal(got, value(own, w, r)):
					errs <- fmt.Errorf("get own after round %d: ok=%v, %.40q", r, ok, got)
					return
				}
				sh = shared[(w+r+1)%len(shared)]
				got, ok, err = st.Get(ctx, sh)
				switch {
				case err != nil:
					errs <- fmt.Errorf("get %s: %w", sh, err)
					return
				case ok && !valid(sh, got):
					errs <- fmt.Errorf("get %s: torn or misplaced value %.40q", sh, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	for _, sh := range shared {
		got, ok, err := st.Get(ctx, sh)
		require.NoError(t, err)
		require.True(t, ok, "shared key written by every worker")
		assert.True(t, valid(sh, got), "final value of a shared key: %.40q", got)
	}
}

func (s suite) cancelled(t *testing.T) {
	st, _ := s.open(t)
	id := store.NewID()
	require.NoError(t, st.Put(t.Context(), id, []byte("kept"), time.Minute))

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := st.Put(ctx, store.NewID(), []byte("x"), time.Minute)
		assert.ErrorIs(t, err, context.Canceled, "Put with a cancelled context")
		_, ok, err := st.Get(ctx, id)
		assert.ErrorIs(t, err, context.Canceled, "Get with a cancelled context")
		assert.False(t, ok, "Get with a cancelled context")

		dctx, dcancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
		defer dcancel()
		_, _, err = st.Get(dctx, id)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "Get past its deadline")
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a call with a cancelled context hung")
	}
	// The store still works with a live context.
	s.requirePresent(t, st, id, "kept")
}

func (s suite) closed(t *testing.T) {
	st, _ := s.open(t)
	ctx := t.Context()
	id := store.NewID()
	require.NoError(t, st.Put(ctx, id, []byte("before close"), time.Minute))
	require.NoError(t, st.Close())

	err := st.Put(ctx, id, []byte("after close"), time.Minute)
	assert.ErrorIs(t, err, store.ErrClosed, "Put after Close")
	err = st.Put(ctx, store.NewID(), []byte("after close"), time.Minute)
	assert.ErrorIs(t, err, store.ErrClosed, "Put of a new key after Close")
	got, ok, err := st.Get(ctx, id)
	assert.ErrorIs(t, err, store.ErrClosed, "Get after Close")
	assert.False(t, ok, "Get after Close")
	assert.Nil(t, got, "Get after Close")
	_, _, err = st.Get(ctx, store.NewID())
	assert.ErrorIs(t, err, store.ErrClosed, "Get of a missing key after Close")
}

func (s suite) closeTwice(t *testing.T) {
	st, _ := s.open(t)
	require.NoError(t, st.Put(t.Context(), store.NewID(), []byte("x"), time.Minute))
	assert.NoError(t, st.Close(), "first Close")
	assert.NoError(t, st.Close(), "second Close")
	_, _, err := st.Get(t.Context(), store.NewID())
	assert.ErrorIs(t, err, store.ErrClosed)
}

func (s suite) closeConcurrent(t *testing.T) {
	st, _ := s.open(t)
	ctx := t.Context()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			<-start
			id := store.NewID()
			for range 200 {
				if err := st.Put(ctx, id, []byte("x"), time.Minute); err != nil {
					assert.ErrorIs(t, err, store.ErrClosed, "Put during Close")
					return
				}
				if _, _, err := st.Get(ctx, id); err != nil {
					assert.ErrorIs(t, err, store.ErrClosed, "Get during Close")
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			<-start
			assert.NoError(t, st.Close())
		})
	}
	close(start)
	wg.Wait()
	_, _, err := st.Get(ctx, store.NewID())
	assert.ErrorIs(t, err, store.ErrClosed)
}

func (s suite) subjects(t *testing.T) {
	st, _ := s.open(t)
	data := []byte("one response for two subjects " + store.NewID())
	id := store.IDOf(data)
	alice := store.WithSubject(t.Context(), "alice "+store.NewID())
	bob := store.WithSubject(t.Context(), "bob "+store.NewID())
	require.NoError(t, st.Put(alice, id, data, time.Hour))
	require.NoError(t, st.Put(bob, id, data, time.Hour))
	for name, ctx := range map[string]context.Context{"alice": alice, "bob": bob, "no subject": t.Context()} {
		got, ok, err := st.Get(ctx, id)
		require.NoError(t, err, name)
		require.True(t, ok, name)
		assert.Equal(t, string(data), string(got), name)
	}
}

func (s suite) subjectDeletes(t *testing.T) {
	st, _ := s.open(t)
	ctx := store.WithSubject(t.Context(), "carol "+store.NewID())
	id := store.NewID()
	require.NoError(t, st.Put(ctx, id, []byte("v"), time.Hour))
	require.NoError(t, st.Put(ctx, id, nil, 0))
	s.requireGone(t, st, id)
	// And it can be put again.
	require.NoError(t, st.Put(ctx, id, []byte("w"), time.Hour))
	s.requirePresent(t, st, id, "w")
}

// rangeReader opens a store and skips the test unless it is a
// [store.RangeReader].
func (s suite) rangeReader(t *testing.T) (store.Store, store.RangeReader, *fakeclock.Clock) {
	t.Helper()
	st, clk := s.open(t)
	rr, ok := st.(store.RangeReader)
	if !ok {
		t.Skipf("%T does not implement store.RangeReader", st)
	}
	return st, rr, clk
}

func (s suite) getRange(t *testing.T) {
	st, rr, _ := s.rangeReader(t)
	ctx := t.Context()
	id := store.NewID()
	require.NoError(t, st.Put(ctx, id, []byte("0123456789"), time.Minute))
	for _, c := range []struct {
		name       string
		start, end int64
		want       string
	}{
		{"a range inside", 2, 5, "234"},
		{"the whole data", 0, 10, "0123456789"},
		{"a range past the end stops at the end", 7, 100, "789"},
		{"a huge end stops at the end", 9, math.MaxInt64, "9"},
		{"a range from the end is empty", 10, 12, ""},
		{"a range past the end is empty", 50, 60, ""},
		{"a negative start reads from 0", -5, 3, "012"},
		{"an empty range is empty", 4, 4, ""},
		{"an end before the start is empty", 6, 2, ""},
		{"a range of negatives is empty", -9, -1, ""},
	} {
		got, ok, err := rr.GetRange(ctx, id, c.start, c.end)
		require.NoError(t, err, c.name)
		assert.True(t, ok, "%s: the entry exists", c.name)
		assert.Equal(t, c.want, string(got), c.name)
		assert.NotNil(t, got, "%s: an empty range is an empty slice, not nil", c.name)
	}

	empty := store.NewID()
	require.NoError(t, st.Put(ctx, empty, nil, time.Minute))
	got, ok, err := rr.GetRange(ctx, empty, 0, 10)
	require.NoError(t, err)
	assert.True(t, ok, "an empty entry exists")
	assert.Empty(t, got)

	bin := store.NewID()
	data := make([]byte, 256)
	for i := range data {
		data[i] = byte(i)
	}
	require.NoError(t, st.Put(ctx, bin, data, time.Minute))
	got, ok, err = rr.GetRange(ctx, bin, 100, 200)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, data[100:200], got, "binary data")
}

func (s suite) getRangeMissing(t *testing.T) {
	st, rr, clk := s.rangeReader(t)
	ctx := t.Context()
	got, ok, err := rr.GetRange(ctx, store.NewID(), 0, 10)
	require.NoError(t, err)
	assert.False(t, ok, "a missing entry")
	assert.Empty(t, got)

	id := store.NewID()
	if s.opts.RealClock {
		require.NoError(t, st.Put(ctx, id, []byte("soon gone"), s.opts.ShortTTL))
		require.Eventually(t, func() bool {
			_, ok, err := rr.GetRange(ctx, id, 0, 4)
			return err == nil && !ok
		}, s.opts.ShortTTL+5*time.Second, s.opts.ShortTTL/20, "GetRange of an expired entry")
		return
	}
	require.NoError(t, st.Put(ctx, id, []byte("soon gone"), time.Minute))
	clk.Advance(time.Minute)
	_, ok, err = rr.GetRange(ctx, id, 0, 4)
	require.NoError(t, err)
	assert.False(t, ok, "an expired entry")
}

func (s suite) getRangeErrors(t *testing.T) {
	st, rr, _ := s.rangeReader(t)
	id := store.NewID()
	require.NoError(t, st.Put(t.Context(), id, []byte("data"), time.Minute))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, ok, err := rr.GetRange(ctx, id, 0, 2)
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, ok)

	require.NoError(t, st.Close())
	_, ok, err = rr.GetRange(t.Context(), id, 0, 2)
	assert.ErrorIs(t, err, store.ErrClosed)
	assert.False(t, ok)
}

// requirePresent fails the test unless id holds want.
func (s suite) requirePresent(t *testing.T, st store.Store, id, want string) {
	t.Helper()
	got, ok, err := st.Get(t.Context(), id)
	require.NoError(t, err)
	require.True(t, ok, "entry %s should be present", id)
	require.Equal(t, want, string(got))
}

// requireGone fails the test unless id is missing.
func (s suite) requireGone(t *testing.T, st store.Store, id string) {
	t.Helper()
	got, ok, err := st.Get(t.Context(), id)
	require.NoError(t, err)
	require.False(t, ok, "entry %s should be gone, holds %.40q", id, got)
}

// eventuallyGone polls, with a real clock, until id is missing.
func (s suite) eventuallyGone(t *testing.T, st store.Store, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, ok, err := st.Get(t.Context(), id)
		return err == nil && !ok
	}, s.opts.ShortTTL+5*time.Second, s.opts.ShortTTL/20, "entry %s should expire after %v", id, s.opts.ShortTTL)
}
