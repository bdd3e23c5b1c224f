package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ctxfit/ctxfit/conversation"
)

// Defaults of a session: it lives an hour and keeps 20 messages.
const (
	sessionTTL         = time.Hour
	sessionMaxMessages = conversation.DefaultMaxMessages // 20
)

// Session is a conversation the agent keeps between requests (id, owner,
// messages, created and updated times), its messages fitted
// to at most 20 and to the model's window, tool results cleared behind
// placeholders that lead back to them.
type Session struct {
	ID string `json:"id"`
	// Owner is the principal that made the session (a digest of its
	// credential, or "anonymous"); only requests of the same principal
	// continue it.
	Owner     string                 `json:"owner"`
	CreatedAt time.Time              `json:"created_at"`
	UpdatedAt time.Time              `json:"updated_at"`
	Messages  []conversation.Message `json:"messages"`
	// ProviderPreference is the provider the session's requests go to
	// first (seed 001's Session.provider_preference): the last one a
	// request of the session named; "" for the default.
	ProviderPreference string `json:"provider_preference,omitempty"`
}

// SessionStore keeps sessions for a time to live after their last update.
//
// Get returns the session, ok false when there is none (never created,
// expired); Put saves it and starts its time to live again. Both are safe
// for concurrent use; errors are the backend's (Redis unreachable).
type SessionStore interface {
	Get(ctx context.Context, id string) (*Session, bool, error)
	Put(ctx context.Context, s *Session) error
}

// newSessionID returns a random session id.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "sess_" + hex.EncodeToString(b[:])
}

// memorySessions is a SessionStore in memory. The zero value is not
// usable: use newMemorySessions.
type memorySessions struct {
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	sessions map[string]*memoryEntry
}

type memoryEntry struct {
	data    []byte // the session as JSON, so callers never share it
	expires time.Time
}

func newMemorySessions(ttl time.Duration, now func() time.Time) *memorySessions {
	return &memorySessions{ttl: ttl, now: now, sessions: map[string]*memoryEntry{}}
}

func (m *memorySessions) Get(_ context.Context, id string) (*Session, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.sessions[id]
	if e == nil {
		return nil, false, nil
	}
	if !m.now().Before(e.expires) {
		delete(m.sessions, id)
		return nil, false, nil
	}
	var s Session
	if err := json.Unmarshal(e.data, &s); err != nil {
		return nil, false, err
	}
	return &s, true, nil
}

func (m *memorySessions) Put(_ context.Context, s *Session) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for id, e := range m.sessions { // expired sessions go when others are saved
		if !now.Before(e.expires) {
			delete(m.sessions, id)
		}
	}
	m.sessions[s.ID] = &memoryEntry{data: data, expires: now.Add(m.ttl)}
	return nil
}

// redisSessions is a SessionStore in Redis: one key per session,
// agent:session:<id>, holding its JSON, written with SET ... PX ttl.
type redisSessions struct {
	client redis.UniversalClient
	ttl    time.Duration
}

const redisSessionPrefix = "agent:session:"

func newRedisSessions(url string, ttl time.Duration) (*redisSessions, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("agent: sessions: %w", err)
	}
	return &redisSessions{client: redis.NewClient(opts), ttl: ttl}, nil
}

func (r *redisSessions) Get(ctx context.Context, id string) (*Session, bool, error) {
	data, err := r.client.Get(ctx, redisSessionPrefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("agent: sessions: %w", err)
	}
	var s Session
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, false, err
	}
	return &s, true, nil
}

func (r *redisSessions) Put(ctx context.Context, s *Session) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := r.client.Set(ctx, redisSessionPrefix+s.ID, data, r.ttl).Err(); err != nil {
		return fmt.Errorf("agent: sessions: %w", err)
	}
	return nil
}

func (r *redisSessions) Close() error { return r.client.Close() }

// sessionLocks serializes the requests of one session in this process.
type sessionLocks struct {
	mu    sync.Mutex
	locks map[string]*sessionLock
}

type sessionLock struct {
	mu   sync.Mutex
	refs int
}

// lock locks the session id and returns the function that unlocks it.
func (l *sessionLocks) lock(id string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*sessionLock{}
	}
	sl := l.locks[id]
	if sl == nil {
		sl = &sessionLock{}
		l.locks[id] = sl
	}
	sl.refs++
	l.mu.Unlock()
	sl.mu.Lock()
	return func() {
		sl.mu.Unlock()
		l.mu.Lock()
		if sl.refs--; sl.refs == 0 {
			delete(l.locks, id)
		}
		l.mu.Unlock()
	}
}
