package cache

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Defaults of [MemoryOptions] and [Options].
const (
	DefaultTTL        = time.Hour
	DefaultMaxEntries = 1000
	DefaultMaxBytes   = 64 << 20 // 64 MiB
)

// MemoryOptions configure [NewMemory]. The zero value (or a nil
// *MemoryOptions) gives the defaults described on each field.
type MemoryOptions struct {
	// MaxEntries bounds the number of entries. Zero means
	// [DefaultMaxEntries]; negative means no bound.
	MaxEntries int
	// MaxBytes bounds the bytes of the entries (key, body and content
	// type). Zero means [DefaultMaxBytes]; negative means no bound. An entry
	// larger than MaxBytes is not stored.
	MaxBytes int64
	// Now is the clock entries expire by. Nil means time.Now.
	Now func() time.Time
}

// Memory is an in-process [Backend]: a map with least-recently-used
// eviction, bounded by entries and bytes. An expired entry is dropped when
// it is read or when it reaches the end of the LRU order.
//
// A Memory is safe for concurrent use. The zero value is not usable; create
// one with [NewMemory].
type Memory struct {
	mu         sync.Mutex
	lru        list.List // of *item, most recently used first
	items      map[string]*list.Element
	bytes      int64
	maxEntries int
	maxBytes   int64
	now        func() time.Time
	closed     bool
}

type item struct {
	key     string
	entry   Entry
	expires time.Time
	size    int64
}

// NewMemory returns an empty Memory configured by opts (copied; nil means
// the defaults).
func NewMemory(opts *MemoryOptions) *Memory {
	var o MemoryOptions
	if opts != nil {
		o = *opts
	}
	m := &Memory{
		items:      make(map[string]*list.Element),
		maxEntries: o.MaxEntries,
		maxBytes:   o.MaxBytes,
		now:        o.Now,
	}
	if m.maxEntries == 0 {
		m.maxEntries = DefaultMaxEntries
	}
	if m.maxBytes == 0 {
		m.maxBytes = DefaultMaxBytes
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m
}

// Get returns the entry stored under key, and makes it the most recently
// used.
func (m *Memory) Get(_ context.Context, key string) (Entry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Entry{}, false, ErrClosed
	}
	el, ok := m.items[key]
	if !ok {
		return Entry{}, false, nil
	}
	it := el.Value.(*item)
	if !m.now().Before(it.expires) {
		m.remove(el)
		return Entry{}, false, nil
	}
	m.lru.MoveToFront(el)
	return it.entry, true, nil
}

// Set stores e under key for ttl as the most recently used entry, and
// evicts the least recently used entries beyond the bounds. An entry larger
// than MaxBytes is not stored (and replaces nothing: an older entry under
// key is removed).
func (m *Memory) Set(_ context.Context, key string, e Entry, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if el, ok := m.items[key]; ok {
		m.remove(el)
	}
	size := e.size(key)
	if ttl <= 0 || (m.maxBytes > 0 && size > m.maxBytes) {
		return nil
	}
	m.items[key] = m.lru.PushFront(&item{key: key, entry: e, expires: m.now().Add(ttl), size: size})
	m.bytes += size
	for (m.maxEntries > 0 && m.lru.Len() > m.maxEntries) || (m.maxBytes > 0 && m.bytes > m.maxBytes) {
		m.remove(m.lru.Back())
	}
	return nil
}

// Delete removes the entry stored under key, if any.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if el, ok := m.items[key]; ok {
		m.remove(el)
	}
	return nil
}

// Len returns the number of entries held, expired ones not yet dropped
// included.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Len()
}

// Bytes returns the bytes of the entries held, as counted against MaxBytes.
func (m *Memory) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

// Close drops every entry; afterwards Get, Set and Delete return
// [ErrClosed]. It always returns nil.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	clear(m.items)
	m.lru.Init()
	m.bytes = 0
	return nil
}

func (m *Memory) remove(el *list.Element) {
	it := m.lru.Remove(el).(*item)
	delete(m.items, it.key)
	m.bytes -= it.size
}
