package telemetry_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ctxfit/ctxfit/telemetry"
)

// seqSource is a rand.Source whose draws, as floats in [0, 1), are the
// given values in turn.
type seqSource struct {
	vs []float64
	i  int
}

func (s *seqSource) Uint64() uint64 {
	v := s.vs[s.i%len(s.vs)]
	s.i++
	return uint64(v*(1<<53)) << 11
}

func seq(vs ...float64) *seqSource { return &seqSource{vs: vs} }

func TestSampler(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		src      rand.Source
		wantRate float64
		want     []bool
	}{
		{"a zero rate samples 1 percent", 0, seq(0.005, 0.02, 0.5), 0.01, []bool{true, false, false}},
		{"a rate of one half samples draws below it", 0.5, seq(0.1, 0.7, 0.49, 0.5), 0.5, []bool{true, false, true, false}},
		{"a negative rate never samples", -1, seq(0), 0, []bool{false, false}},
		{"a rate of one or more always samples", 3, seq(0.999), 1, []bool{true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := telemetry.NewSampler(tt.rate, tt.src)
			assert.Equal(t, tt.wantRate, s.Rate())
			var got []bool
			for range tt.want {
				got = append(got, s.Sample())
			}
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("the default source samples about the rate", func(t *testing.T) {
		s := telemetry.NewSampler(0.25, nil)
		n := 0
		for range 20000 {
			if s.Sample() {
				n++
			}
		}
		assert.InDelta(t, 5000, n, 500)
	})
	t.Run("a seeded source is repeatable and safe to share", func(t *testing.T) {
		draw := func() []bool {
			s := telemetry.NewSampler(0.3, rand.NewPCG(1, 2))
			out := make([]bool, 64)
			var wg sync.WaitGroup
			for i := range out {
				wg.Go(func() { out[i] = s.Sample() })
			}
			wg.Wait()
			return out
		}
		// Concurrent draws come in any order; their number does not change.
		count := func(bs []bool) (n int) {
			for _, b := range bs {
				if b {
					n++
				}
			}
			return n
		}
		assert.Equal(t, count(draw()), count(draw()))
	})
	t.Run("the zero Sampler samples nothing", func(t *testing.T) {
		var s telemetry.Sampler
		assert.False(t, s.Sample())
	})
}

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
