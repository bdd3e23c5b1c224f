package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/redact"
)

// maxEcho bounds what the proxy repeats of a client's or an upstream's
// input in a log record or an error: a longer value is cut, with a note
// of its length.
const maxEcho = 256

// logCall writes the one record of a tool call: reason is the fault when
// the proxy knows it ("" to read it from res and err).
func (p *Proxy) logCall(s *session, pd *pending, reason string, res json.RawMessage, err error) {
	var r struct {
		IsError bool           `json:"isError"`
		Meta    map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(res, &r)
	if reason == "" {
		switch {
		case err != nil:
			reason = StatusError
		case r.IsError:
			reason = StatusToolError
		}
	}
	status := StatusSuccess
	switch reason {
	case "", StatusToolError:
	case StatusTimeout:
		status = StatusTimeout
	default:
		status = StatusFailure
	}
	before, after := p.tokens(res, r.Meta)
	attrs := []slog.Attr{
		slog.String("tool", redact.Bound(pd.tool, maxEcho)),
		slog.Float64("duration_ms", float64(p.o.Now().Sub(pd.start).Microseconds())/1000),
		slog.String("status", status),
		slog.Int("tokens_before", before),
		slog.Int("tokens_after", after),
	}
	if pd.clientID.IsValid() {
		attrs = append(attrs, slog.String("request_id", redact.Bound(fmt.Sprint(pd.clientID.Raw()), maxEcho)))
	}
	if reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	if s.subject != "" {
		attrs = append(attrs, slog.String("session", s.subject))
	}
	strategy, _ := r.Meta[mcpcore.MetaStrategy].(string)
	if strategy != "" {
		attrs = append(attrs, slog.String("strategy", strategy))
	}
	shown := status
	if reason != "" {
		shown = reason
	}
	p.showCall(s, pd, shown, strategy, before, after, res)
	if p.o.LogArguments {
		var params struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(pd.params, &params)
		attrs = append(attrs, slog.String("arguments", string(redact.JSON(params.Arguments, maxEcho, p.o.Redact...))))
	}
	if err != nil {
		attrs = append(attrs, slog.String("err", redact.Bound(redact.String(err.Error(), p.o.Redact...), maxEcho)))
	}
	p.logger.LogAttrs(context.Background(), slog.LevelInfo, "tool call", attrs...)
}

// tokens returns the token counts of a result before and after shaping:
// from ctxfit's _meta when it was shaped, else its body counted exactly.
func (p *Proxy) tokens(res json.RawMessage, meta map[string]any) (before, after int) {
	a, okA := meta[mcpcore.MetaTokens].(float64)
	b, okB := meta[mcpcore.MetaOriginalTokens].(float64)
	if okA && okB {
		return int(b), int(a)
	}
	if len(res) == 0 {
		return 0, 0
	}
	body, _, err := mcpcore.BlockBody(res, 0)
	if err != nil {
		return 0, 0
	}
	c := p.counter()
	if c == nil {
		return 0, 0
	}
	n := c.Count(string(body))
	return n, n
}

// maxLogged bounds one string of a proxy log record.
const maxLogged = 4 << 10

// redactHandler is the handler of the proxy's logs: every string and error
// it is given has the secrets inside it (a URL's password or api_key, a
// connection string's password, a bearer token: upstream URLs and errors
// carry them) redacted and is cut to maxLogged bytes.
type redactHandler struct {
	slog.Handler
	extra []string
}

func (h redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, redact.Bound(r.Message, maxLogged), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = h.attr(a)
	}
	return redactHandler{Handler: h.Handler.WithAttrs(out), extra: h.extra}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{Handler: h.Handler.WithGroup(name), extra: h.extra}
}

func (h redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redact.Bound(redact.String(v.String(), h.extra...), maxLogged))
	case slog.KindGroup:
		group := v.Group()
		out := make([]any, len(group))
		for i, g := range group {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok && err != nil {
			return slog.String(a.Key, redact.Bound(redact.String(err.Error(), h.extra...), maxLogged))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
