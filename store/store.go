// Package store keeps response snapshots for the lifetime of their cursors,
// so that page 2 shows the same data page 1 saw.
//
// [Store] is the interface; [Memory] is the in-memory implementation,
// bounded by bytes and entries and shared fairly between subjects. Other
// implementations (Redis, in store/redisstore) pass the same conformance
// suite, [storetest.Run]. [NewID] and [IDOf] make the IDs that snapshots are
// stored under.
//
// # Subjects
//
// A snapshot is put for a subject: the tenant, user or credential digest
// that the request was made for, carried by the context ([WithSubject],
// [SubjectFrom]). "" is a subject like any other. Stores use it to keep one
// subject from crowding out the others: [Memory] gives each subject a share
// of its bounds and evicts within the heaviest subject first; the Redis
// store keeps a byte budget per subject. Get does not look at the subject:
// whoever holds an ID (sealed in a cursor) reads the snapshot.
//
// # Degrading
//
// A Put can fail without the backend being down: [ErrTooLarge] says the
// entry can never fit, [ErrFull] that there is no room for it now. In both
// cases the caller answers without a snapshot (nothing to continue from)
// instead of failing the request; [ErrUnavailable] is for a backend that
// cannot be reached or does not answer within its deadline.
//
// [storetest.Run]: https://pkg.go.dev/github.com/ctxfit/ctxfit/store/storetest#Run
package store

import (
	"context"
	"errors"
	"time"
)

// DefaultTimeout is the deadline of one call to a store whose backend is
// reached over the network (the Redis store's Options.Timeout and the
// storeTimeout setting, when zero).
const DefaultTimeout = 500 * time.Millisecond

// Store keeps byte snapshots under string IDs, each for a fixed time.
//
// Implementations must be safe for concurrent use. Every method takes a
// context and honours its cancellation: a call whose context is already done
// returns an error wrapping ctx.Err() (so errors.Is(err, context.Canceled)
// holds) without waiting on the backend, and a call whose context is
// cancelled while it waits returns promptly. Errors are returned only for backend
// failures (a network error, a closed store, a done context) and for data
// that does not fit: a missing or expired entry is not an error, Get reports
// it with ok == false. Errors wrap [ErrUnavailable] when the backend cannot
// be reached, [ErrClosed] after Close, and [ErrTooLarge] or [ErrFull] when
// Put has no room, so callers can tell "retry later" from "gone" from
// "answer without a snapshot".
//
// Call order: Put and Get in any order from any goroutine; Close once, after
// which every Put and Get returns [ErrClosed]. Calling Close again is safe and
// returns nil.
type Store interface {
	// Put stores data under id for ttl, for the subject [SubjectFrom](ctx).
	// The TTL is fixed: reads never extend it. Putting an existing id
	// replaces its data and its TTL. The store may keep its own copy or the
	// slice itself; callers must not modify data after Put. ([Memory]
	// copies it.)
	// A store over its bounds makes room by evicting (expired entries first,
	// then those closest to expiry or least recently used), never the entry
	// being put, and never to the detriment of a subject within its share;
	// data larger than the store may ever hold for one subject is refused
	// with [ErrTooLarge], data it cannot make room for now with [ErrFull].
	Put(ctx context.Context, id string, data []byte, ttl time.Duration) error
	// Get returns the data stored under id, with ok == false when there is
	// none or it has expired. The returned slice must not be modified.
	Get(ctx context.Context, id string) (data []byte, ok bool, err error)
	// Close releases the store's resources; background goroutines have
	// stopped when it returns.
	Close() error
}

// RangeReader is implemented by stores that can read part of a snapshot
// without reading all of it: a continuation then costs what its page
// weighs, not what the whole response does. Use it through a type
// assertion and fall back to [Store.Get]:
//
//	if rr, ok := st.(store.RangeReader); ok {
//		data, ok, err = rr.GetRange(ctx, id, start, end)
//	}
//
// GetRange returns the bytes [start, end) of the data stored under id: the
// bytes data[start:end] of what Get would return, with start and end
// clamped to [0, len(data)] and end to at least start, as Redis's GETRANGE
// clamps. A range that reaches past the end gives the bytes up to the end;
// one that starts at or after the end, or an empty one (end <= start), gives
// an empty slice, with ok == true when the entry exists. ok == false means
// there is no entry, as for Get; errors are Get's. The returned slice must
// not be modified. Implementations are safe for concurrent use.
type RangeReader interface {
	GetRange(ctx context.Context, id string, start, end int64) (data []byte, ok bool, err error)
}

// Errors of a Store. Test with errors.Is.
var (
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
	// ErrUnavailable: the backend cannot be reached, or did not answer
	// within its deadline; retry later.
	ErrUnavailable = errors.New("store: unavailable; retry later")
	// ErrTooLarge: the data exceeds what the store may ever hold for one
	// entry (its byte bound, or a subject's budget).
	ErrTooLarge = errors.New("store: entry larger than the store's byte bound")
	// ErrFull: the store has no room for the data now without evicting
	// what it must keep (another subject's share, or anything when the
	// backend refuses writes, like Redis at maxmemory with noeviction). The
	// store works: answer without a snapshot and retry with the next one.
	ErrFull = errors.New("store: full; no room for the entry now")
)

// subjectKey is the context key of the subject.
type subjectKey struct{}

// WithSubject returns a copy of ctx that carries subject: the tenant, user
// or credential digest that snapshots put with it are charged to. "" is a
// subject like any other, the one of a context that carries none.
func WithSubject(ctx context.Context, subject string) context.Context {
	return context.WithValue(ctx, subjectKey{}, subject)
}

// SubjectFrom returns the subject ctx carries ([WithSubject]), or "" when it
// carries none.
func SubjectFrom(ctx context.Context) string {
	s, _ := ctx.Value(subjectKey{}).(string)
	return s
}

// clampRange returns the bounds of [start, end) within data of length n,
// as [RangeReader] defines them.
func clampRange(start, end int64, n int) (int, int) {
	start = min(max(start, 0), int64(n))
	end = min(max(end, start), int64(n))
	return int(start), int(end)
}
