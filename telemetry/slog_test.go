package telemetry_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/telemetry"
)

func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(buf.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

func TestSlogSink(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	shaped := telemetry.Record{
		RequestID: "r1", Endpoint: "GET /orders", Timestamp: at, ItemCount: 50,
		Latency: 1500 * time.Microsecond, PaginationUsed: true,
		TokensBefore: 9000, TokensAfter: 3000, BytesBefore: 36000, BytesAfter: 12000, ReductionPercent: 66.5,
		Strategy: telemetry.StrategyPagination, Outcome: telemetry.OutcomeShaped,
	}

	t.Run("a shaped response is one INFO line with the main fields", func(t *testing.T) {
		var buf bytes.Buffer
		sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, nil)))
		require.NoError(t, sink.Record(t.Context(), shaped))
		lines := logLines(t, &buf)
		require.Len(t, lines, 1)
		got := lines[0]
		assert.Equal(t, "INFO", got["level"])
		assert.Equal(t, telemetry.MessageResponse, got["msg"])
		assert.Equal(t, "2026-01-02T15:04:05Z", got["time"])
		assert.Equal(t, "r1", got["request_id"])
		assert.Equal(t, "GET /orders", got["endpoint"])
		assert.Equal(t, "pagination", got["strategy"])
		assert.Equal(t, "shaped", got["outcome"])
		assert.Equal(t, 9000.0, got["tokens_before"])
		assert.Equal(t, 3000.0, got["tokens_after"])
		assert.Equal(t, 36000.0, got["bytes_before"])
		assert.Equal(t, 12000.0, got["bytes_after"])
		assert.Equal(t, 66.5, got["reduction_percent"])
		assert.Equal(t, 50.0, got["item_count"])
		assert.Equal(t, 1.5, got["duration_ms"])
		for _, k := range []string{"hard_cap", "fallback", "error_type", "compare", "estimate_error", "cache_hit", "meta"} {
			assert.NotContains(t, got, k)
		}
	})

	t.Run("an oversized attempt is a WARN line with its original and final sizes", func(t *testing.T) {
		tests := []struct {
			name string
			r    telemetry.Record
		}{
			{"by outcome", telemetry.Record{Outcome: telemetry.OutcomeOversize, Strategy: telemetry.StrategyChunking, TokensBefore: 50000, TokensAfter: 2000, BytesBefore: 200000, BytesAfter: 8000}},
			{"by the hard cap", telemetry.Record{Outcome: telemetry.OutcomeShaped, Strategy: telemetry.StrategyChunking, HardCap: 12000, TokensBefore: 50000, TokensAfter: 2000, BytesBefore: 200000, BytesAfter: 8000}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var buf bytes.Buffer
				sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, nil)))
				require.NoError(t, sink.Record(t.Context(), tt.r))
				lines := logLines(t, &buf)
				require.Len(t, lines, 1)
				assert.Equal(t, "WARN", lines[0]["level"])
				assert.Equal(t, telemetry.MessageOversize, lines[0]["msg"])
				assert.Equal(t, 50000.0, lines[0]["tokens_before"])
				assert.Equal(t, 2000.0, lines[0]["tokens_after"])
				assert.Equal(t, 200000.0, lines[0]["bytes_before"])
				assert.Equal(t, 8000.0, lines[0]["bytes_after"])
			})
		}
	})

	t.Run("optional fields and metadata appear when set", func(t *testing.T) {
		var buf bytes.Buffer
		sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, nil)))
		r := shaped
		r.HardCap = 12000
		r.Fallback = "timeout"
		r.ErrorType = "store_unavailable"
		r.Compare = true
		r.EstimateError = ptr(-0.125)
		r.CacheHit = ptr(true)
		r.OptimizationMetadata = map[string]any{"pageSize": 50, "arrayPath": "data.items"}
		require.NoError(t, sink.Record(t.Context(), r))
		got := logLines(t, &buf)[0]
		assert.Equal(t, 12000.0, got["hard_cap"])
		assert.Equal(t, "timeout", got["fallback"])
		assert.Equal(t, "store_unavailable", got["error_type"])
		assert.Equal(t, true, got["compare"])
		assert.Equal(t, -0.125, got["estimate_error"])
		assert.Equal(t, true, got["cache_hit"])
		assert.Equal(t, map[string]any{"page_size": 50.0, "array_path": "data.items"}, got["meta"])
	})

	t.Run("keys are snake_case and no attribute is empty", func(t *testing.T) {
		var buf bytes.Buffer
		sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, nil)))
		require.NoError(t, sink.Record(t.Context(), telemetry.Record{Endpoint: "list_bookings", TokensBefore: 10, TokensAfter: 10}))
		got := logLines(t, &buf)[0]
		for _, k := range []string{"request_id", "strategy", "outcome", "item_count"} {
			assert.NotContains(t, got, k, "an empty %s is left out", k)
		}
		for k, v := range got {
			assert.Regexp(t, `^[a-z]+(_[a-z]+)*$`, k)
			assert.NotEqual(t, "", v, k)
		}
	})

	t.Run("nothing is logged below the handler's level", func(t *testing.T) {
		var buf bytes.Buffer
		sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
		require.NoError(t, sink.Record(t.Context(), shaped))
		assert.Empty(t, buf.String())
		require.NoError(t, sink.Record(t.Context(), telemetry.Record{Outcome: telemetry.OutcomeOversize}))
		assert.Len(t, logLines(t, &buf), 1)
	})

	t.Run("a record without a timestamp is logged at the current time", func(t *testing.T) {
		var buf bytes.Buffer
		sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, nil)))
		before := time.Now()
		require.NoError(t, sink.Record(t.Context(), telemetry.Record{}))
		ts, err := time.Parse(time.RFC3339Nano, logLines(t, &buf)[0]["time"].(string))
		require.NoError(t, err)
		assert.False(t, ts.Before(before.Truncate(time.Millisecond)))
	})

	t.Run("the logger's own attributes are kept", func(t *testing.T) {
		var buf bytes.Buffer
		sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, nil)).With("service", "orders"))
		require.NoError(t, sink.Record(t.Context(), shaped))
		assert.Equal(t, "orders", logLines(t, &buf)[0]["service"])
	})
}

func TestSlogSinkLinesNameTheirCallerAsSource(t *testing.T) {
	var buf bytes.Buffer
	sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{AddSource: true})))
	require.NoError(t, sink.Record(t.Context(), telemetry.Record{Endpoint: "list"}))
	require.NoError(t, sink.RecordGateway(t.Context(), telemetry.GatewayRecord{Event: telemetry.GatewayStartup}))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	for _, line := range lines {
		var rec struct {
			Source struct {
				File string `json:"file"`
			} `json:"source"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		assert.True(t, strings.HasSuffix(rec.Source.File, "slog_test.go"), "source %q", rec.Source.File)
	}
}

func TestSlogSinkLogsAPassThroughOnlyWhenDebugIsAsked(t *testing.T) {
	pass := telemetry.Record{Endpoint: "GET /orders", TokensBefore: 10, TokensAfter: 10,
		Outcome: telemetry.OutcomePassthrough}
	for _, c := range []struct {
		name  string
		level slog.Level
		lines int
	}{
		{"a handler at INFO writes no line for a pass-through", slog.LevelInfo, 0},
		{"a handler at DEBUG writes one DEBUG line for it", slog.LevelDebug, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			sink := telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: c.level})))
			require.NoError(t, sink.Record(t.Context(), pass))
			lines := logLines(t, &buf)
			require.Len(t, lines, c.lines)
			if c.lines > 0 {
				assert.Equal(t, "DEBUG", lines[0]["level"])
				assert.Equal(t, "passthrough", lines[0]["outcome"])
			}
		})
	}
}
