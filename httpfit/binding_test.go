package httpfit_test

import (
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

// withHeaders serves a request for target with the header lines given
// ("Name: value").
func withHeaders(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for _, line := range header {
		name, value, _ := strings.Cut(line, ": ")
		req.Header.Add(name, value)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestByDefaultCursorsAreBoundToTheCredentialsTheRequestCarried(t *testing.T) {
	tests := []struct {
		name          string
		issued        []string
		honouredUnder [][]string
		rejectedUnder [][]string
	}{
		{
			name:          "a bearer token",
			issued:        []string{"Authorization: Bearer alice"},
			honouredUnder: [][]string{{"Authorization: Bearer alice"}},
			rejectedUnder: [][]string{{"Authorization: Bearer bob"}, {}, {"Cookie: session=alice"}, {"Authorization: Bearer alice2"}},
		},
		{
			name:          "a session cookie",
			issued:        []string{"Cookie: session=alice"},
			honouredUnder: [][]string{{"Cookie: session=alice"}},
			rejectedUnder: [][]string{{"Cookie: session=bob"}, {}, {"Authorization: session=alice"}},
		},
		{
			name:          "a token and a cookie together",
			issued:        []string{"Authorization: Bearer alice", "Cookie: session=alice"},
			honouredUnder: [][]string{{"Authorization: Bearer alice", "Cookie: session=alice"}},
			rejectedUnder: [][]string{{"Authorization: Bearer alice"}, {"Cookie: session=alice"}, {"Authorization: Bearer alice", "Cookie: session=bob"}},
		},
		{
			name:          "no credentials",
			issued:        nil,
			honouredUnder: [][]string{{}},
			rejectedUnder: [][]string{{"Authorization: Bearer alice"}, {"Cookie: session=alice"}},
		},
	}
	for _, tt := range tests {
		t.Run("a cursor issued with "+tt.name, func(t *testing.T) {
			f := newFixture(t, ctxfit.Options{})
			var calls atomic.Int32
			h := httpfit.Middleware(f.guard, nil)(api(&calls))
			rec := withHeaders(h, "GET", "/api/bookings", tt.issued...)
			first := decodePage(t, rec)
			require.NotEmpty(t, first.NextCursor)
			next := target("/api/bookings", first.NextCursor)
			for _, header := range tt.rejectedUnder {
				rec := withHeaders(h, "GET", next, header...)
				p := assertProblem(t, rec, http.StatusBadRequest, "cursor_mismatch", "cursor")
				assert.Contains(t, p.Detail, "another subject", "under %q", header)
				assert.NotContains(t, rec.Body.String(), first.Items[0].ID, "nothing of the data")
			}
			for _, header := range tt.honouredUnder {
				got := decodePage(t, withHeaders(h, "GET", next, header...))
				assert.NotEmpty(t, got.Items, "under %q", header)
			}
			assert.Equal(t, int32(1), calls.Load(), "continuations come from the store; nothing ran the handler for another caller")
		})
	}
}

func TestASubjectOptionBindsCursorsToTheUserAcrossTokens(t *testing.T) {
	// Tokens as an authentication middleware in front of ctxfit would
	// resolve them: two tokens of alice's (one rotated), one of bob's.
	users := map[string]string{"Bearer alice-1": "alice", "Bearer alice-2": "alice", "Bearer bob-1": "bob"}
	f := newFixture(t, ctxfit.Options{})
	h := httpfit.Middleware(f.guard, &httpfit.Options{
		Subject: func(r *http.Request) string { return "user:" + users[r.Header.Get("Authorization")] },
	})(api(nil))
	first := decodePage(t, withHeaders(h, "GET", "/api/bookings", "Authorization: Bearer alice-1"))
	next := target("/api/bookings", first.NextCursor)

	got := decodePage(t, withHeaders(h, "GET", next, "Authorization: Bearer alice-2"))
	assert.NotEmpty(t, got.Items, "the same user with a rotated token continues")
	assertProblem(t, withHeaders(h, "GET", next, "Authorization: Bearer bob-1"), http.StatusBadRequest, "cursor_mismatch", "cursor")
}
