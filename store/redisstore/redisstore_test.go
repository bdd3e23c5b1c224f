package redisstore_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/testing/redistest"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/store/redisstore"
	"github.com/ctxfit/ctxfit/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

func TestConformance(t *testing.T) {
	t.Run("with a single node client", func(t *testing.T) {
		url := redistest.URL(t)
		storetest.RunWithOptions(t, func(t *testing.T, _ func() time.Time) store.Store {
			s, err := redisstore.Open(url, &redisstore.Options{Timeout: patient})
			require.NoError(t, err)
			return s
		}, &storetest.RunOptions{RealClock: true})
	})
	t.Run("with a cluster client", func(t *testing.T) {
		srv := startCluster(t)
		client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr}})
		t.Cleanup(func() { _ = client.Close() })
		storetest.RunWithOptions(t, func(t *testing.T, _ func() time.Time) store.Store {
			return redisstore.New(client, &redisstore.Options{Prefix: "{ctxfit}:", Timeout: patient})
		}, &storetest.RunOptions{RealClock: true})
	})
}

// startCluster starts a one-node Redis cluster that serves every slot.
func startCluster(t *testing.T) *redistest.Server {
	t.Helper()
	srv := redistest.Start(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	require.NoError(t, c.Do(t.Context(), "cluster", "addslotsrange", "0", "16383").Err())
	require.Eventually(t, func() bool {
		info, err := c.ClusterInfo(t.Context()).Result()
		return err == nil && strings.Contains(info, "cluster_state:ok")
	}, 10*time.Second, 20*time.Millisecond, "cluster state ok")
	return srv
}

func TestKeysAndTTLs(t *testing.T) {
	url := redistest.URL(t)
	opts, err := redis.ParseURL(url)
	require.NoError(t, err)
	raw := redis.NewClient(opts)
	t.Cleanup(func() { _ = raw.Close() })
	prefix := "test:" + store.NewID() + ":"
	s := redisstore.New(raw, &redisstore.Options{Prefix: prefix, Timeout: patient})
	ctx := t.Context()

	t.Run("a snapshot is one key under the prefix with the TTL in milliseconds", func(t *testing.T) {
		id := store.NewID()
		require.NoError(t, s.Put(ctx, id, []byte("v"), 90*time.Second))
		got, err := raw.Get(ctx, prefix+id).Result()
		require.NoError(t, err)
		assert.Equal(t, "v", got)
		pttl, err := raw.PTTL(ctx, prefix+id).Result()
		require.NoError(t, err)
		assert.InDelta(t, 90*time.Second, pttl, float64(2*time.Second))
	})
	t.Run("the default prefix is ctxfit:snap:", func(t *testing.T) {
		d := redisstore.New(raw, &redisstore.Options{Timeout: patient})
		id := store.NewID()
		require.NoError(t, d.Put(ctx, id, []byte("v"), time.Minute))
		n, err := raw.Exists(ctx, "ctxfit:snap:"+id).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
		require.NoError(t, raw.Del(ctx, "ctxfit:snap:"+id).Err())
	})
	t.Run("a read does not extend the TTL", func(t *testing.T) {
		id := store.NewID()
		require.NoError(t, s.Put(ctx, id, []byte("v"), time.Minute))
		require.NoError(t, raw.PExpire(ctx, prefix+id, 30*time.Second).Err())
		_, ok, err := s.Get(ctx, id)
		require.NoError(t, err)
		require.True(t, ok)
		pttl, err := raw.PTTL(ctx, prefix+id).Result()
		require.NoError(t, err)
		assert.LessOrEqual(t, pttl, 30*time.Second)
	})
	t.Run("a sub-millisecond TTL is rounded up, not refused", func(t *testing.T) {
		require.NoError(t, s.Put(ctx, store.NewID(), []byte("v"), time.Microsecond))
	})
	t.Run("a TTL of zero deletes the snapshot", func(t *testing.T) {
		id := store.NewID()
		require.NoError(t, s.Put(ctx, id, []byte("v"), time.Minute))
		require.NoError(t, s.Put(ctx, id, []byte("w"), 0))
		_, ok, err := s.Get(ctx, id)
		require.NoError(t, err)
		assert.False(t, ok)
	})
	t.Run("closing a Store over a caller's client leaves the client open", func(t *testing.T) {
		require.NoError(t, redisstore.New(raw, nil).Close())
		assert.NoError(t, raw.Ping(ctx).Err())
	})
}

func TestRedisGoingDown(t *testing.T) {
	srv := redistest.Start(t)
	s, err := redisstore.Open(srv.URL(), &redisstore.Options{Timeout: patient})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	id := store.NewID()
	require.NoError(t, s.Put(ctx, id, []byte("v"), time.Minute))

	require.NoError(t, srv.Stop())
	t.Run("Put and Get fail with ErrUnavailable while Redis is down", func(t *testing.T) {
		err := s.Put(ctx, store.NewID(), []byte("v"), time.Minute)
		assert.ErrorIs(t, err, store.ErrUnavailable)
		_, ok, err := s.Get(ctx, id)
		assert.ErrorIs(t, err, store.ErrUnavailable)
		assert.False(t, ok)
	})

	require.NoError(t, srv.Restart())
	t.Run("the Store works again once Redis is back on the same port", func(t *testing.T) {
		id := store.NewID()
		require.Eventually(t, func() bool { return s.Put(ctx, id, []byte("back"), time.Minute) == nil },
			10*time.Second, 20*time.Millisecond)
		got, ok, err := s.Get(ctx, id)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "back", string(got))
	})
}

func TestACallReturnsWhenItsContextEndsEvenIfRedisDoesNotAnswer(t *testing.T) {
	// A server that accepts connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	s, err := redisstore.Open("redis://"+ln.Addr().String()+"/0", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	err = returnsWhilePaused(t, func() error { _, _, err := s.Get(ctx, store.NewID()); return err })
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	err = returnsWhilePaused(t, func() error { return s.Put(ctx, store.NewID(), []byte("v"), time.Minute) })
	assert.ErrorIs(t, err, context.Canceled)
}

func TestOpenAndFromURL(t *testing.T) {
	t.Run("an empty URL means no Store, so the Guard keeps its in-memory one", func(t *testing.T) {
		s, err := redisstore.FromURL("", nil)
		require.NoError(t, err)
		assert.Nil(t, s)
	})
	t.Run("a URL gives a Store on that Redis", func(t *testing.T) {
		s, err := redisstore.FromURL(redistest.URL(t), &redisstore.Options{Timeout: time.Second})
		require.NoError(t, err)
		require.NotNil(t, s)
		t.Cleanup(func() { _ = s.Close() })
		id := store.NewID()
		require.NoError(t, s.Put(t.Context(), id, []byte("v"), time.Minute))
	})
	t.Run("a malformed URL is refused without echoing its password", func(t *testing.T) {
		for _, u := range []string{"http://user:s3cr3tpass@host:6379/0", "redis://user:s3cr3tpass@host:6379/notadb"} {
			_, err := redisstore.Open(u, nil)
			require.Error(t, err, u)
			assert.NotContains(t, err.Error(), "s3cr3tpass")
			_, err = redisstore.FromURL(u, nil)
			require.Error(t, err, u)
			assert.NotContains(t, err.Error(), "s3cr3tpass")
		}
	})
	t.Run("a cluster URL makes a cluster client", func(t *testing.T) {
		srv := startCluster(t)
		s, err := redisstore.Open("redis://"+srv.Addr+"?addr="+srv.Addr, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		id := store.NewID()
		require.NoError(t, s.Put(t.Context(), id, []byte("v"), time.Minute))
		got, ok, err := s.Get(t.Context(), id)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "v", string(got))
	})
}

// rawClient returns a client of the shared server, closed when t ends.
func rawClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	require.NoError(t, err)
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestSubjectBudget(t *testing.T) {
	url := redistest.URL(t)
	raw := rawClient(t, url)
	newStore := func(t *testing.T, budget int64) (*redisstore.Store, string) {
		prefix := "budget:" + store.NewID() + ":"
		s := redisstore.New(raw, &redisstore.Options{Prefix: prefix, SubjectMaxBytes: budget, Timeout: patient})
		return s, prefix
	}
	alice := store.WithSubject(t.Context(), "alice")
	bob := store.WithSubject(t.Context(), "bob")

	t.Run("a subject's Put over its budget fails with ErrFull and evicts nothing", func(t *testing.T) {
		s, _ := newStore(t, 100)
		first := store.NewID()
		require.NoError(t, s.Put(alice, first, make([]byte, 60), time.Minute))
		require.NoError(t, s.Put(alice, store.NewID(), make([]byte, 30), time.Minute))
		err := s.Put(alice, store.NewID(), make([]byte, 20), time.Minute)
		require.ErrorIs(t, err, store.ErrFull)
		assert.NotErrorIs(t, err, store.ErrUnavailable)
		_, ok, err := s.Get(alice, first)
		require.NoError(t, err)
		assert.True(t, ok, "nothing was evicted")
		require.NoError(t, s.Put(bob, store.NewID(), make([]byte, 60), time.Minute), "bob has a budget of his own")
		require.NoError(t, s.Put(alice, first, make([]byte, 60), time.Minute), "a Put of an ID she holds charges only the difference")
		require.NoError(t, s.Put(alice, store.NewID(), make([]byte, 10), time.Minute), "exactly the budget fits")
	})
	t.Run("data longer than the budget fails with ErrTooLarge", func(t *testing.T) {
		s, _ := newStore(t, 100)
		err := s.Put(alice, store.NewID(), make([]byte, 101), time.Minute)
		assert.ErrorIs(t, err, store.ErrTooLarge)
		assert.NotErrorIs(t, err, store.ErrFull)
	})
	t.Run("expired snapshots give their bytes back", func(t *testing.T) {
		s, _ := newStore(t, 100)
		require.NoError(t, s.Put(alice, store.NewID(), make([]byte, 90), 100*time.Millisecond))
		require.ErrorIs(t, s.Put(alice, store.NewID(), make([]byte, 20), time.Minute), store.ErrFull)
		require.Eventually(t, func() bool {
			return s.Put(alice, store.NewID(), make([]byte, 20), time.Minute) == nil
		}, 5*time.Second, 20*time.Millisecond)
	})
	t.Run("a Put with ttl 0 deletes the snapshot and its charge", func(t *testing.T) {
		s, _ := newStore(t, 100)
		id := store.NewID()
		require.NoError(t, s.Put(alice, id, make([]byte, 90), time.Minute))
		require.NoError(t, s.Put(alice, id, nil, 0))
		_, ok, err := s.Get(alice, id)
		require.NoError(t, err)
		assert.False(t, ok)
		require.NoError(t, s.Put(alice, store.NewID(), make([]byte, 90), time.Minute))
	})
	t.Run("a shared snapshot is charged in full to each subject that put it", func(t *testing.T) {
		s, _ := newStore(t, 100)
		data := []byte(strings.Repeat("x", 70) + store.NewID())
		id := store.IDOf(data)
		require.NoError(t, s.Put(alice, id, data, time.Minute))
		require.NoError(t, s.Put(bob, id, data, time.Minute))
		assert.ErrorIs(t, s.Put(bob, store.NewID(), make([]byte, 20), time.Minute), store.ErrFull)
		assert.ErrorIs(t, s.Put(alice, store.NewID(), make([]byte, 20), time.Minute), store.ErrFull)
	})
	t.Run("a subject's keys name a digest of it and expire with its last snapshot", func(t *testing.T) {
		s, prefix := newStore(t, 100)
		require.NoError(t, s.Put(alice, store.NewID(), make([]byte, 10), time.Minute))
		require.NoError(t, s.Put(alice, store.NewID(), make([]byte, 10), 2*time.Minute))
		keys, err := raw.Keys(t.Context(), prefix+"subject:*").Result()
		require.NoError(t, err)
		require.Len(t, keys, 2)
		for _, k := range keys {
			assert.NotContains(t, k, "alice")
			pttl, err := raw.PTTL(t.Context(), k).Result()
			require.NoError(t, err)
			assert.InDelta(t, 2*time.Minute, pttl, float64(5*time.Second), k)
		}
	})
	t.Run("a negative budget means none, and no subject keys", func(t *testing.T) {
		s, prefix := newStore(t, -1)
		require.NoError(t, s.Put(alice, store.NewID(), make([]byte, 200<<10), time.Minute))
		keys, err := raw.Keys(t.Context(), prefix+"subject:*").Result()
		require.NoError(t, err)
		assert.Empty(t, keys)
	})
}

func TestRedisAtMaxmemoryWithNoeviction(t *testing.T) {
	srv := redistest.Start(t, "--maxmemory-policy", "noeviction")
	raw := rawClient(t, srv.URL())
	ctx := t.Context()
	for _, budget := range []int64{0, -1} {
		s, err := redisstore.Open(srv.URL(), &redisstore.Options{SubjectMaxBytes: budget, Timeout: patient})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })

		kept := store.NewID()
		require.NoError(t, s.Put(ctx, kept, []byte("kept"), time.Minute))
		// Fill Redis, then make that its maxmemory.
		require.NoError(t, raw.Set(ctx, "filler", make([]byte, 1<<20), time.Minute).Err())
		require.NoError(t, raw.ConfigSet(ctx, "maxmemory", "1").Err()) // any used memory is over it

		err = s.Put(ctx, store.NewID(), make([]byte, 64<<10), time.Minute)
		require.ErrorIs(t, err, store.ErrFull, "budget %d", budget)
		assert.NotErrorIs(t, err, store.ErrUnavailable)
		assert.NotContains(t, err.Error(), "OOM", "the backend's message is not passed on")
		got, ok, err := s.Get(ctx, kept)
		require.NoError(t, err, "reads go on")
		assert.True(t, ok)
		assert.Equal(t, "kept", string(got))
		require.NoError(t, s.Put(ctx, kept, nil, 0), "deletes go on")

		require.NoError(t, raw.ConfigSet(ctx, "maxmemory", "0").Err())
		require.NoError(t, raw.Del(ctx, "filler").Err())
		require.NoError(t, s.Put(ctx, store.NewID(), make([]byte, 64<<10), time.Minute), "budget %d: writes again once there is room", budget)
		if budget == 0 {
			// The refused Put gave its charge back: the subject holds 64 KiB.
			keys, err := raw.Keys(ctx, redisstore.DefaultPrefix+"subject:*:sizes").Result()
			require.NoError(t, err)
			require.Len(t, keys, 1)
			total, err := raw.HGet(ctx, keys[0], "total").Int64()
			require.NoError(t, err)
			assert.Equal(t, int64(64<<10), total)
		}
	}
}

func TestARefusedSetGivesTheChargeBack(t *testing.T) {
	srv := redistest.Start(t, "--maxmemory-policy", "noeviction")
	raw := rawClient(t, srv.URL())
	ctx := t.Context()
	s, err := redisstore.Open(srv.URL(), &redisstore.Options{Timeout: patient})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Put(ctx, store.NewID(), []byte("before"), time.Minute))

	// Room for the charging script, not for the 4 MiB that the SET brings
	// into its query buffer.
	info, err := raw.Info(ctx, "memory").Result()
	require.NoError(t, err)
	var used int64
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			used, err = strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
		}
	}
	require.Positive(t, used)
	require.NoError(t, raw.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+1<<20, 10)).Err())
	t.Cleanup(func() { _ = raw.ConfigSet(context.WithoutCancel(ctx), "maxmemory", "0").Err() })

	err = s.Put(ctx, store.NewID(), make([]byte, 4<<20), time.Minute)
	require.ErrorIs(t, err, store.ErrFull)
	keys, err := raw.Keys(ctx, redisstore.DefaultPrefix+"subject:*:sizes").Result()
	require.NoError(t, err)
	require.Len(t, keys, 1)
	total, err := raw.HGet(ctx, keys[0], "total").Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(len("before")), total, "the refused snapshot is not charged")
}

// The issue: with redis-server paused (SIGSTOP), store-backed requests
// waited 5 to 13 s before their 503.
func TestStalledRedisFailsWithinTheDeadlineAndRecovers(t *testing.T) {
	srv := redistest.Start(t)
	s, err := redisstore.Open(srv.URL(), nil) // the default deadline, 500 ms
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	// The calls around the pause go through a patient Store on the same
	// Redis: a loaded machine must not fail them at 500 ms.
	ps, err := redisstore.Open(srv.URL(), &redisstore.Options{Timeout: patient})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ps.Close() })
	ctx := t.Context()
	id := store.NewID()
	require.NoError(t, ps.Put(ctx, id, []byte("v"), time.Minute))

	require.NoError(t, srv.Pause())
	t.Cleanup(func() { _ = srv.Resume() })
	calls := map[string]func() error{
		"Get":      func() error { _, _, err := s.Get(ctx, id); return err },
		"Put":      func() error { return s.Put(ctx, store.NewID(), []byte("v"), time.Minute) },
		"GetRange": func() error { _, _, err := s.GetRange(ctx, id, 0, 1); return err },
	}
	for range 2 { // a second round: nothing queued up behind the first
		for name, call := range calls {
			start := time.Now()
			err := returnsWhilePaused(t, call)
			took := time.Since(start)
			// Redis stays paused: that the call came back at all, with the
			// deadline's error, shows it waited for the deadline and not
			// for Redis. (No upper bound on the time: a loaded machine
			// may take longer to notice the deadline.)
			assert.ErrorIs(t, err, store.ErrUnavailable, name)
			assert.ErrorContains(t, err, "no answer within 500ms", name)
			assert.GreaterOrEqual(t, took, 400*time.Millisecond, "%s gave up before its deadline", name)
		}
	}

	require.NoError(t, srv.Resume())
	require.Eventually(t, func() bool {
		got, ok, err := s.Get(ctx, id)
		return err == nil && ok && string(got) == "v"
	}, 30*time.Second, 20*time.Millisecond, "the Store works again once Redis answers")
	require.NoError(t, ps.Put(ctx, store.NewID(), []byte("w"), time.Minute))
}

// patient is the store deadline of the tests that are not about it: a
// loaded machine running every package at once must not turn a slow
// answer into a failure.
const patient = 30 * time.Second

// returnsWhilePaused runs call, which meets a Redis that does not answer,
// and returns its error; it fails the test if call has not returned after
// a minute (it waits for Redis rather than for its deadline).
func returnsWhilePaused(t *testing.T, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("the call waits for the paused Redis instead of giving up at its deadline")
		return nil
	}
}

func TestTimeoutOption(t *testing.T) {
	srv := redistest.Start(t)
	s, err := redisstore.Open(srv.URL(), &redisstore.Options{Timeout: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, srv.Pause())
	t.Cleanup(func() { _ = srv.Resume() })
	err = returnsWhilePaused(t, func() error { _, _, err := s.Get(t.Context(), store.NewID()); return err })
	assert.ErrorIs(t, err, store.ErrUnavailable)
	assert.Contains(t, err.Error(), "no answer within 100ms")

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, _, err = s.Get(ctx, store.NewID())
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the caller's earlier deadline is the caller's")
	assert.NotErrorIs(t, err, store.ErrUnavailable)
}
