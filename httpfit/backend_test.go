package httpfit_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/store"
)

// backendSecret is what a failing backend says: nothing of it may reach a
// client.
const backendSecret = "OOM command not allowed when used memory > 'maxmemory' (redis://:hunter2@10.0.0.7:6379)"

// failingStore is a memory store whose reads or writes fail with the
// backend's message, or panic with it.
type failingStore struct {
	store.Store
	failGets, failPuts atomic.Bool
	panics             bool
}

func (s *failingStore) Put(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	if s.failPuts.Load() {
		if s.panics {
			panic(backendSecret)
		}
		return errors.New(backendSecret)
	}
	return s.Store.Put(ctx, id, data, ttl)
}

func (s *failingStore) Get(ctx context.Context, id string) ([]byte, bool, error) {
	if s.failGets.Load() {
		if s.panics {
			panic(backendSecret)
		}
		return nil, false, errors.New(backendSecret)
	}
	return s.Store.Get(ctx, id)
}

// failingCache is a response cache backend that fails every call.
type failingCache struct{}

func (failingCache) Get(context.Context, string) (cache.Entry, bool, error) {
	return cache.Entry{}, false, errors.New(backendSecret)
}
func (failingCache) Set(context.Context, string, cache.Entry, time.Duration) error {
	return errors.New(backendSecret)
}
func (failingCache) Delete(context.Context, string) error { return errors.New(backendSecret) }
func (failingCache) Close() error                         { return nil }

func TestAProblemNeverEchoesABackendErrorTheLogHasIt(t *testing.T) {
	tests := []struct {
		name   string
		panics bool
		// failOn is the request at which the store starts failing: 0 the
		// first, 1 the continuation.
		failOn     int
		status     int
		code       string
		retryAfter string
	}{
		{"a store that fails its writes is a 503", false, 0, http.StatusServiceUnavailable, "store_unavailable", "5"},
		{"a store that fails its reads is a 503", false, 1, http.StatusServiceUnavailable, "store_unavailable", "5"},
		{"a store that panics in a write is a 503", true, 0, http.StatusServiceUnavailable, "store_unavailable", "5"},
		{"a store that panics in a read is a 503", true, 1, http.StatusServiceUnavailable, "store_unavailable", "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" that says nothing of the backend", func(t *testing.T) {
			st := &failingStore{Store: store.NewMemory(nil), panics: tt.panics}
			t.Cleanup(func() { _ = st.Store.Close() })
			var guardLog, httpLog syncbuf.Buffer
			f := newFixture(t, ctxfit.Options{Store: st, Logger: slog.New(slog.NewTextHandler(&guardLog, nil))})
			h := httpfit.Middleware(f.guard, &httpfit.Options{Logger: slog.New(slog.NewTextHandler(&httpLog, nil))})(api(nil))

			target := "/api/bookings"
			if tt.failOn == 1 {
				target = "/api/bookings?cursor=" + decodePage(t, do(h, "GET", target)).NextCursor
				st.failGets.Store(true)
			} else {
				st.failPuts.Store(true)
			}
			rec := do(h, "GET", target)
			p := assertProblem(t, rec, tt.status, tt.code, "")
			assert.Equal(t, tt.retryAfter, rec.Header().Get("Retry-After"))
			for _, leak := range []string{"OOM", "maxmemory", "hunter2", "10.0.0.7", "redis"} {
				assert.NotContains(t, rec.Body.String(), leak)
				for name, values := range rec.Header() {
					assert.NotContains(t, values, leak, name)
				}
			}
			assert.NotContains(t, p.Detail, "panic")
			assert.Contains(t, guardLog.String()+httpLog.String(), "hunter2", "the backend's message is logged")
		})
	}
	t.Run("a response cache whose backend fails serves the response and says nothing of it", func(t *testing.T) {
		c := cache.New(&cache.Options{Backend: failingCache{}})
		t.Cleanup(func() { _ = c.Close() })
		f := newFixture(t, ctxfit.Options{})
		h := httpfit.Middleware(f.guard, &httpfit.Options{Cache: c})(api(nil))
		rec := do(h, "GET", "/api/bookings")
		first := decodePage(t, rec)
		assert.NotEmpty(t, first.Items)
		assert.NotContains(t, rec.Body.String(), "hunter2")
		assert.Positive(t, c.Stats().BackendErrors, "counted, not sent: a failed lookup is a miss, a failed store is ignored")
	})
}
