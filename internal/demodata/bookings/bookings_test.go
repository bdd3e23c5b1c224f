package bookings_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
)

func get(target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	bookings.Handler().ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	return rec
}

func TestTheAPI(t *testing.T) {
	exact, err := budget.Exact("")
	require.NoError(t, err)

	t.Run("the list holds 500 bookings in creation order, far over a budget", func(t *testing.T) {
		rec := get("/api/v1/bookings")
		require.Equal(t, http.StatusOK, rec.Code)
		var got []bookings.Booking
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
		assert.Equal(t, bookings.Bookings(), got)
		assert.Len(t, got, bookings.BookingCount)
		assert.Equal(t, "BK00001", got[0].ID)
		assert.Greater(t, exact.Count(rec.Body.String()), 20000)
	})
	t.Run("the status filter and the order apply", func(t *testing.T) {
		var got []bookings.Booking
		require.NoError(t, json.Unmarshal(get("/api/v1/bookings?status=pending&order=created_desc").Body.Bytes(), &got))
		require.NotEmpty(t, got)
		for _, b := range got {
			assert.Equal(t, "pending", b.Status)
		}
		assert.Greater(t, got[0].CreatedAt, got[len(got)-1].CreatedAt)
	})
	t.Run("an unknown order is the API's own 400", func(t *testing.T) {
		assert.Equal(t, http.StatusBadRequest, get("/api/v1/bookings?order=price").Code)
	})
	t.Run("a booking is over 3,000 tokens and over the detail threshold", func(t *testing.T) {
		rec := get("/api/v1/bookings/BK00042")
		require.Equal(t, http.StatusOK, rec.Code)
		var d map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &d))
		assert.Equal(t, "BK00042", d["id"])
		n := exact.Count(rec.Body.String())
		assert.Greater(t, n, 3000)
		assert.Greater(t, n, bookings.DetailThreshold)
	})
	t.Run("an unknown booking is a 404", func(t *testing.T) {
		assert.Equal(t, http.StatusNotFound, get("/api/v1/bookings/BK99999").Code)
	})
	t.Run("the log has 10,000 lines of text", func(t *testing.T) {
		rec := get("/api/v1/logs/app")
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, "text/plain; charset=utf-8", rec.Header().Get("Content-Type"))
		assert.Equal(t, bookings.LogLines, strings.Count(rec.Body.String(), "\n"))
		assert.Contains(t, rec.Body.String(), "\tat com.example")
		assert.Equal(t, http.StatusNotFound, get("/api/v1/logs/other").Code)
	})
	t.Run("the config is valid", func(t *testing.T) {
		assert.NoError(t, bookings.Config().Validate())
	})
}
