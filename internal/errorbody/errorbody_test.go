package errorbody_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/errorbody"
)

func TestOnlyErrorBodiesAreCut(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		wantLen int
	}{
		{"an error from http.Error is cut", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "malformed payload: "+long, http.StatusBadRequest)
		}, 100},
		{"an error written in pieces is cut", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			for range 10 {
				_, _ = w.Write([]byte(strings.Repeat("y", 30)))
			}
		}, 100},
		{"a short error is whole", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "no", http.StatusNotFound)
		}, len("no\n")},
		{"a success is whole", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(long))
		}, len(long)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			errorbody.Bound(tt.handler, 100).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			assert.Equal(t, tt.wantLen, rec.Body.Len())
		})
	}
}

func TestAnEventStreamCanStillBeFlushed(t *testing.T) {
	rec := httptest.NewRecorder()
	errorbody.Bound(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("data: 1\n\n"))
		require.NoError(t, http.NewResponseController(w).Flush())
	}), 100).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	assert.True(t, rec.Flushed)
}
