package telemetry

import "math"

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
