package rediscache_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/cache/rediscache"
)

// client starts a redis-server for the test, or skips it when none is
// installed.
func client(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	t.Cleanup(func() { _ = c.Close() })
	require.Eventually(t, func() bool { return c.Ping(context.Background()).Err() == nil }, 30*time.Second, 10*time.Millisecond)
	return c
}

func TestBackend(t *testing.T) {
	ctx := context.Background()
	rc := client(t)
	b := rediscache.New(rc, &rediscache.Options{Prefix: "test:"})

	tests := []struct {
		name  string
		entry cache.Entry
	}{
		{"an entry with a content type round-trips", cache.Entry{Body: []byte(`{"a":1}`), ContentType: "application/json"}},
		{"an entry without a content type round-trips", cache.Entry{Body: []byte("text")}},
		{"an empty body round-trips", cache.Entry{ContentType: "text/plain", Body: []byte{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, b.Set(ctx, "k", tt.entry, time.Minute))
			got, ok, err := b.Get(ctx, "k")
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, tt.entry, got)
		})
	}
	t.Run("keys carry the prefix and the TTL", func(t *testing.T) {
		ttl, err := rc.PTTL(ctx, "test:k").Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, time.Duration(0))
		assert.LessOrEqual(t, ttl, time.Minute)
	})
	t.Run("a missing key is a miss without an error", func(t *testing.T) {
		_, ok, err := b.Get(ctx, "absent")
		require.NoError(t, err)
		assert.False(t, ok)
	})
	t.Run("a deleted key is a miss", func(t *testing.T) {
		require.NoError(t, b.Delete(ctx, "k"))
		_, ok, err := b.Get(ctx, "k")
		require.NoError(t, err)
		assert.False(t, ok)
	})
	t.Run("a malformed value is an error", func(t *testing.T) {
		require.NoError(t, rc.Set(ctx, "test:bad", []byte{0xff}, time.Minute).Err())
		_, _, err := b.Get(ctx, "bad")
		assert.Error(t, err)
	})
	t.Run("a Cache on the backend shares entries between instances", func(t *testing.T) {
		c1 := cache.New(&cache.Options{Backend: b})
		c2 := cache.New(&cache.Options{Backend: rediscache.New(rc, &rediscache.Options{Prefix: "test:"})})
		require.NoError(t, c1.Put(ctx, "shared", cache.Entry{Body: []byte("v")}))
		e, ok := c2.Get(ctx, "shared")
		require.True(t, ok)
		assert.Equal(t, "v", string(e.Body))
	})
	t.Run("after Close the backend refuses use and the client stays open", func(t *testing.T) {
		b2 := rediscache.New(rc, nil)
		require.NoError(t, b2.Close())
		_, _, err := b2.Get(ctx, "k")
		assert.ErrorIs(t, err, cache.ErrClosed)
		assert.ErrorIs(t, b2.Set(ctx, "k", cache.Entry{}, time.Minute), cache.ErrClosed)
		assert.NoError(t, rc.Ping(ctx).Err())
	})
}
