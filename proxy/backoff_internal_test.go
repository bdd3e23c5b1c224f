package proxy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoffDoublesIsCappedAndJittered(t *testing.T) {
	const lo, hi = 250 * time.Millisecond, 30 * time.Second
	tests := []struct {
		name    string
		attempt int
		jitter  float64
		want    time.Duration
	}{
		{"the first restart waits half the minimum with no jitter", 0, 0, 125 * time.Millisecond},
		{"the first restart waits at most the minimum", 0, 0.999999, 249999875 * time.Nanosecond},
		{"each failed restart doubles the delay", 3, 0, 1 * time.Second},
		{"the delay stops at the maximum", 20, 0, 15 * time.Second},
		{"a huge attempt count does not overflow", 1 << 20, 0.5, 22500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, backoff(tt.attempt, lo, hi, tt.jitter))
		})
	}
}
