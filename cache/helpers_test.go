package cache_test

import (
	"time"

	"github.com/ctxfit/ctxfit/internal/testing/fakeclock"
)

// clock is a settable clock for tests.
type clock = fakeclock.Clock

func newClock() *clock { return fakeclock.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) }
