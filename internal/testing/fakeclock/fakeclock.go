// Package fakeclock is a settable clock for tests: pass its Now where an
// option takes func() time.Time, and move it with Advance instead of
// sleeping.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a settable time source, safe for concurrent use. The zero Clock
// reads the zero time.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock that reads start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
