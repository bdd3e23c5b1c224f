package cache_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/cache"
)

func TestLookupOutcomes(t *testing.T) {
	req := cache.Request{Endpoint: "list", Filters: []byte(`{"q":"x"}`)}
	calls := 0
	fetch := func(context.Context) (cache.Entry, error) {
		calls++
		return cache.Entry{Body: []byte("[1]")}, nil
	}
	t.Run("a nil cache prepares no lookup", func(t *testing.T) {
		var c *cache.Cache
		assert.Nil(t, c.Lookup(req))
		assert.Nil(t, c.LookupHTTP(req, cache.HTTP{}))
	})
	t.Run("a request with credentials and no subject is not looked up under HTTP rules", func(t *testing.T) {
		c := cache.New(nil)
		defer c.Close()
		assert.Nil(t, c.LookupHTTP(req, cache.HTTP{Header: map[string][]string{"Authorization": {"Bearer x"}}}))
		withSubject := req
		withSubject.Subject = "alice"
		assert.NotNil(t, c.LookupHTTP(withSubject, cache.HTTP{Header: map[string][]string{"Authorization": {"Bearer x"}}}))
	})
	t.Run("a miss, then a hit, then a closed cache bypassed", func(t *testing.T) {
		calls = 0
		c := cache.New(nil)
		l := c.Lookup(req)
		want := []cache.Outcome{cache.Missed, cache.Found}
		for _, w := range want {
			e, o, err := l.Do(t.Context(), fetch)
			require.NoError(t, err)
			assert.Equal(t, "[1]", string(e.Body))
			assert.Equal(t, w, o)
			assert.Equal(t, w == cache.Found, o.Hit())
		}
		require.NoError(t, c.Close())
		_, o, err := l.Do(t.Context(), fetch)
		require.NoError(t, err)
		assert.Equal(t, cache.Bypassed, o)
		assert.False(t, o.Hit())
		assert.Equal(t, 2, calls, "the miss and the bypass ran the upstream")
	})
}
