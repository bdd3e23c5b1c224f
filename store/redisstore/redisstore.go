// Package redisstore is a Redis implementation of [store.Store], so that
// several instances of a service share snapshots: a cursor issued by one is
// honoured by another that has the same secret and the same Redis.
//
// It works with any [redis.UniversalClient] (a single node, a cluster, a
// failover client) from github.com/redis/go-redis/v9: wrap one with [New],
// or let [Open] or [FromURL] build a client from a redis:// URL (the
// CTXFIT_REDIS_URL variable, the redisURL settings key).
//
// # Keys
//
// Each snapshot is one string key, the prefix followed by the snapshot's ID
// ([store.IDOf], [store.NewID]: base64url, so it never holds ':' or '{'),
// written with SET ... PX ttl and read with GET or GETRANGE, which never
// extend the TTL. Redis measures the TTLs with its own clock.
//
// Each subject ([store.SubjectFrom]) that has live snapshots has two more
// keys, named after a digest of the subject (never the subject itself):
// prefix + "subject:{digest}:claims", a sorted set of the IDs it put by
// expiry, and prefix + "subject:{digest}:sizes", a hash of their lengths
// and their total. Both expire with the subject's last snapshot, and share a
// hash tag, so that a cluster keeps them on one node.
//
// # Budgets and degrading
//
// Each subject may hold [Options.SubjectMaxBytes] of live snapshots (64 MiB
// by default): a Lua script (Redis 7 or later) drops the subject's expired
// claims, checks the budget and charges the new snapshot in one step, before
// the SET. A Put over the budget fails with [store.ErrFull] and evicts
// nothing, so no subject can push out another's snapshots; a snapshot put by
// several subjects (snapshots are keyed by content) is charged in full to
// each, for the TTL of its own Put. A Put that Redis refuses because it is
// at maxmemory with the noeviction policy fails with [store.ErrFull] too:
// the caller answers without a snapshot and Redis stays usable for what it
// holds. Data longer than the budget fails with [store.ErrTooLarge].
//
// # Deadlines
//
// Every call has a deadline ([Options.Timeout], 500 ms by default): a Redis
// that does not answer (stalled, paused, overloaded) makes a call fail with
// [store.ErrUnavailable] within that time, and the Store works again as soon
// as Redis answers. A store opened from a URL also gives the deadline to
// go-redis (ContextTimeoutEnabled), so the stalled connection is dropped at
// the deadline instead of at go-redis's read timeout.
package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ctxfit/ctxfit/store"
)

// Defaults of [Options].
const (
	// DefaultPrefix is the key prefix when [Options.Prefix] is empty.
	DefaultPrefix = "ctxfit:snap:"
	// DefaultSubjectMaxBytes is each subject's byte budget when
	// [Options.SubjectMaxBytes] is zero.
	DefaultSubjectMaxBytes = 64 << 20 // 64 MiB
)

// Options configure a [Store]. The zero value (or a nil pointer) means the
// defaults. [New] copies them.
type Options struct {
	// Prefix is put before every key, so snapshots share a Redis with other
	// data. Empty means "ctxfit:snap:".
	Prefix string
	// Timeout bounds each call (Put, Get, GetRange), however long Redis
	// takes to answer: past it the call fails with an error wrapping
	// [store.ErrUnavailable]. The caller's context may end it earlier. Zero
	// means [store.DefaultTimeout] (500 ms); negative means no deadline but
	// the context's.
	Timeout time.Duration
	// SubjectMaxBytes is each subject's byte budget: the most that the live
	// snapshots it has put may total. A Put over it fails with
	// [store.ErrFull], one of data longer than it with [store.ErrTooLarge].
	// Zero means [DefaultSubjectMaxBytes] (64 MiB); negative means no budget
	// (no subject keys are written, and Redis 6 will do).
	SubjectMaxBytes int64
}

// Store is a [store.Store] and a [store.RangeReader] on Redis.
//
// Put writes with SET key value PX ttl (a ttl of 0 or less deletes the key,
// whoever put it, and the subject's charge for it), after charging the
// subject as the package documentation describes; Get reads with GET,
// GetRange with GETRANGE. A missing or expired key is ok == false. Errors
// from Redis (a refused connection, no answer within the deadline, a
// cluster without a node for the key) wrap [store.ErrUnavailable]; go-redis
// reconnects by itself, so the Store works again once Redis is back. A Put
// with no room wraps [store.ErrFull] or [store.ErrTooLarge]. After Close
// every call returns [store.ErrClosed]. A call returns ctx.Err() as soon as
// ctx is done, even while Redis does not answer (the command may still
// complete afterwards; a snapshot so written expires with its TTL). Redis
// holds at most 512 MB per value; the total is bounded by the subjects'
// budgets and by Redis's maxmemory.
//
// Store is safe for concurrent use. Create one with [New], [Open] or
// [FromURL]; the zero value is not usable.
type Store struct {
	client    redis.UniversalClient
	prefix    string
	timeout   time.Duration
	budget    int64 // <= 0: none
	ownClient bool
	closed    atomic.Bool
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.RangeReader = (*Store)(nil)
)

// New returns a Store over client, configured by opts (nil means the
// defaults). Close does not close client; the caller does, after it. A
// client without ContextTimeoutEnabled keeps a stalled command's
// connection until its own read timeout, though the call returns at the
// deadline.
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
	if o.Timeout == 0 {
		o.Timeout = store.DefaultTimeout
	}
	if o.SubjectMaxBytes == 0 {
		o.SubjectMaxBytes = DefaultSubjectMaxBytes
	}
	return &Store{client: client, prefix: o.Prefix, timeout: o.Timeout, budget: o.SubjectMaxBytes}
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
// Redis that does not answer at all is bounded by [Options.Timeout], which
// the client applies to its connections too (ContextTimeoutEnabled).
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
		o.ContextTimeoutEnabled = true
		client = redis.NewClusterClient(o)
	} else {
		o, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redisstore: the Redis URL (not shown) is malformed: %s", redact(err, u))
		}
		failFast(q, &o.MaxRetries, &o.DialerRetries, &o.DialerRetryTimeout)
		o.ContextTimeoutEnabled = true
		client = redis.NewClient(o)
	}
	s := New(client, opts)
	s.ownClient = true
	return s, nil
}

// FromURL returns the Store that rawURL names, as [Open] does, or nil when
// rawURL is empty: pass the result as the Guard's Options.Store, where nil
// means the Guard's in-memory store. The caller closes a non-nil Store
// after the Guard.
//
//	st, err := redisstore.FromURL(cfg.RedisURL, &redisstore.Options{Timeout: time.Duration(cfg.StoreTimeout)})
//	if err != nil { ... }
//	if st != nil { defer st.Close() }
//	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Store: st})
func FromURL(rawURL string, opts *Options) (store.Store, error) {
	if rawURL == "" {
		return nil, nil
	}
	s, err := Open(rawURL, opts)
	if err != nil {
		return nil, err
	}
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

// Put stores data under id for ttl with SET PX, replacing any data and TTL
// the id had, after charging it to the subject [store.SubjectFrom](ctx)
// within its budget; a ttl of 0 or less deletes the id and the subject's
// charge for it. TTLs are rounded up to the millisecond. Redis keeps its
// own copy.
func (s *Store) Put(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if s.budget > 0 && ttl > 0 && int64(len(data)) > s.budget {
		return fmt.Errorf("redisstore: %w: %d bytes, a subject's budget is %d", store.ErrTooLarge, len(data), s.budget)
	}
	subject := store.SubjectFrom(ctx)
	cctx, cancel := s.deadline(ctx)
	defer cancel()
	_, err := await(cctx, func() (struct{}, error) {
		return struct{}{}, s.put(cctx, id, subject, data, ttl)
	})
	return s.wrap(ctx, cctx, err)
}

// errOverBudget is what put returns when the subject's budget has no room.
var errOverBudget = errors.New("redisstore: over the subject's budget")

func (s *Store) put(ctx context.Context, id, subject string, data []byte, ttl time.Duration) error {
	key := s.prefix + id
	if ttl <= 0 {
		if s.budget > 0 {
			if err := releaseScript.Run(ctx, s.client, s.subjectKeys(subject), id).Err(); err != nil {
				return err
			}
		}
		return s.client.Del(ctx, key).Err()
	}
	ms := strconv.FormatInt(int64((ttl+time.Millisecond-1)/time.Millisecond), 10)
	if s.budget > 0 {
		charged, err := chargeScript.Run(ctx, s.client, s.subjectKeys(subject), id, len(data), ms, s.budget).Int()
		if err != nil {
			return err
		}
		if charged == 0 {
			return errOverBudget
		}
	}
	err := s.client.Process(ctx, redis.NewStatusCmd(ctx, "set", key, data, "px", ms))
	if err != nil && s.budget > 0 && redis.IsOOMError(err) {
		// Nothing was stored: give the charge back (best effort).
		_ = releaseScript.Run(ctx, s.client, s.subjectKeys(subject), id).Err()
	}
	return err
}

// subjectKeys returns the keys of subject's claims and sizes.
func (s *Store) subjectKeys(subject string) []string {
	sum := sha256.Sum256([]byte(subject))
	base := s.prefix + "subject:{" + base64.RawURLEncoding.EncodeToString(sum[:16]) + "}:"
	return []string{base + "claims", base + "sizes"}
}

// chargeScript drops the subject's expired claims, and charges the
// snapshot ARGV[1] of ARGV[2] bytes for ARGV[3] ms unless the subject's
// total would exceed ARGV[4]: it returns 1 when charged, 0 when over the
// budget. KEYS[1] is the sorted set of the subject's IDs by expiry (ms),
// KEYS[2] the hash of their sizes ("i:" + ID) and total ("total"). The
// shebang makes Redis refuse the whole script when at maxmemory, instead
// of failing halfway.
var chargeScript = redis.NewScript(`#!lua
local id, size, ttl, budget = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local total = tonumber(redis.call('HGET', KEYS[2], 'total') or 0)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #expired > 0 then
	for _, gone in ipairs(expired) do
		total = total - tonumber(redis.call('HGET', KEYS[2], 'i:' .. gone) or 0)
		redis.call('HDEL', KEYS[2], 'i:' .. gone)
	end
	redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
	redis.call('HSET', KEYS[2], 'total', total)
end
local old = tonumber(redis.call('HGET', KEYS[2], 'i:' .. id) or 0)
if total - old + size > budget then
	return 0
end
redis.call('HSET', KEYS[2], 'total', total - old + size, 'i:' .. id, size)
redis.call('ZADD', KEYS[1], now + ttl, id)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
redis.call('PEXPIREAT', KEYS[1], last)
redis.call('PEXPIREAT', KEYS[2], last)
return 1
`)

// releaseScript removes the subject's charge for the snapshot ARGV[1]; it
// runs at maxmemory too, since it only frees memory. KEYS as chargeScript's.
var releaseScript = redis.NewScript(`#!lua flags=allow-oom
local size = redis.call('HGET', KEYS[2], 'i:' .. ARGV[1])
if not size then
	return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('ZCARD', KEYS[1]) == 0 then
	redis.call('DEL', KEYS[1], KEYS[2])
else
	local total = tonumber(redis.call('HGET', KEYS[2], 'total') or 0) - tonumber(size)
	redis.call('HDEL', KEYS[2], 'i:' .. ARGV[1])
	redis.call('HSET', KEYS[2], 'total', total)
end
return 1
`)

// Get returns the data stored under id with GET, or ok == false if there is
// none or it has expired.
func (s *Store) Get(ctx context.Context, id string) ([]byte, bool, error) {
	if err := s.check(ctx); err != nil {
		return nil, false, err
	}
	cctx, cancel := s.deadline(ctx)
	defer cancel()
	data, err := await(cctx, func() ([]byte, error) {
		return s.client.Get(cctx, s.prefix+id).Bytes()
	})
	return s.found(ctx, cctx, data, err)
}

// GetRange returns the bytes [start, end) of the data stored under id,
// clamped as [store.RangeReader] describes, with GETRANGE (and EXISTS when
// the range is empty, to tell an empty range from a missing key). Only the
// range crosses the network.
func (s *Store) GetRange(ctx context.Context, id string, start, end int64) ([]byte, bool, error) {
	if err := s.check(ctx); err != nil {
		return nil, false, err
	}
	start = max(start, 0)
	cctx, cancel := s.deadline(ctx)
	defer cancel()
	key := s.prefix + id
	data, err := await(cctx, func() ([]byte, error) {
		if end > start {
			// GETRANGE's end is inclusive; it clamps both ends to the value.
			b, err := s.client.GetRange(cctx, key, start, end-1).Bytes()
			if err != nil || len(b) > 0 {
				return b, err
			}
		}
		n, err := s.client.Exists(cctx, key).Result()
		if err == nil && n == 0 {
			err = redis.Nil
		}
		return nil, err
	})
	return s.found(ctx, cctx, data, err)
}

// found turns the result of a read into Get's: ok == false for a missing
// key, a non-nil slice otherwise.
func (s *Store) found(ctx, cctx context.Context, data []byte, err error) ([]byte, bool, error) {
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.wrap(ctx, cctx, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, true, nil
}

// Close marks the Store closed and closes the client if [Open] or
// [FromURL] made it. Calling it again does nothing and returns nil.
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

// deadline returns the context of one call: ctx with the Store's timeout.
func (s *Store) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout < 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// wrap turns the error of a call made with cctx, derived by deadline from
// the caller's ctx, into the Store's: ErrClosed after Close, ctx.Err() when
// ctx is done, ErrFull when there is no room, ErrUnavailable otherwise
// (the call's deadline included).
func (s *Store) wrap(ctx, cctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case s.closed.Load() || errors.Is(err, redis.ErrClosed):
		return store.ErrClosed
	case ctx.Err() != nil:
		return fmt.Errorf("redisstore: %w", ctx.Err())
	case errors.Is(err, errOverBudget):
		return fmt.Errorf("redisstore: %w: the subject's snapshots would exceed its budget of %d bytes", store.ErrFull, s.budget)
	case redis.IsOOMError(err):
		return fmt.Errorf("redisstore: %w: Redis is at maxmemory and refuses writes", store.ErrFull)
	case cctx.Err() != nil:
		return fmt.Errorf("redisstore: %w: no answer within %v", store.ErrUnavailable, s.timeout)
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
