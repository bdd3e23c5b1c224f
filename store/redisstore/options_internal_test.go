package redisstore

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While Redis is down, requests wait for go-redis's retries before they
// get their 503: Open keeps those short unless the URL says otherwise, and
// gives each call's deadline to the client.
func TestOpenRetriesLittleUnlessTheURLSaysOtherwise(t *testing.T) {
	tests := []struct {
		name, url        string
		retries, dialers int
		dialerWait       time.Duration
	}{
		{"a node", "redis://127.0.0.1:1/0", 1, 1, 50 * time.Millisecond},
		{"a node with max_retries", "redis://127.0.0.1:1/0?max_retries=4", 4, 1, 50 * time.Millisecond},
		{"a cluster", "redis://127.0.0.1:1?addr=127.0.0.1:2", 1, 1, 50 * time.Millisecond},
		{"a cluster with its own dial retries", "redis://127.0.0.1:1?addr=127.0.0.1:2&dialer_retries=3&dialer_retry_timeout=20ms", 1, 3, 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.url, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			var retries, dialers int
			var wait time.Duration
			var ctxDeadlines bool
			switch c := s.client.(type) {
			case *redis.Client:
				o := c.Options()
				retries, dialers, wait, ctxDeadlines = o.MaxRetries, o.DialerRetries, o.DialerRetryTimeout, o.ContextTimeoutEnabled
			case *redis.ClusterClient:
				o := c.Options()
				retries, dialers, wait, ctxDeadlines = o.MaxRetries, o.DialerRetries, o.DialerRetryTimeout, o.ContextTimeoutEnabled
			default:
				t.Fatalf("client %T", c)
			}
			assert.Equal(t, tt.retries, retries)
			assert.Equal(t, tt.dialers, dialers)
			assert.Equal(t, tt.dialerWait, wait)
			assert.True(t, ctxDeadlines, "the call's deadline reaches the connection")
		})
	}
}
