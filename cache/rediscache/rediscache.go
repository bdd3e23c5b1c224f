// Package rediscache is a [cache.Backend] on Redis, so that several
// instances share one response cache.
//
// It works with any [redis.UniversalClient] (a single node, a cluster, a
// sentinel setup). Entries expire by Redis's own clock (SET with PX);
// eviction beyond Redis's memory is Redis's maxmemory-policy
// (allkeys-lru matches the in-memory backend).
package rediscache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ctxfit/ctxfit/cache"
)

// DefaultPrefix is what [Options.Prefix] means when empty.
const DefaultPrefix = "ctxfit:cache:"

// Options configure [New]. The zero value (or a nil *Options) gives the
// defaults described on each field.
type Options struct {
	// Prefix is prepended to every key. Empty means [DefaultPrefix].
	Prefix string
}

// Backend is a [cache.Backend] on a Redis client.
//
// A Backend is safe for concurrent use (as the client is). The zero value
// is not usable; create one with [New].
type Backend struct {
	client redis.UniversalClient
	prefix string
	closed atomic.Bool
}

var _ cache.Backend = (*Backend)(nil)

// New returns a Backend that stores entries through client, configured by
// opts (copied; nil means the defaults). The caller keeps ownership of
// client: [Backend.Close] does not close it.
func New(client redis.UniversalClient, opts *Options) *Backend {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	return &Backend{client: client, prefix: o.Prefix}
}

// Get returns the entry stored under key.
func (b *Backend) Get(ctx context.Context, key string) (cache.Entry, bool, error) {
	if b.closed.Load() {
		return cache.Entry{}, false, cache.ErrClosed
	}
	data, err := b.client.Get(ctx, b.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return cache.Entry{}, false, nil
	}
	if err != nil {
		return cache.Entry{}, false, fmt.Errorf("rediscache: %w", err)
	}
	e, err := decode(data)
	if err != nil {
		return cache.Entry{}, false, err
	}
	return e, true, nil
}

// Set stores e under key for ttl.
func (b *Backend) Set(ctx context.Context, key string, e cache.Entry, ttl time.Duration) error {
	if b.closed.Load() {
		return cache.ErrClosed
	}
	if err := b.client.Set(ctx, b.prefix+key, encode(e), ttl).Err(); err != nil {
		return fmt.Errorf("rediscache: %w", err)
	}
	return nil
}

// Delete removes the entry stored under key, if any.
func (b *Backend) Delete(ctx context.Context, key string) error {
	if b.closed.Load() {
		return cache.ErrClosed
	}
	if err := b.client.Del(ctx, b.prefix+key).Err(); err != nil {
		return fmt.Errorf("rediscache: %w", err)
	}
	return nil
}

// Close makes the Backend refuse further use with [cache.ErrClosed]. It
// does not close the client and always returns nil.
func (b *Backend) Close() error {
	b.closed.Store(true)
	return nil
}

// encode writes an entry as: uvarint length of the content type, the
// content type, the body.
func encode(e cache.Entry) []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(e.ContentType)+len(e.Body))
	b = binary.AppendUvarint(b, uint64(len(e.ContentType)))
	b = append(b, e.ContentType...)
	return append(b, e.Body...)
}

func decode(data []byte) (cache.Entry, error) {
	n, w := binary.Uvarint(data)
	if w <= 0 || n > uint64(len(data)-w) {
		return cache.Entry{}, errors.New("rediscache: malformed entry")
	}
	ct := data[w : w+int(n)]
	return cache.Entry{ContentType: string(ct), Body: data[w+int(n):]}, nil
}
