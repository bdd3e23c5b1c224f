package telemetry_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ctxfit/ctxfit/telemetry"
)

func TestRelativeError(t *testing.T) {
	tests := []struct {
		name             string
		estimated, exact int
		want             float64
		within           bool
	}{
		{"an exact estimate has no error", 100, 100, 0, true},
		{"a high estimate is positive", 120, 100, 0.2, true},
		{"a low estimate is negative", 75, 100, -0.25, false},
		{"20 percent low is within tolerance", 80, 100, -0.2, true},
		{"an exact count of zero is taken as one", 3, 0, 3, false},
		{"both zero is no error", 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := telemetry.RelativeError(tt.estimated, tt.exact)
			assert.InDelta(t, tt.want, got, 1e-12)
			assert.False(t, math.IsInf(got, 0) || math.IsNaN(got))
			assert.Equal(t, tt.within, telemetry.WithinTolerance(got))
		})
	}
}
