package store

import (
	"container/heap"
	"context"
	"fmt"
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
	// bookkeeping (roughly a hundred bytes plus the ID) are not counted;
	// MaxItems bounds them. Zero means 64 MiB.
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

// Memory is an in-memory [Store] bounded by bytes and entries.
//
// Each entry expires a fixed TTL after its Put: an entry put at t with ttl
// is returned by Get while now < t+ttl, and reads never extend it. When a Put
// would exceed MaxItems or MaxBytes, Memory evicts the entries closest to
// expiry first (already expired ones first of all; among equal expiries the
// oldest Put first) until the new entry fits; it never evicts the entry
// being put. Get removes the expired entry it finds, and a background
// goroutine, started by the first Put and stopped by Close, sweeps the others
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
	byExpiry expiryHeap
	bytes    int64
	seq      uint64
	closed   bool
	stop     chan struct{} // closed by Close to stop the sweeper; nil until it starts
	stopped  chan struct{} // closed by the sweeper when it returns
}

var _ Store = (*Memory)(nil)

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
	return m
}

// Put stores a copy of data under id for ttl, so the caller may reuse data
// afterwards. It replaces any entry under id, data and TTL alike; a ttl <= 0
// stores nothing and removes the entry. Data longer than MaxBytes is refused
// with an error wrapping [ErrTooLarge], leaving any previous entry in place.
// Otherwise Put evicts entries closest to expiry until the new one fits.
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
	// Copy outside the lock: large copies must not block readers.
	buf := make([]byte, size)
	copy(buf, data)

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if old, ok := m.entries[id]; ok {
		m.remove(old)
	}
	if ttl <= 0 {
		return nil
	}
	for len(m.byExpiry) > 0 && (len(m.entries)+1 > m.maxItems || m.bytes+size > m.maxBytes) {
		m.remove(m.byExpiry[0])
	}
	m.seq++
	e := &entry{id: id, data: buf, expires: m.now().Add(ttl), seq: m.seq}
	m.entries[id] = e
	heap.Push(&m.byExpiry, e)
	m.bytes += size
	if m.stop == nil {
		m.startSweeper()
	}
	return nil
}

// Get returns the data stored under id, or ok == false if there is none or
// it has expired; it removes an expired entry it finds. The returned slice is
// the store's own copy, capped so that appending to it reallocates; it must
// not be modified.
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
	if m.now().Before(e.expires) {
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
	if cur, ok := m.entries[id]; ok && cur == e {
		m.remove(e)
	}
	return nil, false, nil
}

// Close drops every entry and stops the sweeper; it has stopped when Close
// returns. Afterwards Put and Get return [ErrClosed]. Close always returns
// nil, and calling it again is safe.
func (m *Memory) Close() error {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.entries = nil
		m.byExpiry = nil
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

// Bytes returns the total length of the data held, counting expired entries
// that have not been removed yet. It is zero after Close.
func (m *Memory) Bytes() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.bytes
}

// remove drops e from the map, the heap and the byte count. m.mu must be
// held for writing.
func (m *Memory) remove(e *entry) {
	delete(m.entries, e.id)
	heap.Remove(&m.byExpiry, e.index)
	m.bytes -= int64(len(e.data))
}

// startSweeper starts the background sweep. m.mu must be held for writing.
func (m *Memory) startSweeper() {
	m.stop = make(chan struct{})
	m.stopped = make(chan struct{})
	go m.sweep(m.stop, m.stopped)
}

// sweep removes expired entries every sweepEvery until stop is closed.
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

// removeExpired removes every entry whose expiry has passed.
func (m *Memory) removeExpired() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	now := m.now()
	for len(m.byExpiry) > 0 && !now.Before(m.byExpiry[0].expires) {
		m.remove(m.byExpiry[0])
	}
}

// entry is one stored snapshot.
type entry struct {
	id      string
	data    []byte
	expires time.Time
	seq     uint64 // order of Put, to break ties between equal expiries
	index   int    // position in the expiry heap
}

// expiryHeap orders entries by expiry, then by Put order: the root is the
// next to expire, and the first to evict.
type expiryHeap []*entry

func (h expiryHeap) Len() int { return len(h) }

func (h expiryHeap) Less(i, j int) bool {
	if c := h[i].expires.Compare(h[j].expires); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}

func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *expiryHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *expiryHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return e
}
