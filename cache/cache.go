package cache

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxfit/ctxfit"
)

// Options configure [New]. The zero value (or a nil *Options) gives the
// defaults described on each field.
type Options struct {
	// Backend holds the entries. Nil means a [Memory] bounded by
	// MaxEntries and MaxBytes on the clock Now, which [Cache.Close] closes;
	// a Backend passed here is not closed by the Cache.
	Backend Backend
	// TTL is how long an entry is served. Zero (or negative) means
	// [DefaultTTL], one hour.
	TTL time.Duration
	// MaxEntries bounds the entries of the default Memory backend (unused
	// with Backend set). Zero means [DefaultMaxEntries], 1,000; negative
	// means no bound.
	MaxEntries int
	// MaxBytes bounds the bytes of the default Memory backend (unused with
	// Backend set). Zero means [DefaultMaxBytes], 64 MiB; negative means no
	// bound.
	MaxBytes int64
	// Now is the clock of the default Memory backend. Nil means time.Now.
	Now func() time.Time
	// Cacheable reports whether [Wrap] may store a successful response to
	// req. Nil means: when its body is not empty. Errors are never stored.
	Cacheable func(req ctxfit.Request, resp ctxfit.Response) bool
}

// Stats are the counters of a [Cache] since it was created.
type Stats struct {
	// Hits counts lookups served from the backend.
	Hits uint64
	// Shared counts lookups that missed but were served the response
	// another, concurrent lookup of the same key fetched (singleflight).
	Shared uint64
	// Misses counts lookups that ran the upstream.
	Misses uint64
	// BackendErrors counts backend errors, each of which was treated as a
	// miss (Get) or ignored (Set).
	BackendErrors uint64
}

// HitRate is the share of lookups that did not run the upstream ((Hits +
// Shared) / all lookups); 0 when there were none.
func (s Stats) HitRate() float64 {
	n := s.Hits + s.Shared + s.Misses
	if n == 0 {
		return 0
	}
	return float64(s.Hits+s.Shared) / float64(n)
}

// Cache is a cache of upstream responses in front of a [Backend], with
// de-duplication of concurrent misses of the same key.
//
// A Cache is safe for concurrent use. A nil *Cache caches nothing: [Wrap]
// returns the Fetch it is given. The zero value is not usable; create one
// with [New] and release it with [Cache.Close].
type Cache struct {
	backend   Backend
	own       bool
	ttl       time.Duration
	cacheable func(ctxfit.Request, ctxfit.Response) bool
	closed    atomic.Bool

	mu    sync.Mutex
	calls map[string]*call // in flight, by key

	hits, shared, misses, errs atomic.Uint64
}

// call is a fetch in flight that concurrent lookups of its key wait for.
type call struct {
	done  chan struct{}
	entry Entry
	ok    bool // entry was stored and may be shared
}

// New returns a Cache configured by opts (copied; nil means the defaults).
func New(opts *Options) *Cache {
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Cache{backend: o.Backend, ttl: o.TTL, cacheable: o.Cacheable, calls: make(map[string]*call)}
	if c.backend == nil {
		c.backend = NewMemory(&MemoryOptions{MaxEntries: o.MaxEntries, MaxBytes: o.MaxBytes, Now: o.Now})
		c.own = true
	}
	if c.ttl <= 0 {
		c.ttl = DefaultTTL
	}
	if c.cacheable == nil {
		c.cacheable = func(_ ctxfit.Request, resp ctxfit.Response) bool { return len(resp.Body) > 0 }
	}
	return c
}

// Get returns the entry stored under key, counting a hit or a miss. A
// backend error is a miss. After Close, Get finds nothing and counts
// nothing.
func (c *Cache) Get(ctx context.Context, key string) (Entry, bool) {
	if c.closed.Load() {
		return Entry{}, false
	}
	e, ok := c.get(ctx, key)
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return e, ok
}

// Put stores a copy of e under key for the Cache's TTL. It returns the
// backend's error, or [ErrClosed] after Close.
func (c *Cache) Put(ctx context.Context, key string, e Entry) error {
	if c.closed.Load() {
		return ErrClosed
	}
	return c.put(ctx, key, clone(e))
}

// Delete removes the entry stored under key, if any.
func (c *Cache) Delete(ctx context.Context, key string) error {
	if c.closed.Load() {
		return ErrClosed
	}
	return c.backend.Delete(ctx, key)
}

// Do returns the entry stored under key, or else runs fetch, stores its
// entry (unless fetch returns an error or calls [DontStore] with the
// context it was given) and returns it. hit reports whether fetch was not
// run: the entry came from the backend, or from a concurrent Do of the same
// key whose fetch ran meanwhile.
//
// Concurrent misses of the same key run one fetch; the others wait for it
// (or for their own ctx) and share its entry. When that fetch fails or its
// entry is not stored, each waiter runs its own fetch. A panic in fetch
// propagates to the Do that ran it; its waiters run their own fetch.
//
// After Close, Do runs fetch and stores nothing.
func (c *Cache) Do(ctx context.Context, key string, fetch func(context.Context) (Entry, error)) (e Entry, hit bool, err error) {
	e, o, err := c.do(ctx, key, fetch)
	return e, o == outcomeHit || o == outcomeShared, err
}

// Stats returns the counters of the Cache.
func (c *Cache) Stats() Stats {
	return Stats{Hits: c.hits.Load(), Shared: c.shared.Load(), Misses: c.misses.Load(), BackendErrors: c.errs.Load()}
}

// Close stops the Cache: afterwards lookups run the upstream and store
// nothing. It closes the backend the Cache created (dropping its entries),
// not a Backend passed in [Options]. Close may be called more than once; it
// returns the backend's error.
func (c *Cache) Close() error {
	if c.closed.Swap(true) || !c.own {
		return nil
	}
	return c.backend.Close()
}

// outcome is what a lookup came to.
type outcome int

const (
	outcomeBypass outcome = iota // no lookup (closed cache)
	outcomeMiss
	outcomeHit
	outcomeShared
)

func (c *Cache) do(ctx context.Context, key string, fetch func(context.Context) (Entry, error)) (Entry, outcome, error) {
	if c.closed.Load() {
		e, _, err := run(ctx, fetch)
		return e, outcomeBypass, err
	}
	if e, ok := c.get(ctx, key); ok {
		c.hits.Add(1)
		return e, outcomeHit, nil
	}
	c.mu.Lock()
	if cl, ok := c.calls[key]; ok {
		c.mu.Unlock()
		select {
		case <-cl.done:
			if cl.ok {
				c.shared.Add(1)
				return cl.entry, outcomeShared, nil
			}
		case <-ctx.Done():
			return Entry{}, outcomeMiss, context.Cause(ctx)
		}
		// The fetch we waited for failed or was not stored: run our own.
		c.misses.Add(1)
		e, store, err := run(ctx, fetch)
		if err == nil && store {
			_ = c.put(ctx, key, clone(e))
		}
		return e, outcomeMiss, err
	}
	cl := &call{done: make(chan struct{})}
	c.calls[key] = cl
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, key)
		c.mu.Unlock()
		close(cl.done)
	}()
	// A concurrent fetch of key may have been stored between our lookup and
	// our taking the call: look once more.
	if e, ok := c.get(ctx, key); ok {
		c.hits.Add(1)
		cl.entry, cl.ok = e, true
		return e, outcomeHit, nil
	}
	c.misses.Add(1)
	e, store, err := run(ctx, fetch)
	if err == nil && store {
		stored := clone(e)
		if c.put(ctx, key, stored) == nil {
			cl.entry, cl.ok = stored, true
		}
	}
	return e, outcomeMiss, err
}

func (c *Cache) get(ctx context.Context, key string) (Entry, bool) {
	e, ok, err := c.backend.Get(ctx, key)
	if err != nil {
		c.errs.Add(1)
		return Entry{}, false
	}
	return e, ok
}

// put stores e, which it does not copy.
func (c *Cache) put(ctx context.Context, key string, e Entry) error {
	err := c.backend.Set(context.WithoutCancel(ctx), key, e, c.ttl)
	if err != nil {
		c.errs.Add(1)
	}
	return err
}

func clone(e Entry) Entry {
	return Entry{Body: bytes.Clone(e.Body), ContentType: e.ContentType}
}

// run runs fetch with a context on which it can call [DontStore], and
// reports whether its entry may be stored.
func run(ctx context.Context, fetch func(context.Context) (Entry, error)) (Entry, bool, error) {
	var keep storeFlag
	e, err := fetch(context.WithValue(ctx, storeKey{}, &keep))
	return e, !keep.no.Load(), err
}

type storeKey struct{}

type storeFlag struct{ no atomic.Bool }

// DontStore tells the [Cache] whose fetch runs with ctx (in [Cache.Do] or
// a Fetch made by [Wrap]) not to store the response being fetched: for
// example an HTTP response with a status other than 200. Concurrent lookups
// of the same key then run their own fetch. Outside such a fetch it does
// nothing.
func DontStore(ctx context.Context) {
	if f, ok := ctx.Value(storeKey{}).(*storeFlag); ok {
		f.no.Store(true)
	}
}
