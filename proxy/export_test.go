package proxy

import (
	"testing"
	"time"
)

// SetSharedWriteDeadline sets how long the shared upstream's delivery
// waits for a client to take a message, for the test t.
func SetSharedWriteDeadline(t *testing.T, d time.Duration) {
	old := sharedWriteDeadline
	sharedWriteDeadline = d
	t.Cleanup(func() { sharedWriteDeadline = old })
}
