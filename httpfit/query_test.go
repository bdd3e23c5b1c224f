package httpfit_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
)

// queryRecorder is a handler that writes the 500 items (over the
// threshold: the middleware pages them) and remembers the raw query it was
// given.
type queryRecorder struct {
	mu  sync.Mutex
	raw []string
}

func (q *queryRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q.mu.Lock()
	q.raw = append(q.raw, r.URL.RawQuery)
	q.mu.Unlock()
	body(itemsJSON, "application/json", nil)(w, r)
}

func (q *queryRecorder) last() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.raw) == 0 {
		return "(the handler did not run)"
	}
	return q.raw[len(q.raw)-1]
}

func TestAParameterOfTheHandlersThatIsNotURLEncodedReachesItUntouched(t *testing.T) {
	tests := []struct {
		name, query, handlerSees string
	}{
		{"an escape without hex digits", "q=%zz", "q=%zz"},
		{"a lone percent sign", "q=%", "q=%"},
		{"a truncated escape", "q=abc%4", "q=abc%4"},
		{"a name that is not URL-encoded", "%zz=1", "%zz=1"},
		{"a malformed order", "order=%zz&status=ok", "order=%zz&status=ok"},
		{"beside ctxfit's own parameters, which are removed", "q=%zz&limit=5&fields=&x=1", "q=%zz&x=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" reaches the handler and its response is paged", func(t *testing.T) {
			f := newFixture(t, ctxfit.Options{})
			rq := &queryRecorder{}
			h := httpfit.Middleware(f.guard, nil)(rq)
			rec := do(h, "GET", "/api/bookings?"+tt.query)
			first := decodePage(t, rec)
			assert.Equal(t, tt.handlerSees, rq.last())
			assert.Equal(t, "pagination", rec.Header().Get("Ctxfit-Strategy"), "the response is guarded as any other")
			require.NotEmpty(t, first.NextCursor)

			next := decodePage(t, do(h, "GET", target("/api/bookings?"+tt.query, first.NextCursor)))
			assert.NotEmpty(t, next.Items, "the cursor continues the same query")
			assert.NotEqual(t, first.Items[0].ID, next.Items[0].ID)
		})
	}
	t.Run("a malformed ctxfit parameter is a 400 that says how to fix it", func(t *testing.T) {
		f := newFixture(t, ctxfit.Options{})
		rq := &queryRecorder{}
		h := httpfit.Middleware(f.guard, nil)(rq)
		for _, param := range []string{"cursor", "limit", "fields", "startLine", "endLine", "part"} {
			rec := do(h, "GET", "/api/bookings?q=1&"+param+"=%zz")
			p := assertProblem(t, rec, http.StatusBadRequest, "parameter_invalid", param)
			assert.Contains(t, p.Detail, "not URL-encoded correctly", param)
			assert.Contains(t, p.Expected, "URL-encoded", param)
		}
		assert.Equal(t, "(the handler did not run)", rq.last())
	})
}

func TestCursorsAreBoundToTheQueryAsSentByteForByte(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	h := httpfit.Middleware(f.guard, nil)(&queryRecorder{})
	cursorFor := func(t *testing.T, query string) string {
		t.Helper()
		p := decodePage(t, do(h, "GET", "/api/bookings?"+query))
		require.NotEmpty(t, p.NextCursor)
		return p.NextCursor
	}
	tests := []struct {
		name, issued, presented string
		honoured                bool
	}{
		{"a value that is not UTF-8 binds its bytes, not a replacement character", "q=%ff", "q=%fe", false},
		{"the same bytes escaped in upper case are the same query", "q=%ff", "q=%FF", true},
		{"a malformed escape is not its correctly escaped look-alike", "q=%zz", "q=%25zz", false},
		{"a correctly escaped value is not its malformed look-alike", "q=%25zz", "q=%zz", false},
		{"a malformed escape is not another", "q=%zz", "q=%zy", false},
		{"a malformed escape is not the query without it", "q=%zz&x=1", "x=1", false},
		{"the query without it is not a malformed escape", "x=1", "x=1&q=%zz", false},
		{"the same malformed query is honoured", "q=%zz&x=1", "q=%zz&x=1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cursorFor(t, tt.issued)
			rec := do(h, "GET", target("/api/bookings?"+tt.presented, c))
			if tt.honoured {
				assert.NotEmpty(t, decodePage(t, rec).Items)
				return
			}
			assertProblem(t, rec, http.StatusBadRequest, "cursor_mismatch", "cursor")
		})
	}
}

func TestTheHandlerSeesAMalformedQueryAsItWasSentOverHTTP(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	rq := &queryRecorder{}
	srv := httptest.NewServer(httpfit.Middleware(f.guard, nil)(rq))
	t.Cleanup(srv.Close)
	res, err := srv.Client().Get(srv.URL + "/api/bookings?q=%zz&cursor=&limit=3")
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "pagination", res.Header.Get("Ctxfit-Strategy"))
	assert.Equal(t, "q=%zz", rq.last())
}
