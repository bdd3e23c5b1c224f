package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Defaults of [MemoryOptions].
const (
	DefaultMaxBytes      = 64 << 20 // 64 MiB
	DefaultMaxItems      = 10000
	DefaultSweepInterval = time.Minute
)

// MemoryOptions configure a [Memory]. The zero value (or a nil pointer) means
// the documented defaults. [NewMemory] copies the options, so changing them
// afterwards has no effect. Negative values are programming errors: NewMemory
// panics on them.
type MemoryOptions struct {
	// MaxBytes bounds the total length of the stored data. IDs and per-entry
	// bookkeeping (roughly two hundred bytes plus the ID, and a hundred more
	// per subject holding the entry) are not counted; MaxItems bounds them.
	// Zero means 64 MiB.
	MaxBytes int64
	// MaxItems bounds the number of entries. Zero means 10,000.
	MaxItems int
	// SweepInterval is how often a background goroutine removes expired
	// entries. Expired entries are never returned whatever the interval; the
	// sweep only gives back their memory early. Zero means one minute.
	SweepInterval time.Duration
	// Now is the clock that TTLs are measured with; it must be safe for
	// concurrent use. Nil means time.Now. Tests inject a fake clock.
	Now func() time.Time
}

// Memory is an in-memory [Store] bounded by bytes and entries, shared
// fairly between the subjects that put snapshots ([WithSubject]).
//
// # Claims
//
// Each Put is a claim of its subject ([SubjectFrom]) on the entry it puts,
// for its TTL: a claim put at t with ttl is live while now < t+ttl, and
// reads never extend it. Get returns an entry while any claim on it is
// live. Snapshots are keyed by their content ([IDOf]), so the same bytes
// put for two subjects are one entry, held once, with two claims; each
// subject is charged the entry's full length and one entry, as if it held
// the entry alone. A Put replaces the entry's data for all, but renews only
// its own subject's claim; a Put with ttl <= 0 drops only its own subject's
// claim. An entry is removed when its last claim goes. So no subject can
// shorten another's entry, nor push it out with its own load.
//
// # Shares and eviction
//
// A subject's share is 1/n of MaxBytes and 1/n of MaxItems, n being the
// number of subjects holding claims (the one putting included); its weight
// is the larger of its bytes/MaxBytes and its claims/MaxItems. When a Put
// would exceed MaxItems or MaxBytes, Memory drops claims until the new
// entry fits: expired claims first of all (closest to expiry first), then
// the claims of the heaviest subject, closest to expiry first (among equal
// expiries the oldest Put first). It never drops a claim on the entry being
// put, and never a claim of another subject within its share (at most
// MaxBytes/n bytes and MaxItems/n entries): when only such claims are left,
// Put fails with [ErrFull] and leaves any previous entry under its id as it
// was. A lone subject thus has the whole store, and one that floods it
// evicts its own entries, not those of a subject within its share.
//
// Get removes the expired entry it finds, and a background goroutine,
// started by the first Put and stopped by Close, sweeps expired claims
// every SweepInterval.
//
// Memory is safe for concurrent use. Create one with [NewMemory]; the zero
// value is not usable.
type Memory struct {
	maxBytes   int64
	maxItems   int
	sweepEvery time.Duration
	now        func() time.Time

	closeOnce sync.Once

	mu       sync.RWMutex
	entries  map[string]*entry
	subjects map[string]*subject // those holding claims, and the one putting
	byExpiry indexedHeap[*claim] // every attached claim, closest to expiry first
	byWeight indexedHeap[*subject]
	bytes    int64
	seq      uint64
	closed   bool
	stop     chan struct{} // closed by Close to stop the sweeper; nil until it starts
	stopped  chan struct{} // closed by the sweeper when it returns
}

var (
	_ Store       = (*Memory)(nil)
	_ RangeReader = (*Memory)(nil)
)

// NewMemory returns an empty Memory configured by opts; nil opts means every
// default. It panics if an option is negative. No goroutine runs until the
// first Put; call [Memory.Close] to stop it.
func NewMemory(opts *MemoryOptions) *Memory {
	var o MemoryOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.MaxBytes < 0:
		panic(fmt.Sprintf("store: negative MaxBytes %d", o.MaxBytes))
	case o.MaxItems < 0:
		panic(fmt.Sprintf("store: negative MaxItems %d", o.MaxItems))
	case o.SweepInterval < 0:
		panic(fmt.Sprintf("store: negative SweepInterval %v", o.SweepInterval))
	}
	m := &Memory{
		maxBytes:   o.MaxBytes,
		maxItems:   o.MaxItems,
		sweepEvery: o.SweepInterval,
		now:        o.Now,
		entries:    make(map[string]*entry),
		subjects:   make(map[string]*subject),
	}
	if m.maxBytes == 0 {
		m.maxBytes = DefaultMaxBytes
	}
	if m.maxItems == 0 {
		m.maxItems = DefaultMaxItems
	}
	if m.sweepEvery == 0 {
		m.sweepEvery = DefaultSweepInterval
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.byExpiry = indexedHeap[*claim]{less: (*claim).before, at: func(c *claim, i int) { c.at = i }}
	m.byWeight = indexedHeap[*subject]{less: m.heavier, at: func(s *subject, i int) { s.at = i }}
	return m
}

// Put stores a copy of data under id for ttl, as the claim of the subject
// [SubjectFrom](ctx), so the caller may reuse data afterwards. It replaces
// the entry's data, and the subject's claim on it (its TTL); a ttl <= 0
// stores nothing and drops the subject's claim, which removes the entry if
// no other subject claims it. Data longer than MaxBytes is refused with an
// error wrapping [ErrTooLarge], and data that fits only by evicting a claim
// of another subject within its share with one wrapping [ErrFull]; both
// leave any previous entry in place. Otherwise Put evicts as [Memory]
// describes until the new entry fits.
//
// Put returns ctx.Err() if ctx is done and [ErrClosed] after Close.
func (m *Memory) Put(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	size := int64(len(data))
	if size > m.maxBytes {
		// Checked before locking: the bound never changes.
		m.mu.RLock()
		closed := m.closed
		m.mu.RUnlock()
		if closed {
			return ErrClosed
		}
		return fmt.Errorf("%w: %d bytes, bound %d", ErrTooLarge, size, m.maxBytes)
	}
	name := SubjectFrom(ctx)
	var buf []byte
	if ttl > 0 {
		// Snapshots are keyed by their content, so the same data is put
		// again under its id by every request that makes it: share the
		// copy the store holds (never modified) instead of making another.
		// Compare and copy outside the lock: large copies must not block
		// readers.
		m.mu.RLock()
		if e := m.entries[id]; e != nil && len(e.data) == len(data) {
			buf = e.data
		}
		m.mu.RUnlock()
		if buf == nil || !bytes.Equal(buf, data) {
			buf = make([]byte, size)
			copy(buf, data)
		}
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	e := m.entries[id]
	if ttl <= 0 {
		if e != nil {
			if c := e.claimOf(name); c != nil {
				m.drop(c)
			}
		}
		return nil
	}
	s := m.subjects[name]
	if s == nil {
		s = newSubject(name)
		m.subjects[name] = s
	}
	if err := m.put(id, e, s, buf, m.now().Add(ttl)); err != nil {
		return err
	}
	if m.stop == nil {
		m.startSweeper()
	}
	return nil
}

// put makes room for buf under id (whose entry is e, nil if none) and
// stores it as s's claim until expires. m.mu must be held for writing.
func (m *Memory) put(id string, e *entry, s *subject, buf []byte, expires time.Time) error {
	size, old, newItems := int64(len(buf)), int64(0), 1
	var mine *claim
	if e != nil {
		old, newItems = int64(len(e.data)), 0
		mine = e.claimOf(s.name)
		m.detach(e) // the entry being put is never evicted
	}
	// Charge s now, so that it weighs what it will when room is made.
	charge, count := size, 1
	if mine != nil {
		charge, count = size-old, 0
	}
	m.charge(s, charge, count)
	if err := m.makeRoom(s, size-old, newItems); err != nil {
		m.charge(s, -charge, -count)
		if e != nil {
			m.attach(e)
		}
		if s.count == 0 {
			delete(m.subjects, s.name)
		}
		return err
	}
	if e == nil {
		e = &entry{id: id}
		m.entries[id] = e
	}
	if size != old {
		for _, c := range e.claims {
			if c != mine {
				m.charge(c.subject, size-old, 0)
			}
		}
	}
	m.bytes += size - old
	e.data = buf
	if mine == nil {
		mine = &claim{entry: e, subject: s, at: -1, own: -1}
		e.claims = append(e.claims, mine)
	}
	m.seq++
	mine.expires, mine.seq = expires, m.seq
	m.attach(e)
	return nil
}

// makeRoom drops claims until the store can take grow more bytes and
// newItems more entries, as [Memory] describes; s is the subject putting.
// The claims of the entry being put are detached: they are not candidates.
func (m *Memory) makeRoom(s *subject, grow int64, newItems int) error {
	now := m.now()
	for m.bytes+grow > m.maxBytes || len(m.entries)+newItems > m.maxItems {
		if m.byExpiry.len() > 0 && !now.Before(m.byExpiry.top().expires) {
			m.drop(m.byExpiry.top())
			continue
		}
		if m.byWeight.len() == 0 {
			return fmt.Errorf("%w: nothing left to evict", ErrFull) // cannot happen: the new entry fits MaxBytes
		}
		heaviest := m.byWeight.top()
		if heaviest != s && m.withinShare(heaviest) {
			return fmt.Errorf("%w: the other subjects are within their shares of %d subjects", ErrFull, len(m.subjects))
		}
		m.drop(heaviest.claims.top())
	}
	return nil
}

// withinShare reports whether s holds at most its share of both bounds.
func (m *Memory) withinShare(s *subject) bool {
	n := int64(len(m.subjects))
	return s.bytes <= m.maxBytes/n && int64(s.count) <= int64(m.maxItems)/n
}

// heavier orders subjects by weight, the larger of their shares of MaxBytes
// and MaxItems, heaviest first; then by bytes.
func (m *Memory) heavier(a, b *subject) bool {
	wa := max(float64(a.bytes)/float64(m.maxBytes), float64(a.count)/float64(m.maxItems))
	wb := max(float64(b.bytes)/float64(m.maxBytes), float64(b.count)/float64(m.maxItems))
	if wa != wb {
		return wa > wb
	}
	return a.bytes > b.bytes
}

// charge adds bytes and count to what s is charged. m.mu must be held for
// writing.
func (m *Memory) charge(s *subject, bytes int64, count int) {
	s.bytes += bytes
	s.count += count
	if s.at >= 0 {
		m.byWeight.fix(s.at)
	}
}

// detach takes e's claims out of the heaps, so that no eviction picks them.
// m.mu must be held for writing.
func (m *Memory) detach(e *entry) {
	for _, c := range e.claims {
		m.byExpiry.remove(c.at)
		s := c.subject
		s.claims.remove(c.own)
		if s.claims.len() == 0 {
			m.byWeight.remove(s.at)
		}
	}
}

// attach puts e's claims (back) into the heaps. m.mu must be held for
// writing.
func (m *Memory) attach(e *entry) {
	for _, c := range e.claims {
		m.byExpiry.push(c)
		s := c.subject
		s.claims.push(c)
		if s.at < 0 {
			m.byWeight.push(s)
		}
	}
}

// drop removes the claim c, and its entry if it was the last claim on it.
// c must be attached. m.mu must be held for writing.
func (m *Memory) drop(c *claim) {
	m.byExpiry.remove(c.at)
	s, e := c.subject, c.entry
	s.claims.remove(c.own)
	i := slices.Index(e.claims, c)
	e.claims = slices.Delete(e.claims, i, i+1)
	s.bytes -= int64(len(e.data))
	s.count--
	switch {
	case s.claims.len() == 0:
		m.byWeight.remove(s.at)
	default:
		m.byWeight.fix(s.at)
	}
	if s.count == 0 {
		delete(m.subjects, s.name)
	}
	if len(e.claims) == 0 {
		delete(m.entries, e.id)
		m.bytes -= int64(len(e.data))
	}
}

// Get returns the data stored under id, or ok == false if there is none or
// it has expired (no claim on it is live); it removes an expired entry it
// finds. The returned slice is the store's own copy, capped so that
// appending to it reallocates; it must not be modified.
//
// Get returns ctx.Err() if ctx is done and [ErrClosed] after Close.
func (m *Memory) Get(ctx context.Context, id string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return nil, false, ErrClosed
	}
	e, ok := m.entries[id]
	if !ok {
		m.mu.RUnlock()
		return nil, false, nil
	}
	if e.live(m.now()) {
		data := e.data[:len(e.data):len(e.data)]
		m.mu.RUnlock()
		return data, true, nil
	}
	m.mu.RUnlock()

	// Expired: remove it, unless a Put or a sweep got there first.
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, false, ErrClosed
	}
	if cur, ok := m.entries[id]; ok && cur == e && !e.live(m.now()) {
		for len(e.claims) > 0 {
			m.drop(e.claims[0])
		}
	}
	return nil, false, nil
}

// GetRange returns the bytes [start, end) of the data stored under id,
// clamped as [RangeReader] describes, without copying: the slice is part of
// the store's own copy, capped, and must not be modified. Otherwise it
// behaves as [Memory.Get].
func (m *Memory) GetRange(ctx context.Context, id string, start, end int64) ([]byte, bool, error) {
	data, ok, err := m.Get(ctx, id)
	if !ok || err != nil {
		return nil, ok, err
	}
	i, j := clampRange(start, end, len(data))
	return data[i:j:j], true, nil
}

// Close drops every entry and stops the sweeper; it has stopped when Close
// returns. Afterwards Put and Get return [ErrClosed]. Close always returns
// nil, and calling it again is safe.
func (m *Memory) Close() error {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.entries = nil
		m.subjects = nil
		m.byExpiry.items = nil
		m.byWeight.items = nil
		m.bytes = 0
		stop, stopped := m.stop, m.stopped
		m.mu.Unlock()
		if stop != nil {
			close(stop)
			<-stopped
		}
	})
	return nil
}

// Len returns the number of entries held, counting expired ones that have
// not been removed yet. It is zero after Close.
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.entries)
}

// Bytes returns the total length of the data held, each entry counted once
// however many subjects claim it, and expired entries that have not been
// removed yet included. It is zero after Close.
func (m *Memory) Bytes() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.bytes
}

// startSweeper starts the background sweep. m.mu must be held for writing.
func (m *Memory) startSweeper() {
	m.stop = make(chan struct{})
	m.stopped = make(chan struct{})
	go m.sweep(m.stop, m.stopped)
}

// sweep removes expired claims every sweepEvery until stop is closed.
func (m *Memory) sweep(stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	ticker := time.NewTicker(m.sweepEvery)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
			m.removeExpired()
		}
	}
}

// removeExpired removes every claim whose expiry has passed, and the
// entries left without one.
func (m *Memory) removeExpired() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	now := m.now()
	for m.byExpiry.len() > 0 && !now.Before(m.byExpiry.top().expires) {
		m.drop(m.byExpiry.top())
	}
}

// entry is one stored snapshot and the claims that keep it.
type entry struct {
	id     string
	data   []byte
	claims []*claim // one per subject, in the order they were made
}

// claimOf returns the claim of the subject named name on e, or nil.
func (e *entry) claimOf(name string) *claim {
	for _, c := range e.claims {
		if c.subject.name == name {
			return c
		}
	}
	return nil
}

// live reports whether a claim on e is live at now.
func (e *entry) live(now time.Time) bool {
	for _, c := range e.claims {
		if now.Before(c.expires) {
			return true
		}
	}
	return false
}

// claim is one subject's hold on an entry, until it expires.
type claim struct {
	entry   *entry
	subject *subject
	expires time.Time
	seq     uint64 // order of Put, to break ties between equal expiries
	at      int    // position in Memory.byExpiry; -1 when detached
	own     int    // position in subject.claims; -1 when detached
}

// before orders claims by expiry, then by Put order: the first is the next
// to expire, and the first to evict.
func (c *claim) before(d *claim) bool {
	if x := c.expires.Compare(d.expires); x != 0 {
		return x < 0
	}
	return c.seq < d.seq
}

// subject is what one subject holds and is charged.
type subject struct {
	name   string
	bytes  int64 // the lengths of the entries it claims
	count  int   // its claims, attached or not
	claims indexedHeap[*claim]
	at     int // position in Memory.byWeight; -1 while it has no attached claim
}

func newSubject(name string) *subject {
	return &subject{
		name:   name,
		claims: indexedHeap[*claim]{less: (*claim).before, at: func(c *claim, i int) { c.own = i }},
		at:     -1,
	}
}
