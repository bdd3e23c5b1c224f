package telemetry_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/telemetry"
)

func ptr[T any](v T) *T { return &v }

func TestRecordValidate(t *testing.T) {
	tests := []struct {
		name    string
		record  telemetry.Record
		wantErr []string // substrings of the error; nil means valid
	}{
		{name: "the zero record is valid", record: telemetry.Record{}},
		{
			name: "a full shaped record is valid",
			record: telemetry.Record{
				RequestID: "r1", Endpoint: "/orders", Latency: time.Millisecond,
				ResponseBytes: 10, ItemCount: 3, PaginationUsed: true, SummarizationUsed: true,
				TokensBefore: 100, TokensAfter: 10, BytesBefore: 400, BytesAfter: 40,
			},
		},
		{
			name:    "a negative latency is rejected",
			record:  telemetry.Record{Latency: -time.Millisecond},
			wantErr: []string{"latency -1ms is negative"},
		},
		{
			name:    "negative byte sizes are rejected",
			record:  telemetry.Record{ResponseBytes: -1, BytesBefore: -2, BytesAfter: -3},
			wantErr: []string{"responseBytes -1", "bytesBefore -2", "bytesAfter -3"},
		},
		{
			name:    "a negative item count is rejected",
			record:  telemetry.Record{ItemCount: -1},
			wantErr: []string{"itemCount -1 is negative"},
		},
		{
			name:    "negative token counts are rejected",
			record:  telemetry.Record{EstimatedTokens: -1, TokensBefore: -1, TokensAfter: -1},
			wantErr: []string{"estimatedTokens", "tokensBefore", "tokensAfter"},
		},
		{
			name:    "pagination and chunking together are rejected",
			record:  telemetry.Record{PaginationUsed: true, ChunkingUsed: true},
			wantErr: []string{"pagination and chunking both used"},
		},
		{
			name:   "chunking with summarization is allowed",
			record: telemetry.Record{ChunkingUsed: true, SummarizationUsed: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.record.Validate()
			if tt.wantErr == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, telemetry.ErrInvalidRecord))
			for _, s := range tt.wantErr {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestRecordOversize(t *testing.T) {
	tests := []struct {
		name   string
		record telemetry.Record
		want   bool
	}{
		{"an oversize outcome is an oversized attempt", telemetry.Record{Outcome: telemetry.OutcomeOversize}, true},
		{"more tokens than the hard cap before shaping is an oversized attempt", telemetry.Record{Outcome: telemetry.OutcomeShaped, HardCap: 100, TokensBefore: 101}, true},
		{"exactly the hard cap is not", telemetry.Record{Outcome: telemetry.OutcomeShaped, HardCap: 100, TokensBefore: 100}, false},
		{"an unknown hard cap says nothing", telemetry.Record{Outcome: telemetry.OutcomeShaped, TokensBefore: 1 << 30}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.record.Oversize())
		})
	}
}

func TestReductionPercent(t *testing.T) {
	tests := []struct {
		name          string
		before, after int
		want          float64
	}{
		{"a halving is 50 percent", 1000, 500, 50},
		{"nothing removed is 0", 1000, 1000, 0},
		{"growth is 0, not negative", 100, 120, 0},
		{"an empty response is 0", 0, 0, 0},
		{"everything removed is 100", 10, 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, telemetry.ReductionPercent(tt.before, tt.after))
		})
	}
	t.Run("tokens saved is the signed difference", func(t *testing.T) {
		assert.Equal(t, -20, telemetry.Record{TokensBefore: 100, TokensAfter: 120}.TokensSaved())
	})
}

func TestRecordJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	t.Run("latency is written in milliseconds and unset options are omitted", func(t *testing.T) {
		b, err := json.Marshal(telemetry.Record{RequestID: "r1", Endpoint: "/orders", Timestamp: at, Latency: 1500 * time.Microsecond})
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		assert.Equal(t, 1.5, m["latencyMs"])
		assert.Equal(t, "r1", m["requestId"])
		assert.Equal(t, "2026-01-02T15:04:05Z", m["timestamp"])
		for _, k := range []string{"estimateError", "cacheHit", "fallback", "compare", "hardCap", "optimizationMetadata", "Latency"} {
			assert.NotContains(t, m, k)
		}
		for _, k := range []string{"estimatedTokens", "responseBytes", "itemCount", "paginationUsed", "summarizationUsed", "chunkingUsed", "tokensBefore", "tokensAfter", "bytesBefore", "bytesAfter", "reductionPercent", "strategy", "outcome"} {
			assert.Contains(t, m, k)
		}
	})
	t.Run("a record survives a round trip", func(t *testing.T) {
		in := telemetry.Record{
			RequestID: "r1", Endpoint: "/orders", Timestamp: at, EstimatedTokens: 10, ResponseBytes: 40,
			ItemCount: 2, Latency: 2500 * time.Microsecond, PaginationUsed: true,
			OptimizationMetadata: map[string]any{"pageSize": 2.0},
			TokensBefore:         100, TokensAfter: 10, BytesBefore: 400, BytesAfter: 40, ReductionPercent: 90,
			HardCap: 50, Strategy: telemetry.StrategyPagination, Outcome: telemetry.OutcomeOversize,
			Fallback: "timeout", Compare: true, EstimateError: ptr(0.125), CacheHit: ptr(false),
		}
		b, err := json.Marshal(in)
		require.NoError(t, err)
		var out telemetry.Record
		require.NoError(t, json.Unmarshal(b, &out))
		assert.Equal(t, in, out)
	})
	t.Run("bad JSON is an error that names the package", func(t *testing.T) {
		var r telemetry.Record
		err := json.Unmarshal([]byte(`{"latencyMs":"x"}`), &r)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "telemetry: record")
	})
}
