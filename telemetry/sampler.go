package telemetry

import (
	"math"
	"math/rand/v2"
	"sync"
)

// DefaultSampleRate is the default fraction of responses a [Sampler] picks.
const DefaultSampleRate = 0.01

// Sampler decides which responses to count exactly as well as estimate, so
// that the estimator's error can be measured ([RelativeError],
// [Record.EstimateError]).
//
// A Sampler is safe for concurrent use. Its zero value samples nothing; call
// [NewSampler].
type Sampler struct {
	rate float64
	mu   sync.Mutex  // guards src
	src  rand.Source // nil means the global source, which needs no lock
}

// NewSampler returns a Sampler that picks the fraction rate of responses:
// zero means 0.01 (1%, as Config.EstimateSample), negative means never, and
// 1 or more always. src is the random source; nil means math/rand/v2's
// global source. Tests pass a seeded source (rand.NewPCG(1, 2)) to make the
// choice repeatable; the Sampler serializes its use, so src need not be safe
// for concurrent use.
func NewSampler(rate float64, src rand.Source) *Sampler {
	switch {
	case rate == 0:
		rate = DefaultSampleRate
	case rate < 0 || math.IsNaN(rate):
		rate = 0
	}
	return &Sampler{rate: min(rate, 1), src: src}
}

// Rate returns the fraction of responses the Sampler picks.
func (s *Sampler) Rate() float64 { return s.rate }

// Sample reports whether the current response should be counted exactly.
func (s *Sampler) Sample() bool {
	switch {
	case s.rate <= 0:
		return false
	case s.rate >= 1:
		return true
	}
	if s.src == nil {
		return rand.Float64() < s.rate
	}
	s.mu.Lock()
	u := s.src.Uint64()
	s.mu.Unlock()
	return float64(u>>11)/(1<<53) < s.rate
}

// RelativeError returns (estimated − exact) / exact: positive when the
// estimate is high, negative when it is low. An exact count of 0 is taken as
// 1, so that the result is always finite (and 0 when both are 0).
func RelativeError(estimated, exact int) float64 {
	return float64(estimated-exact) / float64(max(exact, 1))
}

// WithinTolerance reports whether a relative error is within
// [EstimateTolerance] (20%) either way.
func WithinTolerance(relErr float64) bool {
	return math.Abs(relErr) <= EstimateTolerance
}
