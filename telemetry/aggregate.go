package telemetry

import (
	"context"
	"maps"
	"math"
	"slices"
	"sync"
	"time"
)

// Defaults of [AggregateOptions].
const (
	DefaultCapacity           = 10000
	DefaultOversizeThreshold  = 0.05
	DefaultOversizeMinRecords = 100
)

// Health statuses of a [HealthReport].
const (
	StatusOK       = "ok"
	StatusDegraded = "degraded"
)

// AggregateOptions configure an [Aggregate]. A nil *AggregateOptions and
// zero fields mean the documented defaults; NewAggregate copies the options.
type AggregateOptions struct {
	// Capacity is the number of most recent records retained for queries.
	// Zero or negative means 10,000.
	Capacity int
	// OversizeThreshold is the oversize-attempt rate (a fraction of
	// responses, 0 to 1) above which the window is unhealthy. Zero or
	// negative means 0.05 (5% of traffic).
	OversizeThreshold float64
	// OversizeMinRecords is the number of retained records below which the
	// rate is not judged, so that the first few requests do not raise an
	// alarm. Zero or negative means 100; 1 judges from the first record.
	OversizeMinRecords int
	// OnOversizeRate, when not nil, is called when the oversize-attempt rate
	// over the retained window passes OversizeThreshold: once on the
	// crossing, not on every record; it is armed again when the rate falls
	// back to the threshold or below. It receives the rate and the summary
	// of the window. It runs synchronously in the Record call that crossed
	// the threshold, after the Aggregate's lock is released, so it may call
	// the Aggregate; it should return quickly. Nil means no hook.
	OnOversizeRate func(rate float64, window Summary)
	// Now is the clock: the time of records without a Timestamp, the start
	// time and the health report's time. Nil means time.Now.
	Now func() time.Time
}

// Filter selects records for [Aggregate.Query]. Zero fields select
// everything.
type Filter struct {
	// Endpoint selects one endpoint; empty means all.
	Endpoint string
	// Since selects records at or after a time; zero means no lower bound.
	Since time.Time
	// Until selects records before a time; zero means no upper bound.
	Until time.Time
	// Outcome selects one outcome; empty means all.
	Outcome Outcome
}

// Summary is what a set of records adds up to. Rates and adoptions are
// fractions between 0 and 1; percentages are between 0 and 100. Every
// average and rate is 0 when there is nothing to divide by, so a Summary is
// always valid JSON.
type Summary struct {
	// Count is the number of responses.
	Count int `json:"count"`
	// From and To are the earliest and latest record timestamps.
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
	// Outcomes and Strategies count responses by outcome and strategy.
	Outcomes   map[string]int `json:"outcomes,omitempty"`
	Strategies map[string]int `json:"strategies,omitempty"`

	// Paginated, Summarized and Chunked count the responses each strategy
	// shaped; the adoptions are those counts over Count.
	Paginated          int     `json:"paginated"`
	Summarized         int     `json:"summarized"`
	Chunked            int     `json:"chunked"`
	PaginationAdoption float64 `json:"paginationAdoption"`
	SummaryAdoption    float64 `json:"summaryAdoption"`
	ChunkingAdoption   float64 `json:"chunkingAdoption"`

	// AvgResponseBytes and AvgResponseTokens are the average sizes sent
	// (BytesAfter, TokensAfter); the Before averages are the sizes the
	// handlers produced.
	AvgResponseBytes  float64 `json:"avgResponseBytes"`
	AvgResponseTokens float64 `json:"avgResponseTokens"`
	AvgBytesBefore    float64 `json:"avgBytesBefore"`
	AvgTokensBefore   float64 `json:"avgTokensBefore"`
	// AvgLatencyMs is the average Latency in milliseconds.
	AvgLatencyMs float64 `json:"avgLatencyMs"`

	// TokensBefore and TokensAfter are the totals; TokensSaved is their
	// difference and TokensSavedPercent that difference as a percentage of
	// TokensBefore. BytesSaved is the same in bytes.
	TokensBefore       int64   `json:"tokensBefore"`
	TokensAfter        int64   `json:"tokensAfter"`
	TokensSaved        int64   `json:"tokensSaved"`
	TokensSavedPercent float64 `json:"tokensSavedPercent"`
	BytesSaved         int64   `json:"bytesSaved"`

	// Oversize counts oversized attempts ([Record.Oversize]); OversizeRate
	// is Oversize over Count.
	Oversize     int     `json:"oversize"`
	OversizeRate float64 `json:"oversizeRate"`
	// Fallbacks counts responses with outcome fallback or a Fallback
	// reason.
	Fallbacks int `json:"fallbacks"`
	// Compared counts A/B comparison responses ([Record.Compare]).
	Compared int `json:"compared"`

	// EstimateSamples counts the responses whose estimate was checked
	// against an exact count; EstimateWithinTolerance those within
	// [EstimateTolerance]. EstimateAccuracy is their ratio (SC-008 asks for
	// at least 0.9) and EstimateMeanAbsError the mean absolute relative
	// error.
	EstimateSamples         int     `json:"estimateSamples"`
	EstimateWithinTolerance int     `json:"estimateWithinTolerance"`
	EstimateAccuracy        float64 `json:"estimateAccuracy"`
	EstimateMeanAbsError    float64 `json:"estimateMeanAbsError"`

	// CacheLookups counts the responses for which a cache was consulted
	// (CacheHit set), CacheHits those served from it; CacheHitRate is their
	// ratio.
	CacheLookups int     `json:"cacheLookups"`
	CacheHits    int     `json:"cacheHits"`
	CacheHitRate float64 `json:"cacheHitRate"`
}

// HealthReport is the JSON document a health endpoint serves: the state of
// the retained window, overall and per endpoint, and the running totals
// since the Aggregate was created.
type HealthReport struct {
	// Status is [StatusDegraded] when the window holds at least
	// OversizeMinRecords records and its oversize rate is above the
	// threshold, [StatusOK] otherwise.
	Status string `json:"status"`
	// GeneratedAt is when the report was made, StartedAt when the
	// Aggregate was created, UptimeSeconds the time between.
	GeneratedAt   time.Time `json:"generatedAt"`
	StartedAt     time.Time `json:"startedAt"`
	UptimeSeconds float64   `json:"uptimeSeconds"`
	// Capacity is the number of records the window retains.
	Capacity int `json:"capacity"`
	// OversizeThreshold is the rate above which Status is degraded.
	OversizeThreshold float64 `json:"oversizeThreshold"`
	// Window summarizes the retained records, Endpoints the same records
	// by endpoint.
	Window    Summary            `json:"window"`
	Endpoints map[string]Summary `json:"endpoints"`
	// Totals are the running totals of every record since the start,
	// retained or not.
	Totals Summary `json:"totals"`
	// Gateway is [Aggregate.Gateway], the running totals of the gateway
	// records; nil when there were none.
	Gateway *GatewaySummary `json:"gateway,omitempty"`
}

// Aggregate is an in-memory [Sink] that keeps the last Capacity records and
// running totals of all of them, and answers queries over them. Memory is
// bounded: a retained record costs 128 bytes on 64-bit platforms (its
// strings are shared, its metadata is not kept).
//
// Record validates each record and rejects invalid ones with the error of
// [Record.Validate]. Queries scan the retained window: for the default
// capacity that takes well under a millisecond.
//
// An Aggregate is a [GatewaySink] too: [Aggregate.RecordGateway] keeps
// running totals of gateway records ([Aggregate.Gateway]), reported in the
// health report.
//
// An Aggregate is safe for concurrent use. Its zero value is not usable; call
// [NewAggregate].
type Aggregate struct {
	opts    AggregateOptions
	started time.Time

	mu       sync.RWMutex
	ring     []entry // len(ring) == size until full, then Capacity
	next     int     // index of the next write once full
	oversize int     // oversized entries in ring
	above    bool    // the oversize rate is above the threshold
	total    acc     // every record ever accepted
	gw       gatewayAcc
}

// entry is the part of a Record the Aggregate keeps.
type entry struct {
	endpoint, outcome, strategy string
	at                          time.Time
	tokensBefore, tokensAfter   int
	bytesBefore, bytesAfter     int
	latency                     time.Duration
	estErr                      float64
	flags                       uint16
}

const (
	flagPaginated uint16 = 1 << iota
	flagSummarized
	flagChunked
	flagOversize
	flagFallback
	flagCompare
	flagSampled
	flagCacheLookup
	flagCacheHit
)

// NewAggregate returns an empty Aggregate configured by opts (nil means the
// defaults).
func NewAggregate(opts *AggregateOptions) *Aggregate {
	var o AggregateOptions
	if opts != nil {
		o = *opts
	}
	if o.Capacity <= 0 {
		o.Capacity = DefaultCapacity
	}
	if o.OversizeThreshold <= 0 {
		o.OversizeThreshold = DefaultOversizeThreshold
	}
	if o.OversizeMinRecords <= 0 {
		o.OversizeMinRecords = DefaultOversizeMinRecords
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Aggregate{
		opts:    o,
		started: o.Now(),
		ring:    make([]entry, 0, min(o.Capacity, 1024)),
	}
}

// Record adds r to the window and the totals, evicting the oldest record
// when the window is full, and calls OnOversizeRate if the oversize rate has
// just crossed its threshold. An invalid record is rejected with the error
// of [Record.Validate] and not counted.
func (a *Aggregate) Record(_ context.Context, r Record) error {
	if err := r.Validate(); err != nil {
		return err
	}
	e := newEntry(r)
	if e.at.IsZero() {
		e.at = a.opts.Now()
	}

	a.mu.Lock()
	if len(a.ring) < a.opts.Capacity {
		a.ring = append(a.ring, e)
	} else {
		if a.ring[a.next].flags&flagOversize != 0 {
			a.oversize--
		}
		a.ring[a.next] = e
		a.next = (a.next + 1) % a.opts.Capacity
	}
	if e.flags&flagOversize != 0 {
		a.oversize++
	}
	a.total.add(&e)

	var (
		fire   bool
		rate   float64
		window Summary
	)
	n := len(a.ring)
	rate = float64(a.oversize) / float64(n)
	switch {
	case n >= a.opts.OversizeMinRecords && rate > a.opts.OversizeThreshold:
		if !a.above {
			a.above = true
			fire = a.opts.OnOversizeRate != nil
			if fire {
				window = a.queryLocked(Filter{})
			}
		}
	case rate <= a.opts.OversizeThreshold:
		a.above = false
	}
	a.mu.Unlock()

	if fire {
		a.opts.OnOversizeRate(rate, window)
	}
	return nil
}

func newEntry(r Record) entry {
	e := entry{
		endpoint:     r.Endpoint,
		outcome:      string(r.Outcome),
		strategy:     string(r.Strategy),
		at:           r.Timestamp,
		tokensBefore: r.TokensBefore,
		tokensAfter:  r.TokensAfter,
		bytesBefore:  r.BytesBefore,
		bytesAfter:   r.BytesAfter,
		latency:      r.Latency,
		estErr:       math.NaN(),
	}
	set := func(f uint16, on bool) {
		if on {
			e.flags |= f
		}
	}
	set(flagPaginated, r.PaginationUsed)
	set(flagSummarized, r.SummarizationUsed)
	set(flagChunked, r.ChunkingUsed)
	set(flagOversize, r.Oversize())
	set(flagFallback, r.Outcome == OutcomeFallback || r.Fallback != "")
	set(flagCompare, r.Compare)
	if r.EstimateError != nil && !math.IsNaN(*r.EstimateError) {
		e.flags |= flagSampled
		e.estErr = *r.EstimateError
	}
	set(flagCacheLookup, r.CacheHit != nil)
	set(flagCacheHit, r.CacheHit != nil && *r.CacheHit)
	return e
}

// Query summarizes the retained records that f selects.
func (a *Aggregate) Query(f Filter) Summary {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.queryLocked(f)
}

func (a *Aggregate) queryLocked(f Filter) Summary {
	var s acc
	for i := range a.ring {
		if e := &a.ring[i]; f.match(e) {
			s.add(e)
		}
	}
	return s.summary()
}

// ByEndpoint summarizes the retained records that f selects, one Summary per
// endpoint.
func (a *Aggregate) ByEndpoint(f Filter) map[string]Summary {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.byEndpointLocked(f)
}

func (a *Aggregate) byEndpointLocked(f Filter) map[string]Summary {
	accs := map[string]*acc{}
	for i := range a.ring {
		e := &a.ring[i]
		if !f.match(e) {
			continue
		}
		s := accs[e.endpoint]
		if s == nil {
			s = &acc{}
			accs[e.endpoint] = s
		}
		s.add(e)
	}
	out := make(map[string]Summary, len(accs))
	for ep, s := range accs {
		out[ep] = s.summary()
	}
	return out
}

// Endpoints returns the distinct endpoints of the retained records, sorted.
func (a *Aggregate) Endpoints() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	seen := map[string]struct{}{}
	for i := range a.ring {
		seen[a.ring[i].endpoint] = struct{}{}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Totals summarizes every record accepted since the Aggregate was created,
// retained or not.
func (a *Aggregate) Totals() Summary {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.total.summary()
}

// Len returns the number of retained records, at most Capacity.
func (a *Aggregate) Len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.ring)
}

// Health reports the state of the window and the running totals, as of the
// Aggregate's clock.
func (a *Aggregate) Health() HealthReport {
	now := a.opts.Now()
	a.mu.RLock()
	defer a.mu.RUnlock()
	window := a.queryLocked(Filter{})
	status := StatusOK
	if window.Count >= a.opts.OversizeMinRecords && window.OversizeRate > a.opts.OversizeThreshold {
		status = StatusDegraded
	}
	var gw *GatewaySummary
	if a.gw.s.Events > 0 {
		s := a.gw.summary()
		gw = &s
	}
	return HealthReport{
		Gateway:           gw,
		Status:            status,
		GeneratedAt:       now,
		StartedAt:         a.started,
		UptimeSeconds:     max(now.Sub(a.started), 0).Seconds(),
		Capacity:          a.opts.Capacity,
		OversizeThreshold: a.opts.OversizeThreshold,
		Window:            window,
		Endpoints:         a.byEndpointLocked(Filter{}),
		Totals:            a.total.summary(),
	}
}

func (f Filter) match(e *entry) bool {
	return (f.Endpoint == "" || f.Endpoint == e.endpoint) &&
		(f.Outcome == "" || string(f.Outcome) == e.outcome) &&
		(f.Since.IsZero() || !e.at.Before(f.Since)) &&
		(f.Until.IsZero() || e.at.Before(f.Until))
}

// acc accumulates entries into a Summary.
type acc struct {
	count, paginated, summarized, chunked    int
	oversize, fallbacks, compared            int
	samples, within, cacheLookups, cacheHits int
	absErr                                   float64
	tokensBefore, tokensAfter                int64
	bytesBefore, bytesAfter                  int64
	latency                                  time.Duration
	outcomes, strategies                     map[string]int
	from, to                                 time.Time
}

func (s *acc) add(e *entry) {
	s.count++
	if s.from.IsZero() || e.at.Before(s.from) {
		s.from = e.at
	}
	if e.at.After(s.to) {
		s.to = e.at
	}
	if s.outcomes == nil {
		s.outcomes, s.strategies = map[string]int{}, map[string]int{}
	}
	s.outcomes[e.outcome]++
	s.strategies[e.strategy]++
	count := func(f uint16, n *int) {
		if e.flags&f != 0 {
			*n++
		}
	}
	count(flagPaginated, &s.paginated)
	count(flagSummarized, &s.summarized)
	count(flagChunked, &s.chunked)
	count(flagOversize, &s.oversize)
	count(flagFallback, &s.fallbacks)
	count(flagCompare, &s.compared)
	if e.flags&flagSampled != 0 {
		s.samples++
		abs := math.Abs(e.estErr)
		s.absErr += abs
		if WithinTolerance(e.estErr) {
			s.within++
		}
	}
	count(flagCacheLookup, &s.cacheLookups)
	count(flagCacheHit, &s.cacheHits)
	s.tokensBefore += int64(e.tokensBefore)
	s.tokensAfter += int64(e.tokensAfter)
	s.bytesBefore += int64(e.bytesBefore)
	s.bytesAfter += int64(e.bytesAfter)
	s.latency += e.latency
}

func ratio[T int | int64 | float64](n, d T) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func (s *acc) summary() Summary {
	saved := s.tokensBefore - s.tokensAfter
	return Summary{
		Count:                   s.count,
		From:                    s.from,
		To:                      s.to,
		Outcomes:                maps.Clone(s.outcomes),
		Strategies:              maps.Clone(s.strategies),
		Paginated:               s.paginated,
		Summarized:              s.summarized,
		Chunked:                 s.chunked,
		PaginationAdoption:      ratio(s.paginated, s.count),
		SummaryAdoption:         ratio(s.summarized, s.count),
		ChunkingAdoption:        ratio(s.chunked, s.count),
		AvgResponseBytes:        ratio(s.bytesAfter, int64(s.count)),
		AvgResponseTokens:       ratio(s.tokensAfter, int64(s.count)),
		AvgBytesBefore:          ratio(s.bytesBefore, int64(s.count)),
		AvgTokensBefore:         ratio(s.tokensBefore, int64(s.count)),
		AvgLatencyMs:            ratio(durationMs(s.latency), float64(s.count)),
		TokensBefore:            s.tokensBefore,
		TokensAfter:             s.tokensAfter,
		TokensSaved:             saved,
		TokensSavedPercent:      100 * ratio(saved, s.tokensBefore),
		BytesSaved:              s.bytesBefore - s.bytesAfter,
		Oversize:                s.oversize,
		OversizeRate:            ratio(s.oversize, s.count),
		Fallbacks:               s.fallbacks,
		Compared:                s.compared,
		EstimateSamples:         s.samples,
		EstimateWithinTolerance: s.within,
		EstimateAccuracy:        ratio(s.within, s.samples),
		EstimateMeanAbsError:    ratio(s.absErr, float64(s.samples)),
		CacheLookups:            s.cacheLookups,
		CacheHits:               s.cacheHits,
		CacheHitRate:            ratio(s.cacheHits, s.cacheLookups),
	}
}
