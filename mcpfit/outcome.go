package mcpfit

import (
	"context"
	"sync/atomic"
)

// cacheOutcomeKey is the context key of [WithCacheOutcome]'s report.
type cacheOutcomeKey struct{}

// WithCacheOutcome returns a context for one tools/call request and a
// function that, once the call has returned, says whether the adapter's
// response cache ([Options.Cache]) served it: true for a hit, false for a
// miss, nil when no cache lookup happened (no cache, a tool whose results
// are not cached, a call the adapter does not guard, arguments it could
// not read, or a closed cache). It is for a receiving middleware added
// after [Install], which wraps the adapter's, to count hits and misses per
// tool; the adapter itself never needs it.
func WithCacheOutcome(ctx context.Context) (context.Context, func() *bool) {
	hit := new(atomic.Pointer[bool])
	return context.WithValue(ctx, cacheOutcomeKey{}, hit), hit.Load
}

// reportCacheOutcome hands hit to the WithCacheOutcome of ctx, if any.
func reportCacheOutcome(ctx context.Context, hit *bool) {
	if p, ok := ctx.Value(cacheOutcomeKey{}).(*atomic.Pointer[bool]); ok && hit != nil {
		p.Store(hit)
	}
}
