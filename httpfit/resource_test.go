package httpfit_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
)

// logsAPI serves two logs under one route pattern, 404 for any other name,
// and a list under a pattern without a method, for every method. It counts
// the handler's runs.
func logsAPI(calls *atomic.Int32) *http.ServeMux {
	logs := map[string]string{"app": logText, "db": strings.ReplaceAll(logText, "INFO", "DBUG")}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/logs/{name}", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		text, ok := logs[r.PathValue("name")]
		if !ok {
			http.Error(w, "no such log", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, text)
	})
	mux.HandleFunc("/api/v1/items/{name}", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body(itemsJSON, "application/json", nil)(w, r)
	})
	return mux
}

// nextCursor returns the nextCursor of a shaped response.
func nextCursor(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotEmpty(t, rec.Header().Get("Ctxfit-Strategy"), "a shaped response")
	var v struct {
		NextCursor string `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	require.NotEmpty(t, v.NextCursor)
	return v.NextCursor
}

func TestCursorsContinueOnlyTheResourceAndMethodTheyWereIssuedFor(t *testing.T) {
	tests := []struct {
		name              string
		issuedFor         string // "METHOD /path"
		rejectedFor       []string
		honouredFor       string
		notInARejectionOf string // a piece of the data the cursor leads to
	}{
		{
			name:              "a log's chunk cursor on another name of the same route pattern",
			issuedFor:         "GET /api/v1/logs/app",
			rejectedFor:       []string{"GET /api/v1/logs/nope", "GET /api/v1/logs/db", "GET /api/v1/logs/app/"},
			honouredFor:       "GET /api/v1/logs/app",
			notInARejectionOf: "INFO",
		},
		{
			name:              "a list's page cursor on another method of the same path and pattern",
			issuedFor:         "GET /api/v1/items/app",
			rejectedFor:       []string{"POST /api/v1/items/app", "PUT /api/v1/items/app", "DELETE /api/v1/items/app", "PATCH /api/v1/items/app"},
			honouredFor:       "GET /api/v1/items/app",
			notInARejectionOf: items[60].ID, // on the second page
		},
		{
			name:              "a list's page cursor issued to a POST on a GET",
			issuedFor:         "POST /api/v1/items/app",
			rejectedFor:       []string{"GET /api/v1/items/app", "POST /api/v1/items/other"},
			honouredFor:       "POST /api/v1/items/app",
			notInARejectionOf: items[60].ID, // on the second page
		},
	}
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		for _, tt := range tests {
			t.Run(tt.name+" is rejected in "+string(mode)+" mode", func(t *testing.T) {
				f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{Mode: mode}})
				var calls atomic.Int32
				h := httpfit.Middleware(f.guard, nil)(logsAPI(&calls))
				method, path, _ := strings.Cut(tt.issuedFor, " ")
				c := nextCursor(t, do(h, method, path))
				for _, other := range tt.rejectedFor {
					method, path, _ := strings.Cut(other, " ")
					rec := do(h, method, target(path, c))
					p := assertProblem(t, rec, http.StatusBadRequest, "cursor_mismatch", "cursor")
					assert.False(t, strings.Contains(rec.Body.String(), tt.notInARejectionOf), "nothing of the data: %s", other)
					assert.NotEmpty(t, p.Suggestion)
				}
				assert.Equal(t, int32(1), calls.Load(), "a rejected cursor runs no handler")
				method, path, _ = strings.Cut(tt.honouredFor, " ")
				rec := do(h, method, target(path, c))
				require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
				assert.True(t, strings.Contains(rec.Body.String(), tt.notInARejectionOf), "the cursor continues its own resource")
			})
		}
	}
}

func TestAHEADWithACursorIsTheHandlersOwnNotTheSnapshot(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	var calls atomic.Int32
	srv := httptest.NewServer(httpfit.Middleware(f.guard, nil)(logsAPI(&calls)))
	t.Cleanup(srv.Close)
	c := nextCursor(t, do(httpfit.Middleware(f.guard, nil)(logsAPI(&calls)), "GET", "/api/v1/logs/app"))
	calls.Store(0)
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/api/v1/logs/app", http.StatusOK},
		{"/api/v1/logs/nope", http.StatusNotFound},
	} {
		res, err := srv.Client().Head(srv.URL + target(tt.path, c))
		require.NoError(t, err)
		_ = res.Body.Close()
		assert.Equal(t, tt.status, res.StatusCode, tt.path)
		assert.Empty(t, res.Header.Get("Ctxfit-Strategy"), "HEAD is left alone: %s", tt.path)
	}
	assert.Equal(t, int32(2), calls.Load(), "the handler answered both, as it would without the middleware")
}
