package cache

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
	// Now is the clock of the default Memory backend, and the one that
	// [Cache.LookupHTTP] reads a response's Expires and Date by. Nil means time.Now.
	Now func() time.Time
	// Cacheable reports whether a [Lookup] may store the entry e that its
	// fetch returned for req (the rules of [Cache.LookupHTTP] apply as
	// well). Nil means: when its body is not empty. Errors are never stored.
	Cacheable func(req Request, e Entry) bool
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
// A Cache is safe for concurrent use. A nil *Cache caches nothing: its
// [Cache.Lookup] and [Cache.LookupHTTP] return a nil *Lookup. The zero value is not usable; create one
// with [New] and release it with [Cache.Close].
type Cache struct {
	backend   Backend
	own       bool
	ttl       time.Duration
	now       func() time.Time
	cacheable func(Request, Entry) bool
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
	// vary and variant: the request header fields the entry varies on,
	// and the key it was stored under; a waiter shares the entry only if
	// its own header selects the same variant.
	vary    []string
	variant string
}

// fits reports whether cl's entry answers a lookup of t.
func (cl *call) fits(t target) bool {
	return len(cl.vary) == 0 || variantKey(t.key, cl.vary, t.header) == cl.variant
}

// target is what a lookup reads and fills: the key, and for lookups under
// HTTP rules ([Cache.LookupHTTP]) the request header that selects a variant.
type target struct {
	key    string
	http   bool
	header map[string][]string
}

// New returns a Cache configured by opts (copied; nil means the defaults).
func New(opts *Options) *Cache {
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Cache{backend: o.Backend, ttl: o.TTL, now: o.Now, cacheable: o.Cacheable, calls: make(map[string]*call)}
	if c.backend == nil {
		c.backend = NewMemory(&MemoryOptions{MaxEntries: o.MaxEntries, MaxBytes: o.MaxBytes, Now: o.Now})
		c.own = true
	}
	if c.ttl <= 0 {
		c.ttl = DefaultTTL
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.cacheable == nil {
		c.cacheable = func(_ Request, e Entry) bool { return len(e.Body) > 0 }
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
	return c.put(ctx, key, clone(e), c.ttl)
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
	e, o, err := c.do(ctx, target{key: key}, fetch)
	return e, o.Hit(), err
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

// Outcome is what a lookup came to: where its entry came from.
type Outcome int

const (
	// Bypassed: the Cache was closed; the fetch ran and nothing was stored.
	Bypassed Outcome = iota
	// Missed: the fetch ran (and its entry was stored, if allowed).
	Missed
	// Found: the entry was stored in the backend.
	Found
	// Shared: a concurrent lookup of the same key fetched the entry.
	Shared
)

// Hit reports whether the fetch did not run: the entry was Found or Shared.
func (o Outcome) Hit() bool { return o == Found || o == Shared }

func (c *Cache) do(ctx context.Context, t target, fetch func(context.Context) (Entry, error)) (Entry, Outcome, error) {
	if c.closed.Load() {
		e, _, err := c.run(ctx, t, fetch)
		return e, Bypassed, err
	}
	f, ok := c.lookup(ctx, t)
	if ok {
		c.hits.Add(1)
		return f.entry, Found, nil
	}
	flight := f.key
	c.mu.Lock()
	if cl, ok := c.calls[flight]; ok {
		c.mu.Unlock()
		select {
		case <-cl.done:
			if cl.ok && cl.fits(t) {
				c.shared.Add(1)
				return cl.entry, Shared, nil
			}
		case <-ctx.Done():
			return Entry{}, Missed, context.Cause(ctx)
		}
		// The fetch we waited for failed, was not stored or is another
		// variant: run our own.
		c.misses.Add(1)
		e, v, err := c.run(ctx, t, fetch)
		if err == nil && v.store {
			_, _ = c.store(ctx, t, clone(e), v)
		}
		return e, Missed, err
	}
	cl := &call{done: make(chan struct{})}
	c.calls[flight] = cl
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, flight)
		c.mu.Unlock()
		close(cl.done)
	}()
	// A concurrent fetch of the key may have been stored between our lookup
	// and our taking the call: look once more.
	if f, ok := c.lookup(ctx, t); ok {
		c.hits.Add(1)
		cl.entry, cl.ok, cl.vary, cl.variant = f.entry, true, f.vary, f.key
		return f.entry, Found, nil
	}
	c.misses.Add(1)
	e, v, err := c.run(ctx, t, fetch)
	if err == nil && v.store {
		stored := clone(e)
		if key, err := c.store(ctx, t, stored, v); err == nil {
			cl.entry, cl.ok = stored, true
			cl.vary, cl.variant = v.vary, key
		}
	}
	return e, Missed, err
}

// found is what a lookup found, or where it looked last.
type found struct {
	entry Entry
	// key is where the entry is (or would be): t's key, or the key of the
	// variant that t's header selects when the response stored for t's key
	// varies. Concurrent misses of t wait on it.
	key  string
	vary []string // the fields the variant is selected by
}

// lookup returns the entry that t finds, if any.
func (c *Cache) lookup(ctx context.Context, t target) (found, bool) {
	if e, ok := c.get(ctx, t.key); ok || !t.http {
		return found{entry: e, key: t.key}, ok
	}
	m, ok := c.get(ctx, markerKey(t.key))
	if !ok {
		return found{key: t.key}, false
	}
	vary := strings.Split(string(m.Body), "\n")
	key := variantKey(t.key, vary, t.header)
	e, ok := c.get(ctx, key)
	return found{entry: e, key: key, vary: vary}, ok
}

// store stores e for t as the verdict v of its fetch says, and returns the
// key it is stored under: t's key, or a variant's when e varies with the
// request header, with a marker under t's key that names the fields.
func (c *Cache) store(ctx context.Context, t target, e Entry, v verdict) (string, error) {
	ttl := c.ttl
	if v.ttl > 0 && v.ttl < ttl {
		ttl = v.ttl
	}
	if len(v.vary) == 0 {
		return t.key, c.put(ctx, t.key, e, ttl)
	}
	key := variantKey(t.key, v.vary, t.header)
	if err := c.put(ctx, markerKey(t.key), Entry{Body: []byte(strings.Join(v.vary, "\n"))}, c.ttl); err != nil {
		return "", err
	}
	// An entry stored before the response varied would be found first.
	_ = c.backend.Delete(context.WithoutCancel(ctx), t.key)
	return key, c.put(ctx, key, e, ttl)
}

func (c *Cache) get(ctx context.Context, key string) (Entry, bool) {
	e, ok, err := c.backend.Get(ctx, key)
	if err != nil {
		c.errs.Add(1)
		return Entry{}, false
	}
	return e, ok
}

// put stores e, which it does not copy, for ttl.
func (c *Cache) put(ctx context.Context, key string, e Entry, ttl time.Duration) error {
	err := c.backend.Set(context.WithoutCancel(ctx), key, e, ttl)
	if err != nil {
		c.errs.Add(1)
	}
	return err
}

func clone(e Entry) Entry {
	return Entry{Body: bytes.Clone(e.Body), ContentType: e.ContentType}
}

// verdict is what a fetch said about storing its entry.
type verdict struct {
	store bool
	ttl   time.Duration // > 0: store for at most this long
	vary  []string      // the request header fields the entry varies on
}

// run runs fetch for a lookup of t with a context on which it can call
// [DontStore] and [ResponseHeader], and returns their verdict.
func (c *Cache) run(ctx context.Context, t target, fetch func(context.Context) (Entry, error)) (Entry, verdict, error) {
	f := &fetchFlags{now: c.now, needHeader: t.http}
	e, err := fetch(context.WithValue(ctx, storeKey{}, f))
	f.mu.Lock()
	defer f.mu.Unlock()
	return e, verdict{store: !f.no && (f.heard || !f.needHeader), ttl: f.ttl, vary: f.vary}, err
}

type storeKey struct{}

// fetchFlags is what a running fetch tells its Cache about its entry.
type fetchFlags struct {
	now        func() time.Time
	needHeader bool // store only once ResponseHeader allowed it
	mu         sync.Mutex
	no         bool // DontStore, or a header that forbids storing
	heard      bool // ResponseHeader allowed storing
	ttl        time.Duration
	vary       []string
}

// flagsOf returns the flags of the fetch that runs with ctx, or nil.
func flagsOf(ctx context.Context) *fetchFlags {
	f, _ := ctx.Value(storeKey{}).(*fetchFlags)
	return f
}

// DontStore tells the [Cache] whose fetch runs with ctx (in [Cache.Do] or
// [Lookup.Do]) not to store the response being
// fetched: for example an HTTP response with a status other than 200.
// Concurrent lookups of the same key then run their own fetch. Outside such
// a fetch it does nothing.
func DontStore(ctx context.Context) {
	if f := flagsOf(ctx); f != nil {
		f.mu.Lock()
		f.no = true
		f.mu.Unlock()
	}
}
