package proxy

import "time"

// backoff returns the delay before restart attempt n (0-based): min
// doubled n times, capped at max, with "equal jitter": the delay is d/2 +
// r*d/2 for r in [0, 1), so restarts of many proxies spread out but never
// come sooner than half the nominal delay.
func backoff(n int, min, max time.Duration, r float64) time.Duration {
	d := min
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	if d > max || d <= 0 {
		d = max
	}
	half := d / 2
	return half + time.Duration(r*float64(d-half))
}
