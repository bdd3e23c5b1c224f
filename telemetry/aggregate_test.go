package telemetry_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/telemetry"
)

var t0 = time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)

// fixture is a fixed set of five records with hand-computed totals.
func fixture() []telemetry.Record {
	return []telemetry.Record{
		{ // passthrough, sampled within tolerance, cache miss
			RequestID: "r1", Endpoint: "/orders", Timestamp: t0, Latency: time.Millisecond, ItemCount: 10,
			TokensBefore: 1000, TokensAfter: 1000, BytesBefore: 4000, BytesAfter: 4000,
			Strategy: telemetry.StrategyPassthrough, Outcome: telemetry.OutcomePassthrough,
			EstimateError: ptr(0.1), CacheHit: ptr(false),
		},
		{ // paginated, sampled outside tolerance, cache hit
			RequestID: "r2", Endpoint: "/orders", Timestamp: t0.Add(time.Minute), Latency: 3 * time.Millisecond, ItemCount: 50,
			TokensBefore: 10000, TokensAfter: 3000, BytesBefore: 40000, BytesAfter: 12000, PaginationUsed: true,
			Strategy: telemetry.StrategyPagination, Outcome: telemetry.OutcomeShaped,
			EstimateError: ptr(-0.3), CacheHit: ptr(true),
		},
		{ // chunked oversized attempt (by outcome)
			RequestID: "r3", Endpoint: "/logs", Timestamp: t0.Add(2 * time.Minute), Latency: 5 * time.Millisecond,
			TokensBefore: 20000, TokensAfter: 2000, BytesBefore: 80000, BytesAfter: 8000, ChunkingUsed: true, HardCap: 12000,
			Strategy: telemetry.StrategyChunking, Outcome: telemetry.OutcomeOversize,
		},
		{ // summarized, sampled at exactly the tolerance
			RequestID: "r4", Endpoint: "/logs", Timestamp: t0.Add(3 * time.Minute), Latency: 3 * time.Millisecond, ItemCount: 20,
			TokensBefore: 6000, TokensAfter: 1000, BytesBefore: 24000, BytesAfter: 4000, SummarizationUsed: true,
			Strategy: telemetry.StrategySummary, Outcome: telemetry.OutcomeShaped,
			EstimateError: ptr(0.2),
		},
		{ // fallback byte cut, oversized by the hard cap, cache miss, A/B comparison
			RequestID: "r5", Endpoint: "/logs", Timestamp: t0.Add(4 * time.Minute), Latency: 8 * time.Millisecond,
			TokensBefore: 15000, TokensAfter: 12000, BytesBefore: 60000, BytesAfter: 48000, HardCap: 12000,
			Strategy: telemetry.StrategyCut, Outcome: telemetry.OutcomeFallback, Fallback: "timeout",
			CacheHit: ptr(false), Compare: true,
		},
	}
}

func filled(t *testing.T, opts *telemetry.AggregateOptions) *telemetry.Aggregate {
	t.Helper()
	a := telemetry.NewAggregate(opts)
	for _, r := range fixture() {
		require.NoError(t, a.Record(t.Context(), r))
	}
	return a
}

func TestAggregateQueryMath(t *testing.T) {
	got := filled(t, nil).Query(telemetry.Filter{})

	// Percentages and means of fractions are checked with a tolerance, then
	// copied so that the rest compares exactly.
	assert.InDelta(t, 100*33000.0/52000, got.TokensSavedPercent, 1e-9)
	assert.InDelta(t, 0.2, got.EstimateMeanAbsError, 1e-12)
	want := telemetry.Summary{
		Count: 5, From: t0, To: t0.Add(4 * time.Minute),
		Outcomes:   map[string]int{"passthrough": 1, "shaped": 2, "oversize": 1, "fallback": 1},
		Strategies: map[string]int{"passthrough": 1, "pagination": 1, "chunking": 1, "summary": 1, "cut": 1},
		Paginated:  1, Summarized: 1, Chunked: 1,
		PaginationAdoption: 0.2, SummaryAdoption: 0.2, ChunkingAdoption: 0.2,
		AvgResponseBytes: 15200, AvgResponseTokens: 3800, AvgBytesBefore: 41600, AvgTokensBefore: 10400,
		AvgLatencyMs: 4,
		TokensBefore: 52000, TokensAfter: 19000, TokensSaved: 33000,
		TokensSavedPercent: got.TokensSavedPercent,
		BytesSaved:         132000,
		Oversize:           2, OversizeRate: 0.4,
		Fallbacks: 1, Compared: 1,
		EstimateSamples: 3, EstimateWithinTolerance: 2, EstimateAccuracy: 2.0 / 3,
		EstimateMeanAbsError: got.EstimateMeanAbsError,
		CacheLookups:         3, CacheHits: 1, CacheHitRate: 1.0 / 3,
	}
	assert.Equal(t, want, got)
}

func TestAggregateFilters(t *testing.T) {
	a := filled(t, nil)
	tests := []struct {
		name       string
		filter     telemetry.Filter
		wantCount  int
		wantBefore int64
	}{
		{"no filter selects everything", telemetry.Filter{}, 5, 52000},
		{"an endpoint selects its records", telemetry.Filter{Endpoint: "/orders"}, 2, 11000},
		{"an unknown endpoint selects nothing", telemetry.Filter{Endpoint: "/nope"}, 0, 0},
		{"since is inclusive", telemetry.Filter{Since: t0.Add(3 * time.Minute)}, 2, 21000},
		{"until is exclusive", telemetry.Filter{Until: t0.Add(time.Minute)}, 1, 1000},
		{"a time range selects the records within it", telemetry.Filter{Since: t0.Add(time.Minute), Until: t0.Add(3 * time.Minute)}, 2, 30000},
		{"an outcome selects its records", telemetry.Filter{Outcome: telemetry.OutcomeShaped}, 2, 16000},
		{"all fields combine", telemetry.Filter{Endpoint: "/logs", Outcome: telemetry.OutcomeShaped, Since: t0}, 1, 6000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := a.Query(tt.filter)
			assert.Equal(t, tt.wantCount, got.Count)
			assert.Equal(t, tt.wantBefore, got.TokensBefore)
		})
	}
	t.Run("an empty selection is all zeros and valid JSON", func(t *testing.T) {
		got := a.Query(telemetry.Filter{Endpoint: "/nope"})
		assert.Equal(t, telemetry.Summary{}, got)
		_, err := json.Marshal(got)
		assert.NoError(t, err)
	})
}

func TestAggregateByEndpoint(t *testing.T) {
	a := filled(t, nil)
	assert.Equal(t, []string{"/logs", "/orders"}, a.Endpoints())
	by := a.ByEndpoint(telemetry.Filter{})
	require.Len(t, by, 2)
	orders, logs := by["/orders"], by["/logs"]
	assert.Equal(t, 2, orders.Count)
	assert.Equal(t, 0.5, orders.PaginationAdoption)
	assert.Equal(t, int64(7000), orders.TokensSaved)
	assert.Equal(t, 0.5, orders.CacheHitRate)
	assert.Equal(t, 3, logs.Count)
	assert.Equal(t, 2, logs.Oversize)
	assert.Equal(t, 2.0/3, logs.OversizeRate)
	assert.Equal(t, a.Query(telemetry.Filter{Endpoint: "/logs"}), logs)

	t.Run("the filter applies before grouping", func(t *testing.T) {
		by := a.ByEndpoint(telemetry.Filter{Outcome: telemetry.OutcomePassthrough})
		assert.Equal(t, []string{"/orders"}, keys(by))
	})
}

func keys(m map[string]telemetry.Summary) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestAggregateIsBounded(t *testing.T) {
	t.Run("N+1 records keep the last N, and the totals count all", func(t *testing.T) {
		a := telemetry.NewAggregate(&telemetry.AggregateOptions{Capacity: 3})
		for i := range 4 {
			require.NoError(t, a.Record(t.Context(), telemetry.Record{
				Endpoint: fmt.Sprintf("/e%d", i), Timestamp: t0.Add(time.Duration(i) * time.Second), TokensBefore: 10,
			}))
		}
		assert.Equal(t, 3, a.Len())
		assert.Equal(t, []string{"/e1", "/e2", "/e3"}, a.Endpoints())
		assert.Equal(t, 3, a.Query(telemetry.Filter{}).Count)
		assert.Equal(t, 4, a.Totals().Count)
		assert.Equal(t, int64(40), a.Totals().TokensBefore)
	})
	t.Run("the default capacity is 10,000", func(t *testing.T) {
		a := telemetry.NewAggregate(nil)
		for range telemetry.DefaultCapacity + 1 {
			require.NoError(t, a.Record(t.Context(), telemetry.Record{Timestamp: t0}))
		}
		assert.Equal(t, telemetry.DefaultCapacity, a.Len())
		assert.Equal(t, telemetry.DefaultCapacity+1, a.Totals().Count)
	})
	t.Run("evicted oversized attempts leave the window's rate", func(t *testing.T) {
		a := telemetry.NewAggregate(&telemetry.AggregateOptions{Capacity: 2})
		for _, o := range []telemetry.Outcome{telemetry.OutcomeOversize, telemetry.OutcomeShaped, telemetry.OutcomeShaped} {
			require.NoError(t, a.Record(t.Context(), telemetry.Record{Outcome: o}))
		}
		assert.Equal(t, 0.0, a.Query(telemetry.Filter{}).OversizeRate)
		assert.Equal(t, 1, a.Totals().Oversize)
	})
}

func TestAggregateRejectsInvalidRecords(t *testing.T) {
	a := telemetry.NewAggregate(nil)
	err := a.Record(t.Context(), telemetry.Record{PaginationUsed: true, ChunkingUsed: true})
	assert.ErrorIs(t, err, telemetry.ErrInvalidRecord)
	assert.Equal(t, 0, a.Len())
	assert.Equal(t, 0, a.Totals().Count)
}

func TestAggregateUsesItsClockForRecordsWithoutTimestamp(t *testing.T) {
	a := telemetry.NewAggregate(&telemetry.AggregateOptions{Now: func() time.Time { return t0 }})
	require.NoError(t, a.Record(t.Context(), telemetry.Record{}))
	assert.Equal(t, 1, a.Query(telemetry.Filter{Since: t0, Until: t0.Add(time.Nanosecond)}).Count)
}

func TestAggregateOversizeHook(t *testing.T) {
	type call struct {
		rate   float64
		count  int
		over   int
		length int
	}
	const O, N = true, false

	tests := []struct {
		name  string
		opts  telemetry.AggregateOptions
		seq   []bool // oversized or not, in order
		calls []call
	}{
		{
			name: "the hook fires on each upward crossing, not on every record",
			opts: telemetry.AggregateOptions{OversizeThreshold: 0.5, OversizeMinRecords: 1},
			// rates: 1 (fire), 1, 2/3, 1/2 (re-armed), 3/5 (fire), 1/2, 3/7
			seq:   []bool{O, O, N, N, O, N, N},
			calls: []call{{rate: 1, count: 1, over: 1, length: 1}, {rate: 0.6, count: 5, over: 3, length: 5}},
		},
		{
			name:  "a rate at the threshold does not fire",
			opts:  telemetry.AggregateOptions{OversizeThreshold: 0.5, OversizeMinRecords: 1},
			seq:   []bool{N, O, N, O},
			calls: nil,
		},
		{
			name:  "the rate is not judged before the minimum number of records",
			opts:  telemetry.AggregateOptions{OversizeThreshold: 0.5, OversizeMinRecords: 3},
			seq:   []bool{O, O, O},
			calls: []call{{rate: 1, count: 3, over: 3, length: 3}},
		},
		{
			name: "the rate is over the retained window only",
			opts: telemetry.AggregateOptions{Capacity: 2, OversizeThreshold: 0.5, OversizeMinRecords: 1},
			// windows: [O] fire, [O N] 1/2 re-arm, [N N], [N O] 1/2, [O O] fire
			seq:   []bool{O, N, N, O, O},
			calls: []call{{rate: 1, count: 1, over: 1, length: 1}, {rate: 1, count: 2, over: 2, length: 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []call
			var a *telemetry.Aggregate
			opts := tt.opts
			opts.OnOversizeRate = func(rate float64, window telemetry.Summary) {
				// The hook may call the Aggregate: its lock is released.
				calls = append(calls, call{rate, window.Count, window.Oversize, a.Len()})
			}
			a = telemetry.NewAggregate(&opts)
			for _, over := range tt.seq {
				r := telemetry.Record{Outcome: telemetry.OutcomeShaped}
				if over {
					r.Outcome = telemetry.OutcomeOversize
				}
				require.NoError(t, a.Record(t.Context(), r))
			}
			assert.Equal(t, tt.calls, calls)
		})
	}

	t.Run("the default is 5 percent over at least 100 records", func(t *testing.T) {
		fired := 0
		a := telemetry.NewAggregate(&telemetry.AggregateOptions{OnOversizeRate: func(float64, telemetry.Summary) { fired++ }})
		for range 94 {
			require.NoError(t, a.Record(t.Context(), telemetry.Record{Outcome: telemetry.OutcomeShaped}))
		}
		for range 5 {
			require.NoError(t, a.Record(t.Context(), telemetry.Record{Outcome: telemetry.OutcomeOversize}))
		}
		assert.Equal(t, 0, fired, "99 records are too few to judge")
		require.NoError(t, a.Record(t.Context(), telemetry.Record{Outcome: telemetry.OutcomeShaped}))
		assert.Equal(t, 0, fired, "5 in 100 is at the threshold, not above")
		require.NoError(t, a.Record(t.Context(), telemetry.Record{Outcome: telemetry.OutcomeOversize}))
		assert.Equal(t, 1, fired, "6 in 101 is above 5 percent")
	})
}

func TestAggregateHealth(t *testing.T) {
	now := t0
	clock := func() time.Time { return now }
	a := filled(t, &telemetry.AggregateOptions{Now: clock, OversizeMinRecords: 5})
	now = t0.Add(90 * time.Second)

	h := a.Health()
	assert.Equal(t, telemetry.StatusDegraded, h.Status, "2 of 5 oversized is above 5 percent")
	assert.Equal(t, t0, h.StartedAt)
	assert.Equal(t, now, h.GeneratedAt)
	assert.Equal(t, 90.0, h.UptimeSeconds)
	assert.Equal(t, telemetry.DefaultCapacity, h.Capacity)
	assert.Equal(t, telemetry.DefaultOversizeThreshold, h.OversizeThreshold)
	assert.Equal(t, a.Query(telemetry.Filter{}), h.Window)
	assert.Equal(t, a.Totals(), h.Totals)
	assert.Equal(t, a.ByEndpoint(telemetry.Filter{}), h.Endpoints)

	t.Run("the report is JSON with camelCase names", func(t *testing.T) {
		b, err := json.Marshal(h)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		assert.Equal(t, "degraded", m["status"])
		assert.Equal(t, "2026-01-02T15:01:30Z", m["generatedAt"])
		assert.Equal(t, 90.0, m["uptimeSeconds"])
		window := m["window"].(map[string]any)
		assert.Equal(t, 5.0, window["count"])
		assert.Equal(t, 0.4, window["oversizeRate"])
		assert.Equal(t, 0.2, window["paginationAdoption"])
		endpoints := m["endpoints"].(map[string]any)
		assert.Equal(t, 2.0, endpoints["/orders"].(map[string]any)["count"])
	})
	t.Run("an aggregate with too few records is ok", func(t *testing.T) {
		h := filled(t, &telemetry.AggregateOptions{Now: clock}).Health()
		assert.Equal(t, telemetry.StatusOK, h.Status)
		b, err := json.Marshal(telemetry.NewAggregate(&telemetry.AggregateOptions{Now: clock}).Health())
		require.NoError(t, err)
		assert.Contains(t, string(b), `"endpoints":{}`)
	})
}

func TestAggregateIsSafeForConcurrentUse(t *testing.T) {
	a := telemetry.NewAggregate(&telemetry.AggregateOptions{Capacity: 500, OversizeMinRecords: 1,
		OnOversizeRate: func(float64, telemetry.Summary) {}})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				r := fixture()[i%5]
				r.Endpoint = fmt.Sprintf("/e%d", g)
				assert.NoError(t, a.Record(t.Context(), r))
			}
		})
		wg.Go(func() {
			for range 50 {
				a.Query(telemetry.Filter{Endpoint: "/e1"})
				a.Health()
				a.Endpoints()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 500, a.Len())
	assert.Equal(t, 8000, a.Totals().Count)
	assert.Equal(t, int64(8000/5*52000), a.Totals().TokensBefore)
}
