package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/cache"
)

// upstream is a fetch that counts its calls.
type upstream struct {
	calls atomic.Int64
	body  string
	err   error
}

func (u *upstream) fetch(context.Context) (cache.Entry, error) {
	n := u.calls.Add(1)
	if u.err != nil {
		return cache.Entry{}, u.err
	}
	return cache.Entry{Body: fmt.Appendf(nil, "%s#%d", u.body, n), ContentType: "application/json"}, nil
}

func TestCacheDo(t *testing.T) {
	errUpstream := errors.New("upstream down")
	tests := []struct {
		name      string
		err       error
		dontStore bool
		advance   time.Duration
		wantCalls int64
		wantHit   bool
		wantBody  string
		wantStats cache.Stats
	}{
		{"a second lookup is a hit", nil, false, 0, 1, true, "v#1", cache.Stats{Hits: 1, Misses: 1}},
		{"a lookup just before the TTL ends is a hit", nil, false, time.Hour - time.Second, 1, true, "v#1", cache.Stats{Hits: 1, Misses: 1}},
		{"a lookup after the TTL is a miss", nil, false, time.Hour, 2, false, "v#2", cache.Stats{Misses: 2}},
		{"an error is not stored", errUpstream, false, 0, 2, false, "", cache.Stats{Misses: 2}},
		{"a response the fetch declines to store is not stored", nil, true, 0, 2, false, "v#2", cache.Stats{Misses: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			c := cache.New(&cache.Options{Now: clk.Now})
			defer c.Close()
			u := &upstream{body: "v", err: tt.err}
			fetch := func(ctx context.Context) (cache.Entry, error) {
				if tt.dontStore {
					cache.DontStore(ctx)
				}
				return u.fetch(ctx)
			}
			_, hit, err := c.Do(ctx, "k", fetch)
			require.ErrorIs(t, err, tt.err)
			require.False(t, hit, "the first lookup is a miss")
			clk.Advance(tt.advance)
			e, hit, err := c.Do(ctx, "k", fetch)
			require.ErrorIs(t, err, tt.err)
			assert.Equal(t, tt.wantHit, hit)
			assert.Equal(t, tt.wantBody, string(e.Body))
			assert.Equal(t, tt.wantCalls, u.calls.Load())
			assert.Equal(t, tt.wantStats, c.Stats())
		})
	}
}

func TestCacheGetPut(t *testing.T) {
	ctx := context.Background()
	c := cache.New(nil)
	defer c.Close()
	_, ok := c.Get(ctx, "k")
	assert.False(t, ok, "an empty cache misses")
	body := []byte("hello")
	require.NoError(t, c.Put(ctx, "k", cache.Entry{Body: body, ContentType: "text/plain"}))
	body[0] = 'j'
	e, ok := c.Get(ctx, "k")
	require.True(t, ok)
	assert.Equal(t, cache.Entry{Body: []byte("hello"), ContentType: "text/plain"}, e, "Put stores a copy")
	require.NoError(t, c.Delete(ctx, "k"))
	_, ok = c.Get(ctx, "k")
	assert.False(t, ok, "a deleted entry misses")
	assert.Equal(t, cache.Stats{Hits: 1, Misses: 2}, c.Stats())
	assert.InDelta(t, 1.0/3, c.Stats().HitRate(), 1e-9)
}

func TestCacheOptions(t *testing.T) {
	ctx := context.Background()
	t.Run("TTL sets how long entries are served", func(t *testing.T) {
		clk := newClock()
		c := cache.New(&cache.Options{TTL: time.Minute, Now: clk.Now})
		require.NoError(t, c.Put(ctx, "k", entry("v")))
		clk.Advance(time.Minute)
		_, ok := c.Get(ctx, "k")
		assert.False(t, ok)
	})
	t.Run("MaxEntries bounds the default backend", func(t *testing.T) {
		c := cache.New(&cache.Options{MaxEntries: 2})
		for _, k := range []string{"a", "b", "c"} {
			require.NoError(t, c.Put(ctx, k, entry(k)))
		}
		_, ok := c.Get(ctx, "a")
		assert.False(t, ok, "the least recently used entry went first")
		_, ok = c.Get(ctx, "c")
		assert.True(t, ok)
	})
	t.Run("MaxBytes bounds the default backend", func(t *testing.T) {
		c := cache.New(&cache.Options{MaxBytes: 8})
		require.NoError(t, c.Put(ctx, "k", entry("more than eight bytes")))
		_, ok := c.Get(ctx, "k")
		assert.False(t, ok)
	})
	t.Run("a Backend passed in is used and not closed", func(t *testing.T) {
		m := cache.NewMemory(nil)
		c := cache.New(&cache.Options{Backend: m})
		require.NoError(t, c.Put(ctx, "k", entry("v")))
		assert.Equal(t, 1, m.Len())
		require.NoError(t, c.Close())
		_, ok, err := m.Get(ctx, "k")
		require.NoError(t, err)
		assert.True(t, ok)
	})
}

// failing is a backend that cannot answer.
type failing struct{}

func (failing) Get(context.Context, string) (cache.Entry, bool, error) {
	return cache.Entry{}, false, errors.New("backend: connection refused")
}

func (failing) Set(context.Context, string, cache.Entry, time.Duration) error {
	return errors.New("backend: connection refused")
}
func (failing) Delete(context.Context, string) error { return nil }
func (failing) Close() error                         { return nil }

func TestCacheFailsOpenOnBackendErrors(t *testing.T) {
	ctx := context.Background()
	c := cache.New(&cache.Options{Backend: failing{}})
	u := &upstream{body: "v"}
	for range 2 {
		e, hit, err := c.Do(ctx, "k", u.fetch)
		require.NoError(t, err)
		assert.False(t, hit)
		assert.NotEmpty(t, e.Body)
	}
	assert.EqualValues(t, 2, u.calls.Load())
	s := c.Stats()
	assert.EqualValues(t, 2, s.Misses)
	assert.EqualValues(t, 6, s.BackendErrors, "two lookups and a store per miss")
}

func TestCacheClose(t *testing.T) {
	ctx := context.Background()
	c := cache.New(nil)
	u := &upstream{body: "v"}
	_, _, err := c.Do(ctx, "k", u.fetch)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close may be called twice")

	t.Run("a lookup after Close runs the upstream and counts nothing", func(t *testing.T) {
		before := c.Stats()
		e, hit, err := c.Do(ctx, "k", u.fetch)
		require.NoError(t, err)
		assert.False(t, hit)
		assert.Equal(t, "v#2", string(e.Body))
		_, ok := c.Get(ctx, "k")
		assert.False(t, ok)
		assert.Equal(t, before, c.Stats())
	})
	t.Run("Put and Delete after Close return ErrClosed", func(t *testing.T) {
		assert.ErrorIs(t, c.Put(ctx, "k", entry("v")), cache.ErrClosed)
		assert.ErrorIs(t, c.Delete(ctx, "k"), cache.ErrClosed)
	})
}

func TestCacheDeduplicatesConcurrentMisses(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		dontStore bool
		wantCalls int64 // with 8 lookups
	}{
		{"concurrent misses of one key run the upstream once", nil, false, 1},
		{"when the shared fetch fails each waiter runs its own", errors.New("boom"), false, 8},
		{"when the shared response is not stored each waiter runs its own", nil, true, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 8
			ctx := context.Background()
			c := cache.New(nil)
			defer c.Close()
			release := make(chan struct{})
			var calls atomic.Int64
			fetch := func(ctx context.Context) (cache.Entry, error) {
				if calls.Add(1) == 1 {
					<-release // the first fetch holds until every lookup started
				}
				if tt.dontStore {
					cache.DontStore(ctx)
				}
				return cache.Entry{Body: []byte("v")}, tt.err
			}
			var wg sync.WaitGroup
			var started sync.WaitGroup
			started.Add(n)
			results := make([]string, n)
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					started.Done()
					e, _, err := c.Do(ctx, "k", fetch)
					results[i], errs[i] = string(e.Body), err
				})
			}
			started.Wait()
			require.Eventually(t, func() bool { return calls.Load() >= 1 }, 30*time.Second, time.Millisecond)
			close(release)
			wg.Wait()
			assert.Equal(t, tt.wantCalls, calls.Load())
			for i := range n {
				if tt.err != nil {
					assert.ErrorIs(t, errs[i], tt.err)
				} else {
					require.NoError(t, errs[i])
					assert.Equal(t, "v", results[i])
				}
			}
			s := c.Stats()
			assert.EqualValues(t, n, s.Hits+s.Shared+s.Misses, "every lookup is counted once")
			assert.EqualValues(t, tt.wantCalls, s.Misses)
		})
	}
}

func TestCacheWaiterGivesUpWithItsContext(t *testing.T) {
	c := cache.New(nil)
	defer c.Close()
	release := make(chan struct{})
	entered := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, _ = c.Do(context.Background(), "k", func(context.Context) (cache.Entry, error) {
			close(entered)
			<-release
			return cache.Entry{Body: []byte("v")}, nil
		})
	}()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, hit, err := c.Do(ctx, "k", func(context.Context) (cache.Entry, error) {
		t.Error("the waiter does not run its own fetch")
		return cache.Entry{}, nil
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, hit)
	close(release)
	<-done
}

func TestCachePanicInFetchReleasesWaiters(t *testing.T) {
	c := cache.New(nil)
	defer c.Close()
	entered := make(chan struct{})
	release := make(chan struct{})
	go func() {
		defer func() { _ = recover() }()
		_, _, _ = c.Do(context.Background(), "k", func(context.Context) (cache.Entry, error) {
			close(entered)
			<-release
			panic("handler panicked")
		})
	}()
	<-entered
	got := make(chan string)
	go func() {
		e, _, _ := c.Do(context.Background(), "k", func(context.Context) (cache.Entry, error) {
			return cache.Entry{Body: []byte("own")}, nil
		})
		got <- string(e.Body)
	}()
	close(release)
	select {
	case body := <-got:
		assert.Equal(t, "own", body)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter is stuck")
	}
	assert.Panics(t, func() {
		_, _, _ = c.Do(context.Background(), "p", func(context.Context) (cache.Entry, error) { panic("again") })
	}, "a panic in fetch propagates to the caller that ran it")
}

func TestCacheConcurrentAccess(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	c := cache.New(&cache.Options{MaxEntries: 16, MaxBytes: 4 << 10, Now: clk.Now})
	defer c.Close()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 500 {
				key := fmt.Sprintf("k%d", (g*7+i)%40)
				switch i % 5 {
				case 0:
					_ = c.Put(ctx, key, entry(key))
				case 1:
					_ = c.Delete(ctx, key)
				case 2:
					clk.Advance(time.Minute)
				default:
					e, _, err := c.Do(ctx, key, func(context.Context) (cache.Entry, error) { return entry(key), nil })
					if assert.NoError(t, err) {
						assert.Equal(t, key, string(e.Body))
					}
				}
				if e, ok := c.Get(ctx, key); ok {
					assert.Equal(t, key, string(e.Body))
				}
			}
		})
	}
	wg.Wait()
}
