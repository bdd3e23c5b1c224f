package telemetry

import (
	"context"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ctxfit/ctxfit/internal/redact"
)

// Log messages of the [SlogSink].
const (
	// MessageResponse is logged at INFO for every response, except those
	// that passed through unchanged ([OutcomePassthrough]), which are logged
	// at DEBUG: a handler that takes DEBUG gets a line per response.
	MessageResponse = "ctxfit: response"
	// MessageOversize is logged at WARN for an oversized attempt
	// ([Record.Oversize]) instead of MessageResponse.
	MessageOversize = "ctxfit: oversized response"
)

// maxAttr bounds a string attribute of the [SlogSink]'s lines: a longer
// one (a request ID or a path a client chose) is cut to 256 bytes and
// followed by a note of its length.
const maxAttr = 256

// SlogSink writes one log line per response to a *slog.Logger.
//
// Ordinary responses are logged at INFO with [MessageResponse]; those that
// passed through unchanged ([OutcomePassthrough]) at DEBUG, so that a server
// at the usual INFO level writes a line per shaped response, not one per
// request (a DEBUG handler is how to ask for every one). Oversized
// attempts ([Record.Oversize]: outcome oversize, or more tokens than the hard
// cap before shaping) are logged at WARN with [MessageOversize], so that they
// stand out and can be alerted on; their lines carry the original and final
// sizes like every other line, plus the hard cap when it is known.
//
// Each line has these attributes, in this order, with snake_case keys as
// the proxy's call log has them and units in the keys: request_id,
// endpoint, strategy, outcome (each only when not empty), tokens_before,
// tokens_after, bytes_before, bytes_after, reduction_percent, item_count
// (only when not zero), duration_ms (milliseconds, with a fractional part);
// then, only when set, hard_cap, fallback, error_type, compare,
// estimate_error, cache_hit and the group meta holding OptimizationMetadata
// (its keys in snake_case too). No attribute is written empty, and no
// string attribute longer than 256 bytes (cut, with a note of its length). The line's
// time is the record's Timestamp (now, when that is zero).
//
// A SlogSink is a [GatewaySink] too: [SlogSink.RecordGateway] logs one line
// per gateway record.
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
	level, msg := slog.LevelInfo, MessageResponse
	if r.Outcome == OutcomePassthrough {
		level = slog.LevelDebug
	}
	if r.Oversize() {
		level, msg = slog.LevelWarn, MessageOversize
	}
	h, rec, ok := s.line(ctx, r.Timestamp, level, msg)
	if !ok {
		return nil
	}
	str := func(key, v string) {
		if v != "" {
			rec.AddAttrs(slog.String(key, redact.Bound(v, maxAttr)))
		}
	}
	str("request_id", r.RequestID)
	str("endpoint", r.Endpoint)
	str("strategy", string(r.Strategy))
	str("outcome", string(r.Outcome))
	rec.AddAttrs(
		slog.Int("tokens_before", r.TokensBefore),
		slog.Int("tokens_after", r.TokensAfter),
		slog.Int("bytes_before", r.BytesBefore),
		slog.Int("bytes_after", r.BytesAfter),
		slog.Float64("reduction_percent", r.ReductionPercent),
	)
	if r.TokensBeforeEstimated {
		rec.AddAttrs(slog.Bool("tokens_before_estimated", true))
	}
	if r.ItemCount != 0 {
		rec.AddAttrs(slog.Int("item_count", r.ItemCount))
	}
	rec.AddAttrs(slog.Float64("duration_ms", float64(r.Latency)/float64(time.Millisecond)))
	if r.HardCap > 0 {
		rec.AddAttrs(slog.Int("hard_cap", r.HardCap))
	}
	str("fallback", r.Fallback)
	str("error_type", r.ErrorType)
	if r.Compare {
		rec.AddAttrs(slog.Bool("compare", true))
	}
	if r.EstimateError != nil {
		rec.AddAttrs(slog.Float64("estimate_error", *r.EstimateError))
	}
	if r.CacheHit != nil {
		rec.AddAttrs(slog.Bool("cache_hit", *r.CacheHit))
	}
	if len(r.OptimizationMetadata) > 0 {
		attrs := make([]any, 0, len(r.OptimizationMetadata))
		for _, k := range slices.Sorted(maps.Keys(r.OptimizationMetadata)) {
			attrs = append(attrs, slog.Any(snakeCase(k), r.OptimizationMetadata[k]))
		}
		rec.AddAttrs(slog.Group("meta", attrs...))
	}
	return h.Handle(ctx, rec)
}

// line starts the log line of one record at t (now when zero), with the
// caller of the sink's method as its source, and returns the handler to
// write it to; ok is false when the handler does not take level.
func (s *SlogSink) line(ctx context.Context, t time.Time, level slog.Level, msg string) (h slog.Handler, rec slog.Record, ok bool) {
	logger := s.logger
	if logger == nil {
		logger = slog.Default()
	}
	h = logger.Handler()
	if !h.Enabled(ctx, level) {
		return nil, rec, false
	}
	if t.IsZero() {
		t = time.Now()
	}
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:]) // the caller of Record or RecordGateway
	return h, slog.NewRecord(t, level, msg, pcs[0]), true
}

// snakeCase writes a camelCase key in snake_case: "tokensEstimated" →
// "tokens_estimated", "pageSize" → "page_size"; snake_case keys stay.
func snakeCase(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 && k[i-1] != '_' && !(k[i-1] >= 'A' && k[i-1] <= 'Z') {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
