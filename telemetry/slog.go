package telemetry

import (
	"context"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"time"
)

// Log messages of the [SlogSink].
const (
	// MessageResponse is logged at INFO for every response.
	MessageResponse = "ctxfit: response"
	// MessageOversize is logged at WARN for an oversized attempt
	// ([Record.Oversize]) instead of MessageResponse.
	MessageOversize = "ctxfit: oversized response"
)

// SlogSink writes one log line per response to a *slog.Logger.
//
// Ordinary responses are logged at INFO with [MessageResponse]. Oversized
// attempts ([Record.Oversize]: outcome oversize, or more tokens than the hard
// cap before shaping) are logged at WARN with [MessageOversize], so that they
// stand out and can be alerted on; their lines carry the original and final
// sizes like every other line, plus the hard cap when it is known.
//
// Each line has these attributes, in this order: requestId, endpoint,
// strategy, outcome, tokensBefore, tokensAfter, bytesBefore, bytesAfter,
// reductionPercent, itemCount, latency; then, only when set, hardCap,
// fallback, compare, estimateError, cacheHit and the group meta holding
// OptimizationMetadata. The line's time is the record's Timestamp (now, when
// that is zero).
//
// A SlogSink is safe for concurrent use when its handler is, as slog's
// handlers are. Its zero value is not usable; call [NewSlogSink].
type SlogSink struct {
	logger *slog.Logger
}

// NewSlogSink returns a sink that logs to logger; nil means slog.Default()
// at the time of each call.
func NewSlogSink(logger *slog.Logger) *SlogSink {
	return &SlogSink{logger: logger}
}

// Record logs r and returns the handler's error.
func (s *SlogSink) Record(ctx context.Context, r Record) error {
	logger := s.logger
	if logger == nil {
		logger = slog.Default()
	}
	level, msg := slog.LevelInfo, MessageResponse
	if r.Oversize() {
		level, msg = slog.LevelWarn, MessageOversize
	}
	h := logger.Handler()
	if !h.Enabled(ctx, level) {
		return nil
	}
	t := r.Timestamp
	if t.IsZero() {
		t = time.Now()
	}
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:]) // the caller of Record
	rec := slog.NewRecord(t, level, msg, pcs[0])
	rec.AddAttrs(
		slog.String("requestId", r.RequestID),
		slog.String("endpoint", r.Endpoint),
		slog.String("strategy", r.Strategy),
		slog.String("outcome", r.Outcome),
		slog.Int("tokensBefore", r.TokensBefore),
		slog.Int("tokensAfter", r.TokensAfter),
		slog.Int("bytesBefore", r.BytesBefore),
		slog.Int("bytesAfter", r.BytesAfter),
		slog.Float64("reductionPercent", r.ReductionPercent),
		slog.Int("itemCount", r.ItemCount),
		slog.Duration("latency", r.Latency),
	)
	if r.HardCap > 0 {
		rec.AddAttrs(slog.Int("hardCap", r.HardCap))
	}
	if r.Fallback != "" {
		rec.AddAttrs(slog.String("fallback", r.Fallback))
	}
	if r.Compare {
		rec.AddAttrs(slog.Bool("compare", true))
	}
	if r.EstimateError != nil {
		rec.AddAttrs(slog.Float64("estimateError", *r.EstimateError))
	}
	if r.CacheHit != nil {
		rec.AddAttrs(slog.Bool("cacheHit", *r.CacheHit))
	}
	if len(r.OptimizationMetadata) > 0 {
		attrs := make([]any, 0, len(r.OptimizationMetadata))
		for _, k := range slices.Sorted(maps.Keys(r.OptimizationMetadata)) {
			attrs = append(attrs, slog.Any(k, r.OptimizationMetadata[k]))
		}
		rec.AddAttrs(slog.Group("meta", attrs...))
	}
	return h.Handle(ctx, rec)
}
