package ctxfit

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
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
			s := newSampler(tt.rate, tt.src)
			assert.Equal(t, tt.wantRate, s.rate)
			var got []bool
			for range tt.want {
				got = append(got, s.sample())
			}
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("the default source samples about the rate", func(t *testing.T) {
		s := newSampler(0.25, nil)
		n := 0
		for range 20000 {
			if s.sample() {
				n++
			}
		}
		assert.InDelta(t, 5000, n, 500)
	})
	t.Run("a seeded source is repeatable and safe to share", func(t *testing.T) {
		draw := func() []bool {
			s := newSampler(0.3, rand.NewPCG(1, 2))
			out := make([]bool, 64)
			var wg sync.WaitGroup
			for i := range out {
				wg.Go(func() { out[i] = s.sample() })
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
	t.Run("the zero sampler samples nothing", func(t *testing.T) {
		var s sampler
		assert.False(t, s.sample())
	})
}
