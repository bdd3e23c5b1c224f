package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/ctxfit/ctxfit/telemetry"
)

// A fixed clock keeps the examples' output stable.
var exampleNow = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

func ExampleNewSlogSink() {
	// Drop the time so that the output is stable.
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	sink := telemetry.NewSlogSink(logger)
	ctx := context.Background()

	_ = sink.Record(ctx, telemetry.Record{
		RequestID: "req-1", Endpoint: "GET /orders", ItemCount: 50, Latency: 2 * time.Millisecond,
		PaginationUsed: true, TokensBefore: 9000, TokensAfter: 3000, BytesBefore: 36000, BytesAfter: 12000,
		ReductionPercent: telemetry.ReductionPercent(9000, 3000),
		Strategy:         telemetry.StrategyPagination, Outcome: telemetry.OutcomeShaped,
	})
	// An oversized attempt is a warning.
	_ = sink.Record(ctx, telemetry.Record{
		RequestID: "req-2", Endpoint: "GET /logs", Latency: 5 * time.Millisecond, ChunkingUsed: true,
		TokensBefore: 40000, TokensAfter: 2000, BytesBefore: 160000, BytesAfter: 8000, ReductionPercent: 95,
		HardCap: 12000, Strategy: telemetry.StrategyChunking, Outcome: telemetry.OutcomeOversize,
	})
	// Output:
	// {"level":"INFO","msg":"ctxfit: response","request_id":"req-1","endpoint":"GET /orders","strategy":"pagination","outcome":"shaped","tokens_before":9000,"tokens_after":3000,"bytes_before":36000,"bytes_after":12000,"reduction_percent":66.66666666666667,"item_count":50,"duration_ms":2}
	// {"level":"WARN","msg":"ctxfit: oversized response","request_id":"req-2","endpoint":"GET /logs","strategy":"chunking","outcome":"oversize","tokens_before":40000,"tokens_after":2000,"bytes_before":160000,"bytes_after":8000,"reduction_percent":95,"duration_ms":5,"hard_cap":12000}
}

func ExampleNewAggregate() {
	agg := telemetry.NewAggregate(&telemetry.AggregateOptions{
		OversizeThreshold:  0.2,
		OversizeMinRecords: 3,
		OnOversizeRate: func(rate float64, window telemetry.Summary) {
			fmt.Printf("alert: %.0f%% of %d responses were oversized\n", 100*rate, window.Count)
		},
	})
	ctx := context.Background()
	for _, r := range []telemetry.Record{
		{Endpoint: "/orders", TokensBefore: 800, TokensAfter: 800, Strategy: "passthrough", Outcome: "passthrough"},
		{Endpoint: "/orders", TokensBefore: 9000, TokensAfter: 3000, PaginationUsed: true, Strategy: "pagination", Outcome: "shaped"},
		{Endpoint: "/logs", TokensBefore: 30000, TokensAfter: 2000, ChunkingUsed: true, HardCap: 12000, Strategy: "chunking", Outcome: "oversize"},
		{Endpoint: "/logs", TokensBefore: 1200, TokensAfter: 1200, Strategy: "passthrough", Outcome: "passthrough"},
	} {
		_ = agg.Record(ctx, r)
	}

	s := agg.Query(telemetry.Filter{})
	fmt.Printf("responses: %d, paginated: %.0f%%, chunked: %.0f%%\n", s.Count, 100*s.PaginationAdoption, 100*s.ChunkingAdoption)
	fmt.Printf("tokens: %d before, %d after, %d saved (%.1f%%)\n", s.TokensBefore, s.TokensAfter, s.TokensSaved, s.TokensSavedPercent)
	fmt.Printf("average tokens sent: %.0f, oversize rate: %.2f\n", s.AvgResponseTokens, s.OversizeRate)
	for _, ep := range agg.Endpoints() {
		fmt.Printf("%s: %d responses\n", ep, agg.Query(telemetry.Filter{Endpoint: ep}).Count)
	}
	// Output:
	// alert: 33% of 3 responses were oversized
	// responses: 4, paginated: 25%, chunked: 25%
	// tokens: 41000 before, 7000 after, 34000 saved (82.9%)
	// average tokens sent: 1750, oversize rate: 0.25
	// /logs: 2 responses
	// /orders: 2 responses
}

func ExampleAggregate_Health() {
	agg := telemetry.NewAggregate(&telemetry.AggregateOptions{
		Now: func() time.Time { return exampleNow },
	})
	_ = agg.Record(context.Background(), telemetry.Record{
		Endpoint: "/orders", Timestamp: exampleNow, TokensBefore: 9000, TokensAfter: 3000,
		PaginationUsed: true, Strategy: "pagination", Outcome: "shaped",
	})
	h := agg.Health()
	b, _ := json.Marshal(struct {
		Status string  `json:"status"`
		Uptime float64 `json:"uptimeSeconds"`
		Count  int     `json:"count"`
		Saved  int64   `json:"tokensSaved"`
	}{h.Status, h.UptimeSeconds, h.Window.Count, h.Window.TokensSaved})
	fmt.Println(string(b))
	// Output:
	// {"status":"ok","uptimeSeconds":0,"count":1,"tokensSaved":6000}
}

func ExampleMulti() {
	agg := telemetry.NewAggregate(nil)
	broken := telemetry.SinkFunc(func(context.Context, telemetry.Record) error {
		return fmt.Errorf("exporter down")
	})
	sink := telemetry.Multi(broken, agg)

	err := sink.Record(context.Background(), telemetry.Record{Endpoint: "/orders"})
	fmt.Println("error:", err)
	fmt.Println("aggregated:", agg.Len())
	// Output:
	// error: exporter down
	// aggregated: 1
}

func ExampleNewAsync() {
	agg := telemetry.NewAggregate(nil)
	async := telemetry.NewAsync(agg, &telemetry.AsyncOptions{Buffer: 256})

	// On the request path: returns at once, whatever the sink does.
	for range 3 {
		_ = async.Record(context.Background(), telemetry.Record{Endpoint: "/orders"})
	}

	// At shutdown: deliver what is buffered and stop the goroutine.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := async.Close(ctx); err != nil {
		fmt.Println("close:", err)
	}
	fmt.Println("recorded:", agg.Len(), "dropped:", async.Dropped())
	// Output:
	// recorded: 3 dropped: 0
}

func ExampleRelativeError() {
	// For a response counted exactly as well as estimated, record the
	// estimator's error.
	estimate, exact := 1150, 1000
	e := telemetry.RelativeError(estimate, exact)
	r := telemetry.Record{EstimateError: &e}
	fmt.Printf("error: %+.0f%%, within tolerance: %v\n", 100**r.EstimateError, telemetry.WithinTolerance(e))
	// Output:
	// error: +15%, within tolerance: true
}
