package cache

import (
	"context"
	"errors"
	"time"
)

// ErrClosed is returned by a [Backend] used after Close.
var ErrClosed = errors.New("cache: closed")

// Entry is a cached upstream response: its body and its media type.
//
// The slices of an Entry returned by a [Backend] or a [Cache] are shared
// with the cache and must not be modified.
type Entry struct {
	Body        []byte
	ContentType string
}

// size is what an entry stored under key counts against a byte bound.
func (e Entry) size(key string) int64 {
	return int64(len(key) + len(e.Body) + len(e.ContentType))
}

// Backend holds cache entries. Implementations must be safe for concurrent
// use.
//
// Get returns the entry stored under key and true, or false with a nil error
// when there is none or it has expired. Set stores e under key for ttl
// (always > 0), replacing any entry; it may keep e's slices (the [Cache]
// passes a copy it does not touch again) and may decline to store an entry
// (for example one larger than its bound) without an error. Delete removes
// the entry, if any. Errors are for a backend that cannot answer (a lost
// connection, [ErrClosed]); the [Cache] treats them as misses.
//
// Close releases the backend's resources; afterwards the other methods
// return [ErrClosed]. Close may be called more than once.
type Backend interface {
	Get(ctx context.Context, key string) (Entry, bool, error)
	Set(ctx context.Context, key string, e Entry, ttl time.Duration) error
	Delete(ctx context.Context, key string) error
	Close() error
}
