package gateway

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit/cache"
)

// Stats are the gateway's metrics since [New], the seed's server metrics
// that the gateway itself measures. Summarization reductions are the
// guard's telemetry (ctxfit.Options.Sink), not repeated here.
type Stats struct {
	// Startup is the time from [Options.Started] (or New's call) to the
	// server being ready.
	Startup time.Duration
	// Discoveries counts sessions that listed the tools; DiscoveryLast,
	// DiscoveryMax and DiscoveryMean are the times from a session's first
	// request (initialize) to its first tools/list.
	Discoveries                                int
	DiscoveryLast, DiscoveryMax, DiscoveryMean time.Duration
	// ValidationSuccesses and ValidationFailures count tool calls whose
	// arguments matched the input schema, and those that did not. A call
	// served from the cache is not validated again, nor counted here.
	ValidationSuccesses, ValidationFailures int64
	// Calls counts the API calls made; APIErrors those that got no answer
	// or one outside 2xx.
	Calls, APIErrors int64
	// Cache is the response cache's counters (zero without a cache).
	Cache cache.Stats
	// Sessions counts the sessions that connected; CurrentSessions those
	// still open; PeakSessions the most open at once.
	Sessions, CurrentSessions, PeakSessions int64
}

// ValidationRate is the share of calls whose arguments were valid; 0 when
// there were none.
func (s Stats) ValidationRate() float64 {
	n := s.ValidationSuccesses + s.ValidationFailures
	if n == 0 {
		return 0
	}
	return float64(s.ValidationSuccesses) / float64(n)
}

// Stats returns the gateway's metrics.
func (gw *Gateway) Stats() Stats {
	s := Stats{
		Startup:             gw.startup,
		ValidationSuccesses: gw.valid.Load(),
		ValidationFailures:  gw.invalid.Load(),
		Calls:               gw.calls.Load(),
		APIErrors:           gw.apiErrors.Load(),
		Sessions:            gw.connected.Load(),
		CurrentSessions:     gw.current.Load(),
		PeakSessions:        gw.peak.Load(),
	}
	if gw.cache != nil {
		s.Cache = gw.cache.Stats()
	}
	gw.mu.Lock()
	defer gw.mu.Unlock()
	s.Discoveries = len(gw.discovery)
	var sum time.Duration
	for _, d := range gw.discovery {
		sum += d
		s.DiscoveryMax = max(s.DiscoveryMax, d)
	}
	if n := len(gw.discovery); n > 0 {
		s.DiscoveryLast = gw.discovery[n-1]
		s.DiscoveryMean = sum / time.Duration(n)
	}
	return s
}

// maxDiscoveries bounds the discovery times kept for the mean.
const maxDiscoveries = 1000

// observe is the receiving middleware that counts sessions and measures
// discovery: from a session's first request (initialize, or
// server/discover in the protocol that has no initialize) to its first
// tools/list.
func (gw *Gateway) observe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
			gw.connect(ss)
			if method == "tools/list" {
				gw.listed(ss)
			}
		}
		return next(ctx, method, req)
	}
}

func (gw *Gateway) connect(ss *mcp.ServerSession) {
	gw.mu.Lock()
	if _, seen := gw.connectedAt[ss]; seen {
		gw.mu.Unlock()
		return
	}
	gw.connectedAt[ss] = gw.now()
	gw.mu.Unlock()
	gw.connected.Add(1)
	cur := gw.current.Add(1)
	for {
		p := gw.peak.Load()
		if cur <= p || gw.peak.CompareAndSwap(p, cur) {
			break
		}
	}
	go func() {
		_ = ss.Wait()
		gw.current.Add(-1)
		gw.mu.Lock()
		delete(gw.connectedAt, ss)
		gw.mu.Unlock()
	}()
}

func (gw *Gateway) listed(ss *mcp.ServerSession) {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	at, ok := gw.connectedAt[ss]
	if !ok || at.IsZero() {
		return
	}
	d := gw.now().Sub(at)
	gw.connectedAt[ss] = time.Time{} // listed: measured once
	if len(gw.discovery) == maxDiscoveries {
		gw.discovery = gw.discovery[1:]
	}
	gw.discovery = append(gw.discovery, d)
	gw.logger.Info("gateway: tools discovered", "discovery", d.String())
}
