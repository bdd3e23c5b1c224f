package ctxfit

import (
	"math"
	"math/rand/v2"
	"sync"
)

// defaultEstimateSample is the fraction of responses counted exactly as
// well as estimated when Config.EstimateSample is zero.
const defaultEstimateSample = 0.01

// sampler decides which responses to count exactly as well as estimate, so
// that the estimator's error can be measured (telemetry.RelativeError,
// Record.EstimateError).
//
// A sampler is safe for concurrent use. Its zero value samples nothing.
type sampler struct {
	rate float64
	mu   sync.Mutex  // guards src
	src  rand.Source // nil means the global source, which needs no lock
}

// newSampler returns a sampler that picks the fraction rate of responses:
// zero means defaultEstimateSample, negative means never, and 1 or more
// always. src is the random source; nil means math/rand/v2's global source.
// Tests pass a seeded source to make the choice repeatable; the sampler
// serializes its use, so src need not be safe for concurrent use.
func newSampler(rate float64, src rand.Source) *sampler {
	switch {
	case rate == 0:
		rate = defaultEstimateSample
	case rate < 0 || math.IsNaN(rate):
		rate = 0
	}
	return &sampler{rate: min(rate, 1), src: src}
}

// sample reports whether the current response should be counted exactly.
func (s *sampler) sample() bool {
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
