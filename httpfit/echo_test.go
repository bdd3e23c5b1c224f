package httpfit_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
)

func TestNothingAClientSendsIsRepeatedWithoutBound(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	h := httpfit.Middleware(f.guard, nil)(api(nil))

	t.Run("a long X-Request-Id is cut in telemetry", func(t *testing.T) {
		req := httptest.NewRequest("GET", "/api/bookings", nil)
		req.Header.Set("X-Request-Id", strings.Repeat("r", 1<<20))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, 200, rec.Code)
		recs := f.records.wait(t, 1)
		id := recs[len(recs)-1].RequestID
		assert.True(t, strings.HasPrefix(id, strings.Repeat("r", 128)), "the ID's start still correlates")
		assert.Less(t, len(id), 200)
	})
	t.Run("a short one is kept as it is", func(t *testing.T) {
		req := httptest.NewRequest("GET", "/api/bookings", nil)
		req.Header.Set("X-Request-Id", "req-42")
		h.ServeHTTP(httptest.NewRecorder(), req)
		recs := f.records.wait(t, 2)
		assert.Equal(t, "req-42", recs[len(recs)-1].RequestID)
	})
	t.Run("a next link that would repeat a 200 KB filter is not given; the cursor is in the body", func(t *testing.T) {
		rec := do(h, "GET", "/api/bookings?filter="+strings.Repeat("f", 200<<10))
		p := decodePage(t, rec)
		assert.NotEmpty(t, p.NextCursor)
		assert.Empty(t, rec.Header().Values("Link"))
	})
	t.Run("an ordinary query still gets its link", func(t *testing.T) {
		rec := do(h, "GET", "/api/bookings?filter=f")
		assert.NotEmpty(t, decodePage(t, rec).NextCursor)
		assert.Len(t, rec.Header().Values("Link"), 1)
	})
}
