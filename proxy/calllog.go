package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

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
		slog.String("tool", pd.tool),
		slog.Float64("duration_ms", float64(p.o.Now().Sub(pd.start).Microseconds())/1000),
		slog.String("status", status),
		slog.Int("tokens_before", before),
		slog.Int("tokens_after", after),
	}
	if pd.clientID.IsValid() {
		attrs = append(attrs, slog.String("request_id", fmt.Sprint(pd.clientID.Raw())))
	}
	if reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	if s.subject != "" {
		attrs = append(attrs, slog.String("session", s.subject))
	}
	if strategy, ok := r.Meta[mcpcore.MetaStrategy].(string); ok {
		attrs = append(attrs, slog.String("strategy", strategy))
	}
	if p.o.LogArguments {
		var params struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(pd.params, &params)
		attrs = append(attrs, slog.String("arguments", string(redact(params.Arguments, p.o.Redact))))
	}
	if err != nil {
		attrs = append(attrs, slog.String("err", err.Error()))
	}
	p.logger.LogAttrs(context.Background(), slog.LevelInfo, "tool call", attrs...)
}

// redact returns args with the values of the members named in names (at
// any depth, case-insensitively) replaced by "[redacted]".
func redact(args json.RawMessage, names []string) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return json.RawMessage(`"[not JSON]"`)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if containsFold(names, k) {
					v[k] = "[redacted]"
					continue
				}
				v[k] = walk(x)
			}
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		}
		return v
	}
	return marshalUnescaped(walk(v))
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
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
