package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Stats are the gateway's metrics since [New]: start-up and discovery
// times, validation, API calls and the reductions of shaped results.
// A Stats is a copy, taken by [Gateway.Stats]; the zero Stats is all zero.
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
	// Retries counts the calls with valid arguments that followed a
	// validation failure of the same tool in the same session: the
	// model's successful retries.
	Retries int64
	// Calls counts the API calls made; APIErrors those that got no answer
	// or one outside 2xx.
	Calls, APIErrors int64
	// OutputMismatches counts the 2xx answers that did not match their
	// operation's output schema (delivered as text, and logged).
	OutputMismatches int64
	// SkippedOperations counts the document's operations the gateway does
	// not serve (each logged at start with its reason); DocumentWarnings
	// the document's warnings (external references not read, say).
	SkippedOperations, DocumentWarnings int
	// Shaped counts the results of the gateway's tools that ctxfit shaped
	// (the first result of a call, not its continuations); Summarized
	// those it summarized. ReductionMean is the mean token reduction of
	// the shaped results (1 - tokens sent / tokens of the original, 0 to
	// 1), SummaryReductionMean that of the summaries, and
	// SummariesAtLeast70 the share of summaries that cut 70% or more (the
	// reduction target, [telemetry.ReductionTarget]).
	Shaped, Summarized                  int64
	ReductionMean, SummaryReductionMean float64
	SummariesAtLeast70                  float64
	// Cache is the response cache's counters (zero without a cache).
	Cache cache.Stats
	// Sessions counts the sessions that connected; CurrentSessions those
	// still open; PeakSessions the most open at once.
	Sessions, CurrentSessions, PeakSessions int64
	// PeakBufferedBytes is the most memory the calls in flight took at
	// once to read the API's answers, in bytes: at most
	// [Options.MaxBufferedBytes].
	PeakBufferedBytes int64
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
		Retries:             gw.retries.Load(),
		Calls:               gw.calls.Load(),
		APIErrors:           gw.apiErrors.Load(),
		OutputMismatches:    gw.mismatches.Load(),
		SkippedOperations:   gw.skipped,
		DocumentWarnings:    gw.warnings,
		Sessions:            gw.connected.Load(),
		CurrentSessions:     gw.current.Load(),
		PeakSessions:        gw.peak.Load(),
		PeakBufferedBytes:   gw.buffered.peak.Load(),
	}
	if gw.cache != nil {
		s.Cache = gw.cache.Stats()
	}
	gw.mu.Lock()
	defer gw.mu.Unlock()
	s.Shaped, s.Summarized = gw.shaped.n, gw.summarized.n
	s.ReductionMean, s.SummaryReductionMean = gw.shaped.mean(), gw.summarized.mean()
	if gw.summarized.n > 0 {
		s.SummariesAtLeast70 = float64(gw.summarized.atLeast70) / float64(gw.summarized.n)
	}
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
			if !gw.connect(ss) {
				gw.logger.Warn("gateway: a session was refused: too many sessions", "maxSessions", gw.maxSessions)
				return nil, &jsonrpc.Error{Code: codeTooManySessions, Message: fmt.Sprintf(
					"gateway: %d sessions are open, the most the gateway serves at once; close a session or try again later", gw.maxSessions)}
			}
			if method == "tools/list" {
				gw.listed(ss)
			}
		}
		return next(ctx, method, req)
	}
}

// codeTooManySessions is the JSON-RPC error code of a session refused
// beyond [Options.MaxSessions] (implementation-defined server error).
const codeTooManySessions = -32000

// connect counts ss when it is new and [Options.MaxSessions] allows it,
// and reports whether ss may be served.
func (gw *Gateway) connect(ss *mcp.ServerSession) bool {
	gw.mu.Lock()
	if _, seen := gw.connectedAt[ss]; seen {
		gw.mu.Unlock()
		return true
	}
	if gw.maxSessions > 0 && gw.current.Load() >= int64(gw.maxSessions) {
		gw.mu.Unlock()
		return false
	}
	gw.connectedAt[ss] = gw.now()
	cur := gw.current.Add(1) // under mu: admissions cannot overtake each other
	gw.mu.Unlock()
	gw.connected.Add(1)
	for {
		p := gw.peak.Load()
		if cur <= p || gw.peak.CompareAndSwap(p, cur) {
			break
		}
	}
	gw.emit(context.Background(), telemetry.GatewayRecord{Event: telemetry.GatewaySessionOpened})
	go func() {
		_ = ss.Wait()
		gw.current.Add(-1)
		gw.mu.Lock()
		gw.forgetLocked(ss)
		gw.mu.Unlock()
		gw.emit(context.Background(), telemetry.GatewayRecord{Event: telemetry.GatewaySessionClosed})
	}()
	return true
}

func (gw *Gateway) listed(ss *mcp.ServerSession) {
	gw.mu.Lock()
	at, ok := gw.connectedAt[ss]
	if !ok || at.IsZero() {
		gw.mu.Unlock()
		return
	}
	d := gw.now().Sub(at)
	gw.connectedAt[ss] = time.Time{} // listed: measured once
	if len(gw.discovery) == maxDiscoveries {
		gw.discovery = gw.discovery[1:]
	}
	gw.discovery = append(gw.discovery, d)
	gw.mu.Unlock()
	gw.logger.Info("gateway: tools discovered", "discovery", d.String())
	gw.emit(context.Background(), telemetry.GatewayRecord{Event: telemetry.GatewayDiscovery, Duration: max(d, 0)})
}

// reductions accumulates token reductions.
type reductions struct {
	n, atLeast70 int64
	sum          float64
}

func (r *reductions) add(v float64) {
	r.n++
	r.sum += v
	if v >= telemetry.ReductionTarget {
		r.atLeast70++
	}
}

func (r reductions) mean() float64 {
	if r.n == 0 {
		return 0
	}
	return r.sum / float64(r.n)
}

// measure is the receiving middleware, added after mcpfit's, that reads
// what the guard did to the result of a call of one of the gateway's tools
// (its _meta dev.ctxfit/strategy, dev.ctxfit/tokens and dev.ctxfit/originalTokens),
// and whether mcpfit's response cache served the call (a hit), ran the
// tool for it (a miss), or was not asked (neither is counted).
func (gw *Gateway) measure(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		_, ours := gw.byName[call.Params.Name]
		if !ours {
			return next(ctx, method, req)
		}
		ctx, cacheHit := mcpfit.WithCacheOutcome(ctx)
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		if hit := cacheHit(); hit != nil {
			ev := telemetry.GatewayCacheMiss
			if *hit {
				ev = telemetry.GatewayCacheHit
			}
			gw.emit(ctx, telemetry.GatewayRecord{Event: ev, Tool: call.Params.Name})
		}
		r, ok := res.(*mcp.CallToolResult)
		if !ok || r == nil || r.Meta == nil {
			return res, err
		}
		strategy, _ := r.Meta["dev.ctxfit/strategy"].(string)
		after, okA := number(r.Meta["dev.ctxfit/tokens"])
		before, okB := number(r.Meta["dev.ctxfit/originalTokens"])
		if strategy == "" || !okA || !okB || before <= 0 {
			return res, err
		}
		v := 1 - after/before
		gw.mu.Lock()
		gw.shaped.add(v)
		if strategy == string(telemetry.StrategySummary) {
			gw.summarized.add(v)
		}
		gw.mu.Unlock()
		gw.emit(ctx, telemetry.GatewayRecord{Event: telemetry.GatewayShaped, Tool: call.Params.Name, Strategy: strategy, Reduction: v})
		return res, err
	}
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}
