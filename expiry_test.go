package ctxfit_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// TestACursorPastItsLifetimeIsExpiredNotStale checks what SECURITY.md
// promises: past cursorTTL a cursor is cursor_expired, also within the
// clock skew the codec tolerates, where its snapshot is already gone.
func TestACursorPastItsLifetimeIsExpiredNotStale(t *testing.T) {
	body, err := json.Marshal(corpus.Items(300))
	require.NoError(t, err)
	for _, tt := range []struct {
		name  string
		after time.Duration
		want  string
	}{
		{"a second before its lifetime ends it is served", ctxfit.DefaultCursorTTL - time.Second, ""},
		{"a second after its lifetime it is expired", ctxfit.DefaultCursorTTL + time.Second, "cursor_expired"},
		{"within the clock skew it is expired", ctxfit.DefaultCursorTTL + cursor.DefaultSkew - time.Second, "cursor_expired"},
		{"past the clock skew it is expired", ctxfit.DefaultCursorTTL + cursor.DefaultSkew + time.Second, "cursor_expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, clk := newGuard(t, ctxfit.Config{})
			req := ctxfit.Request{Endpoint: "GET /api/v1/bookings", Limit: 200}
			first, err := g.Handle(context.Background(), req, serve(body, "application/json"))
			require.NoError(t, err)
			require.NotEmpty(t, first.Next)
			clk.t = clk.t.Add(tt.after)
			req.Cursor = first.Next
			_, err = g.Handle(context.Background(), req, serve(body, "application/json"))
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, cursor.ErrExpired)
			assert.Equal(t, tt.want, ctxfit.ProblemOf(err, ctxfit.Params{}).Code)
		})
	}
}
