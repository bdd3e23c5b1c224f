package telemetry

import (
	"context"
	"log/slog"

	"github.com/ctxfit/ctxfit/internal/redact"
)

// MessageGateway is the message of the [SlogSink]'s lines for gateway
// records.
const MessageGateway = "ctxfit: gateway"

// RecordGateway logs r as one line with [MessageGateway]: at WARN for an
// API call that got no answer or a 5xx one, at INFO otherwise. The line has
// these attributes, in this order, snake_case as for responses, each only
// when set: event, tool, method, status, duration_ms (milliseconds, with a
// fractional part), parameter, strategy, reduction_percent (100 ×
// Reduction), tools. The line's time is r.Time (now, when that is zero).
func (s *SlogSink) RecordGateway(ctx context.Context, r GatewayRecord) error {
	level := slog.LevelInfo
	if r.Event == GatewayAPICall && (r.Status == 0 || r.Status >= 500) {
		level = slog.LevelWarn
	}
	h, rec, ok := s.line(ctx, r.Time, level, MessageGateway)
	if !ok {
		return nil
	}
	str := func(key, v string) {
		if v != "" {
			rec.AddAttrs(slog.String(key, redact.Bound(v, maxAttr)))
		}
	}
	str("event", string(r.Event))
	str("tool", r.Tool)
	str("method", r.Method)
	if r.Status != 0 {
		rec.AddAttrs(slog.Int("status", r.Status))
	}
	if r.Duration != 0 {
		rec.AddAttrs(slog.Float64("duration_ms", durationMs(r.Duration)))
	}
	str("parameter", r.Parameter)
	str("strategy", r.Strategy)
	if r.Event == GatewayShaped {
		rec.AddAttrs(slog.Float64("reduction_percent", 100*r.Reduction))
	}
	if r.Tools != 0 {
		rec.AddAttrs(slog.Int("tools", r.Tools))
	}
	return h.Handle(ctx, rec)
}
