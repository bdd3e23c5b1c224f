package fakeclock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ctxfit/ctxfit/internal/testing/fakeclock"
)

func TestTheClockMovesOnlyWhenAdvanced(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := fakeclock.New(start)
	assert.Equal(t, start, c.Now())
	c.Advance(90 * time.Second)
	assert.Equal(t, start.Add(90*time.Second), c.Now())
}
