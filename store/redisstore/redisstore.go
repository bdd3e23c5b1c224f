// Package redisstore is a Redis implementation of [store.Store], so that
// several instances of a service share snapshots: a cursor issued by one is
// honoured by another that has the same secret and the same Redis.
//
// It works with any [redis.UniversalClient] (a single node, a cluster, a
// failover client) from github.com/redis/go-redis/v9: wrap one with [New],
// or let [Open] or [FromConfig] build a client from a redis:// URL (the
// CTXFIT_REDIS_URL variable, the redisURL settings key).
//
// Each snapshot is one string key, the prefix followed by the snapshot's
// unguessable ID ([store.NewID]), written with SET ... PX ttl and read with
// GET, which never extends the TTL. Redis measures the TTLs with its own
// clock.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/store"
)

// DefaultPrefix is the key prefix when [Options.Prefix] is empty.
const DefaultPrefix = "ctxfit:snap:"

// Options configure a [Store]. The zero value (or a nil pointer) means the
// defaults. [New] copies them.
type Options struct {
	// Prefix is put before every snapshot ID to make its key, so snapshots
	// share a Redis with other data. Empty means "ctxfit:snap:".
	Prefix string
}

// Store is a [store.Store] on Redis.
//
// Put writes with SET key value PX ttl (a ttl of 0 or less deletes the key);
// Get reads with GET. A missing or expired key is ok == false. Errors from
// Redis (a refused connection, a timeout, a cluster without a node for the
// key) wrap [store.ErrUnavailable]; go-redis reconnects by itself, so the
// Store works again once Redis is back. After Close every call returns
// [store.ErrClosed]. A call returns ctx.Err() as soon as ctx is done, even
// while Redis does not answer (the command may still complete afterwards;
// a snapshot so written expires with its TTL). Redis holds at most 512 MB
// per value; Store does not bound the total, Redis's maxmemory does.
//
// Store is safe for concurrent use. Create one with [New], [Open] or
// [FromConfig]; the zero value is not usable.
type Store struct {
	client    redis.UniversalClient
	prefix    string
	ownClient bool
	closed    atomic.Bool
}

var _ store.Store = (*Store)(nil)

// New returns a Store over client, configured by opts (nil means the
// defaults). Close does not close client; the caller does, after it.
func New(client redis.UniversalClient, opts *Options) *Store {
	if client == nil {
		panic("redisstore: nil client")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	return &Store{client: client, prefix: o.Prefix}
}

// Open returns a Store over a new client for rawURL, which Close closes.
// rawURL is a single node's "redis://[user:password@]host:port/db" (or
// "rediss://" for TLS, with the options redis.ParseURL reads), or a cluster's
// "redis://[user:password@]host:port?addr=host2:port2&addr=host3:port3"
// (redis.ParseClusterURL). Open does not connect: an unreachable Redis shows
// as [store.ErrUnavailable] on the first Put or Get. Errors never echo the
// URL, which may hold a password.
//
// Unless the URL sets max_retries, dialer_retries or dialer_retry_timeout,
// a failed command is retried once and a failed dial once after 50 ms:
// while Redis refuses connections, a request gets its 503 (Retry-After) in
// tens of milliseconds instead of the 1.7 s go-redis's defaults take. A
// Redis that does not answer at all is bounded by dial_timeout (5 s by
// default) and by the request's context.
func Open(rawURL string, opts *Options) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("redisstore: the Redis URL (not shown) is malformed: want redis://host:port/db")
	}
	q := u.Query()
	var client redis.UniversalClient
	if q.Has("addr") {
		o, err := redis.ParseClusterURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redisstore: the Redis cluster URL (not shown) is malformed: %s", redact(err, u))
		}
		failFast(q, &o.MaxRetries, &o.DialerRetries, &o.DialerRetryTimeout)
		client = redis.NewClusterClient(o)
	} else {
		o, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redisstore: the Redis URL (not shown) is malformed: %s", redact(err, u))
		}
		failFast(q, &o.MaxRetries, &o.DialerRetries, &o.DialerRetryTimeout)
		client = redis.NewClient(o)
	}
	s := New(client, opts)
	s.ownClient = true
	return s, nil
}

// failFast sets the retry options the URL's query q leaves unset.
func failFast(q url.Values, maxRetries, dialerRetries *int, dialerRetryTimeout *time.Duration) {
	if !q.Has("max_retries") {
		*maxRetries = 1
	}
	if !q.Has("dialer_retries") {
		*dialerRetries = 1
	}
	if !q.Has("dialer_retry_timeout") {
		*dialerRetryTimeout = 50 * time.Millisecond
	}
}

// redact returns err's message without the URL's password.
func redact(err error, u *url.URL) string {
	msg := err.Error()
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
		msg = strings.ReplaceAll(msg, url.QueryEscape(p), "xxxxx")
	}
	return msg
}

// FromConfig returns the Store that c.RedisURL names, or nil when it is
// empty: pass the result as [ctxfit.Options.Store], where nil means the
// Guard's in-memory store. The caller closes a non-nil Store after the
// Guard.
//
//	st, err := redisstore.FromConfig(cfg)
//	if err != nil { ... }
//	if st != nil { defer st.Close() }
//	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Store: st})
func FromConfig(c ctxfit.Config) (store.Store, error) {
	if c.RedisURL == "" {
		return nil, nil
	}
	s, err := Open(c.RedisURL, nil)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Put stores data under id for ttl with SET PX, replacing any data and TTL
// the id had; a ttl of 0 or less deletes the id. TTLs are rounded up to the
// millisecond. Redis keeps its own copy.
func (s *Store) Put(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	key := s.prefix + id
	var cmd redis.Cmder
	if ttl <= 0 {
		cmd = redis.NewIntCmd(ctx, "del", key)
	} else {
		ms := (ttl + time.Millisecond - 1) / time.Millisecond
		cmd = redis.NewStatusCmd(ctx, "set", key, data, "px", strconv.FormatInt(int64(ms), 10))
	}
	_, err := await(ctx, func() (struct{}, error) {
		return struct{}{}, s.client.Process(ctx, cmd)
	})
	return s.wrap(ctx, err)
}

// Get returns the data stored under id with GET, or ok == false if there is
// none or it has expired.
func (s *Store) Get(ctx context.Context, id string) ([]byte, bool, error) {
	if err := s.check(ctx); err != nil {
		return nil, false, err
	}
	data, err := await(ctx, func() ([]byte, error) {
		return s.client.Get(ctx, s.prefix+id).Bytes()
	})
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.wrap(ctx, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, true, nil
}

// Close marks the Store closed and closes the client if [Open] or
// [FromConfig] made it. Calling it again does nothing and returns nil.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	if s.ownClient {
		if err := s.client.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
			return fmt.Errorf("redisstore: close: %w", err)
		}
	}
	return nil
}

// check returns the error of a call made on a closed Store or with a done
// context.
func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	return nil
}

// wrap turns a client error into the Store's: ErrClosed after Close,
// ctx.Err() when ctx is done, ErrUnavailable otherwise.
func (s *Store) wrap(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case s.closed.Load() || errors.Is(err, redis.ErrClosed):
		return store.ErrClosed
	case ctx.Err() != nil:
		return fmt.Errorf("redisstore: %w", ctx.Err())
	default:
		return fmt.Errorf("redisstore: %w: %w", store.ErrUnavailable, err)
	}
}

// await runs f and returns its result, or ctx.Err() as soon as ctx is done.
func await[T any](ctx context.Context, f func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return f()
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
