package cache_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ctxfit/ctxfit/cache"
)

func TestKey(t *testing.T) {
	base := cache.Request{
		Endpoint: "GET /bookings", Path: "/bookings", Subject: "tenant-1", Order: "date",
		Filters: json.RawMessage(`{"status":"open","city":["Oslo","Bergen"],"n":1.50,"where":{"a":1,"b":2}}`),
	}
	with := func(f func(*cache.Request)) cache.Request {
		r := base
		f(&r)
		return r
	}
	tests := []struct {
		name  string
		other cache.Request
		same  bool
	}{
		{"the order of filter parameters does not matter", with(func(r *cache.Request) {
			r.Filters = json.RawMessage(`{ "where": {"a": 1, "b": 2}, "n": 1.50, "city": ["Oslo", "Bergen"],  "status": "open" }`)
		}), true},
		{"nested objects are canonical too", with(func(r *cache.Request) {
			r.Filters = json.RawMessage(`{"status":"open","city":["Oslo","Bergen"],"n":1.50,"where":{"b":2,"a":1}}`)
		}), true},
		{"a different endpoint is a different key", with(func(r *cache.Request) { r.Endpoint = "GET /invoices" }), false},
		{"a different path is a different key", with(func(r *cache.Request) { r.Path = "/bookings/BK1" }), false},
		{"a different subject is a different key", with(func(r *cache.Request) { r.Subject = "tenant-2" }), false},
		{"no subject is a different key", with(func(r *cache.Request) { r.Subject = "" }), false},
		{"a different order is a different key", with(func(r *cache.Request) { r.Order = "-date" }), false},
		{"a different filter value is a different key", with(func(r *cache.Request) {
			r.Filters = json.RawMessage(`{"status":"closed","city":["Oslo","Bergen"],"n":1.50,"where":{"a":1,"b":2}}`)
		}), false},
		{"the order of array elements matters", with(func(r *cache.Request) {
			r.Filters = json.RawMessage(`{"status":"open","city":["Bergen","Oslo"],"n":1.50,"where":{"a":1,"b":2}}`)
		}), false},
		{"an extra filter is a different key", with(func(r *cache.Request) {
			r.Filters = json.RawMessage(`{"status":"open","city":["Oslo","Bergen"],"n":1.50,"where":{"a":1,"b":2},"x":""}`)
		}), false},
		{"fields are not shifted between endpoint and path", with(func(r *cache.Request) {
			r.Endpoint, r.Path = "GET /bookings/", "bookings"
		}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.same {
				assert.Equal(t, cache.Key(base), cache.Key(tt.other))
			} else {
				assert.NotEqual(t, cache.Key(base), cache.Key(tt.other))
			}
		})
	}
}

func TestKeyOfNoFilters(t *testing.T) {
	none := cache.Key(cache.Request{Endpoint: "tool"})
	for _, f := range []string{"", "null", "{}", " { } "} {
		t.Run("filters "+`"`+f+`" mean no filters`, func(t *testing.T) {
			assert.Equal(t, none, cache.Key(cache.Request{Endpoint: "tool", Filters: json.RawMessage(f)}))
		})
	}
	t.Run("filters that are not JSON are keyed by their bytes", func(t *testing.T) {
		a := cache.Key(cache.Request{Endpoint: "tool", Filters: json.RawMessage(`{bad`)})
		b := cache.Key(cache.Request{Endpoint: "tool", Filters: json.RawMessage(`{bad}`)})
		assert.NotEqual(t, a, b)
		assert.NotEqual(t, none, a)
		assert.NotEqual(t, a, cache.Key(cache.Request{Endpoint: "tool", Filters: json.RawMessage(`{} {}`)}))
	})
	t.Run("a key is 43 URL-safe characters", func(t *testing.T) {
		assert.Regexp(t, `^[A-Za-z0-9_-]{43}$`, none)
	})
}
