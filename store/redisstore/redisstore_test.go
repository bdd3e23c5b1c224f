package redisstore_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/redistest"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/store/redisstore"
	"github.com/ctxfit/ctxfit/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

func TestConformance(t *testing.T) {
	t.Run("with a single node client", func(t *testing.T) {
		url := redistest.URL(t)
		storetest.RunWithOptions(t, func(t *testing.T, _ func() time.Time) store.Store {
			s, err := redisstore.Open(url, nil)
			require.NoError(t, err)
			return s
		}, &storetest.RunOptions{RealClock: true})
	})
	t.Run("with a cluster client", func(t *testing.T) {
		srv := startCluster(t)
		client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr}})
		t.Cleanup(func() { _ = client.Close() })
		storetest.RunWithOptions(t, func(t *testing.T, _ func() time.Time) store.Store {
			return redisstore.New(client, &redisstore.Options{Prefix: "{ctxfit}:"})
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
	s := redisstore.New(raw, &redisstore.Options{Prefix: prefix})
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
		d := redisstore.New(raw, nil)
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
	s, err := redisstore.Open(srv.URL(), nil)
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
	start := time.Now()
	_, _, err = s.Get(ctx, store.NewID())
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)

	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start = time.Now()
	err = s.Put(ctx, store.NewID(), []byte("v"), time.Minute)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestOpenAndFromConfig(t *testing.T) {
	t.Run("an empty RedisURL means no Store, so the Guard keeps its in-memory one", func(t *testing.T) {
		s, err := redisstore.FromConfig(ctxfit.Config{})
		require.NoError(t, err)
		assert.Nil(t, s)
	})
	t.Run("a RedisURL gives a Store on that Redis", func(t *testing.T) {
		s, err := redisstore.FromConfig(ctxfit.Config{RedisURL: redistest.URL(t)})
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
