// Package store keeps response snapshots for the lifetime of their cursors,
// so that page 2 shows the same data page 1 saw.
//
// [Store] is the interface; [Memory] is the in-memory implementation,
// bounded by bytes and entries. Other implementations (Redis, in a later
// package) pass the same conformance suite, [storetest.Run]. [NewID] makes
// the unguessable IDs that snapshots are stored under.
//
// [storetest.Run]: https://pkg.go.dev/github.com/ctxfit/ctxfit/store/storetest#Run
package store

import (
	"context"
	"errors"
	"time"
)

// Store keeps byte snapshots under string IDs, each for a fixed time.
//
// Implementations must be safe for concurrent use. Every method takes a
// context and honours its cancellation: a call whose context is already done
// returns an error wrapping ctx.Err() (so errors.Is(err, context.Canceled)
// holds) without waiting on the backend, and a call whose context is
// cancelled while it waits returns promptly. Errors are returned only for backend
// failures (a network error, a closed store, a done context): a missing or
// expired entry is not an error, Get reports it with ok == false. Errors wrap
// [ErrUnavailable] when the backend cannot be reached and [ErrClosed] after
// Close, so callers can tell "retry later" from "gone".
//
// Call order: Put and Get in any order from any goroutine; Close once, after
// which every Put and Get returns [ErrClosed]. Calling Close again is safe and
// returns nil.
type Store interface {
	// Put stores data under id for ttl. The TTL is fixed: reads never extend
	// it. Putting an existing id replaces its data and its TTL. The store may
	// keep its own copy or the slice itself; callers must not modify data
	// after Put. ([Memory] copies it.)
	// A store over its bounds evicts the entries closest to expiry first
	// (or least recently used), never the one being put; data larger than the
	// whole store's byte bound is refused with [ErrTooLarge].
	Put(ctx context.Context, id string, data []byte, ttl time.Duration) error
	// Get returns the data stored under id, with ok == false when there is
	// none or it has expired. The returned slice must not be modified.
	Get(ctx context.Context, id string) (data []byte, ok bool, err error)
	// Close releases the store's resources; background goroutines have
	// stopped when it returns.
	Close() error
}

// Errors of a Store. Test with errors.Is.
var (
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
	// ErrUnavailable: the backend cannot be reached; retry later.
	ErrUnavailable = errors.New("store: unavailable; retry later")
	// ErrTooLarge: the data exceeds what the store may hold.
	ErrTooLarge = errors.New("store: entry larger than the store's byte bound")
)
