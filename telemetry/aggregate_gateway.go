package telemetry

import (
	"context"
	"time"
)

// GatewaySummary is what the gateway records an [Aggregate] received add up
// to, since it was created: start-up, discovery, validation, API calls
// and reductions. Rates, shares and
// reductions are fractions between 0 and 1 (a mean reduction may be
// negative); every rate and mean is 0 when there is nothing to divide by.
// The zero GatewaySummary means no gateway record was received.
type GatewaySummary struct {
	// Events counts the gateway records received.
	Events int64 `json:"events"`
	// StartupMs is the start-up time of the latest [GatewayStartup], in
	// milliseconds; Tools the number of tools it reported.
	StartupMs float64 `json:"startupMs"`
	Tools     int     `json:"tools"`
	// Discoveries counts [GatewayDiscovery] records; DiscoveryMeanMs and
	// DiscoveryMaxMs are the mean and the longest discovery time.
	Discoveries     int64   `json:"discoveries"`
	DiscoveryMeanMs float64 `json:"discoveryMeanMs"`
	DiscoveryMaxMs  float64 `json:"discoveryMaxMs"`
	// ValidationSuccesses and ValidationFailures count the calls whose
	// arguments matched the input schema and those that did not;
	// ValidationRate is the share of successes.
	ValidationSuccesses int64   `json:"validationSuccesses"`
	ValidationFailures  int64   `json:"validationFailures"`
	ValidationRate      float64 `json:"validationRate"`
	// Retries counts the successful retries after a validation failure
	// ([GatewayRetry]); RetryRate is Retries over ValidationFailures.
	Retries   int64   `json:"retries"`
	RetryRate float64 `json:"retryRate"`
	// APICalls counts the API calls, APIErrors those that got no answer
	// or one outside 2xx ([GatewayRecord.APIError]); AvgAPILatencyMs is the
	// mean call duration.
	APICalls        int64   `json:"apiCalls"`
	APIErrors       int64   `json:"apiErrors"`
	AvgAPILatencyMs float64 `json:"avgApiLatencyMs"`
	// CacheHits and CacheMisses count the response cache's lookups;
	// CacheHitRate is the share of hits.
	CacheHits    int64   `json:"cacheHits"`
	CacheMisses  int64   `json:"cacheMisses"`
	CacheHitRate float64 `json:"cacheHitRate"`
	// SessionsOpened and SessionsClosed count sessions; SessionsCurrent is
	// their difference and SessionsPeak the most open at once.
	SessionsOpened  int64 `json:"sessionsOpened"`
	SessionsClosed  int64 `json:"sessionsClosed"`
	SessionsCurrent int64 `json:"sessionsCurrent"`
	SessionsPeak    int64 `json:"sessionsPeak"`
	// Shaped counts the shaped results of the gateway's tools and
	// ReductionMean is their mean token reduction; Summarized,
	// SummaryReductionMean and SummariesAtTarget are the same for the
	// summaries (strategy "summary"), SummariesAtTarget being the share
	// that reached [ReductionTarget] (70%).
	Shaped               int64   `json:"shaped"`
	ReductionMean        float64 `json:"reductionMean"`
	Summarized           int64   `json:"summarized"`
	SummaryReductionMean float64 `json:"summaryReductionMean"`
	SummariesAtTarget    float64 `json:"summariesAtTarget"`
}

// gatewayAcc accumulates gateway records; the Aggregate's mutex guards it.
type gatewayAcc struct {
	s                           GatewaySummary
	discovery, apiLatency       time.Duration
	discoveryMax                time.Duration
	reductions, summaryReducing float64
	summariesAtTarget           int64
}

// RecordGateway adds r to the gateway's running totals
// ([Aggregate.Gateway]). An invalid record is rejected with the error of
// [GatewayRecord.Validate] and not counted; a record of an event the
// Aggregate does not know is counted in Events only.
func (a *Aggregate) RecordGateway(_ context.Context, r GatewayRecord) error {
	if err := r.Validate(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	g := &a.gw
	g.s.Events++
	switch r.Event {
	case GatewayStartup:
		g.s.StartupMs, g.s.Tools = durationMs(r.Duration), r.Tools
	case GatewayDiscovery:
		g.s.Discoveries++
		g.discovery += r.Duration
		g.discoveryMax = max(g.discoveryMax, r.Duration)
	case GatewayValidationOK:
		g.s.ValidationSuccesses++
	case GatewayValidationFailed:
		g.s.ValidationFailures++
	case GatewayRetry:
		g.s.Retries++
	case GatewayCacheHit:
		g.s.CacheHits++
	case GatewayCacheMiss:
		g.s.CacheMisses++
	case GatewaySessionOpened:
		g.s.SessionsOpened++
		g.s.SessionsPeak = max(g.s.SessionsPeak, g.s.SessionsOpened-g.s.SessionsClosed)
	case GatewaySessionClosed:
		g.s.SessionsClosed++
	case GatewayAPICall:
		g.s.APICalls++
		if r.APIError() {
			g.s.APIErrors++
		}
		g.apiLatency += r.Duration
	case GatewayShaped:
		g.s.Shaped++
		g.reductions += r.Reduction
		if r.Strategy == string(StrategySummary) {
			g.s.Summarized++
			g.summaryReducing += r.Reduction
			if r.Reduction >= ReductionTarget {
				g.summariesAtTarget++
			}
		}
	}
	return nil
}

// Gateway returns the running totals of the gateway records received; the
// zero GatewaySummary when there were none.
func (a *Aggregate) Gateway() GatewaySummary {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.gw.summary()
}

func (g *gatewayAcc) summary() GatewaySummary {
	s := g.s
	s.DiscoveryMeanMs = ratio(durationMs(g.discovery), float64(s.Discoveries))
	s.DiscoveryMaxMs = durationMs(g.discoveryMax)
	s.ValidationRate = ratio(s.ValidationSuccesses, s.ValidationSuccesses+s.ValidationFailures)
	s.RetryRate = ratio(s.Retries, s.ValidationFailures)
	s.AvgAPILatencyMs = ratio(durationMs(g.apiLatency), float64(s.APICalls))
	s.CacheHitRate = ratio(s.CacheHits, s.CacheHits+s.CacheMisses)
	s.SessionsCurrent = s.SessionsOpened - s.SessionsClosed
	s.ReductionMean = ratio(g.reductions, float64(s.Shaped))
	s.SummaryReductionMean = ratio(g.summaryReducing, float64(s.Summarized))
	s.SummariesAtTarget = ratio(g.summariesAtTarget, s.Summarized)
	return s
}
