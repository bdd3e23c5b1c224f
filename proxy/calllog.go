package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// callRecord collects what the layers under the middleware learn about a
// call: the first status set wins (the fault closest to the upstream).
type callRecord struct {
	mu     sync.Mutex
	status string
}

func (r *callRecord) set(status string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.status == "" {
		r.status = status
	}
	r.mu.Unlock()
}

func (r *callRecord) get() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

type recordKey struct{}

func recordOf(ctx context.Context) *callRecord {
	r, _ := ctx.Value(recordKey{}).(*callRecord)
	return r
}

// clientLimiter is the rate limiter of one client.
type clientLimiter struct {
	lim  *rate.Limiter
	seen time.Time
}

// maxLimiters bounds the limiters kept; past it, those of clients idle for
// a minute are dropped.
const maxLimiters = 4096

// allow reports whether the client key may call now, and if not, how long
// until it may.
func (p *Proxy) allow(key string) (bool, time.Duration) {
	if p.o.Rate <= 0 {
		return true, 0
	}
	now := p.o.Now()
	p.lmu.Lock()
	defer p.lmu.Unlock()
	cl := p.limiters[key]
	if cl == nil {
		if len(p.limiters) >= maxLimiters {
			for k, v := range p.limiters {
				if now.Sub(v.seen) > time.Minute {
					delete(p.limiters, k)
				}
			}
		}
		cl = &clientLimiter{lim: rate.NewLimiter(p.o.Rate, p.o.Burst)}
		p.limiters[key] = cl
	}
	cl.seen = now
	if cl.lim.AllowN(now, 1) {
		return true, 0
	}
	r := cl.lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	r.CancelAt(now)
	return false, wait
}

// middleware rate-limits and logs every tools/call of a client. It is the
// outermost receiving middleware, so a call of ctxfit_next is limited and
// logged once, not again for the upstream call it replays.
func (p *Proxy) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || r.Params == nil {
			return next(ctx, method, req)
		}
		start := p.o.Now()
		p.lmu.Lock()
		p.reqSeq++
		id := fmt.Sprintf("req_%d", p.reqSeq)
		p.lmu.Unlock()
		session := ""
		if r.Session != nil {
			session = r.Session.ID()
		}
		rec := &callRecord{}
		var res mcp.Result
		var err error
		if ok, wait := p.allow(session); !ok {
			rec.set(StatusRateLimited)
			secs := max(1, int(math.Ceil(wait.Seconds())))
			res = p.errorResult(StatusRateLimited, fmt.Sprintf(
				"Too many tool calls: this client may make %g per second (bursts of %d); retry in %d seconds.",
				float64(p.o.Rate), p.o.Burst, secs), secs)
		} else {
			res, err = next(context.WithValue(ctx, recordKey{}, rec), method, req)
		}
		p.logCall(ctx, id, session, r.Params.Name, start, rec.get(), res, err)
		return res, err
	}
}

// logCall writes the one record of a tool call.
func (p *Proxy) logCall(ctx context.Context, id, session, tool string, start time.Time, status string, res mcp.Result, err error) {
	ctr, _ := res.(*mcp.CallToolResult)
	if status == "" {
		switch {
		case err != nil && errors.Is(err, context.Canceled):
			status = StatusCanceled
		case err != nil:
			status = StatusError
		case ctr != nil && ctr.IsError:
			status = StatusToolError
		default:
			status = StatusSuccess
		}
	}
	before, after := p.tokens(ctr)
	attrs := []slog.Attr{
		slog.String("request_id", id),
		slog.String("tool", tool),
		slog.Float64("duration_ms", float64(p.o.Now().Sub(start).Microseconds())/1000),
		slog.String("status", status),
		slog.Int("tokens_before", before),
		slog.Int("tokens_after", after),
	}
	if session != "" {
		attrs = append(attrs, slog.String("session", session))
	}
	if strategy, ok := metaString(ctr, mcpcore.MetaStrategy); ok {
		attrs = append(attrs, slog.String("strategy", strategy))
	}
	if err != nil {
		attrs = append(attrs, slog.String("err", err.Error()))
	}
	p.logger.LogAttrs(ctx, slog.LevelInfo, "tool call", attrs...)
}

// tokens returns the token counts of a result before and after shaping:
// from ctxfit's _meta when it was shaped, else its body counted exactly.
func (p *Proxy) tokens(r *mcp.CallToolResult) (before, after int) {
	if r == nil {
		return 0, 0
	}
	a, okA := metaInt(r, mcpcore.MetaTokens)
	b, okB := metaInt(r, mcpcore.MetaOriginalTokens)
	if okA && okB {
		return b, a
	}
	c := p.counter()
	if c == nil {
		return 0, 0
	}
	var body string
	if r.StructuredContent != nil {
		if raw, err := json.Marshal(r.StructuredContent); err == nil {
			body = string(raw)
		}
	} else {
		var texts []string
		for _, ct := range r.Content {
			if t, ok := ct.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
		body = strings.Join(texts, "\n")
	}
	n := c.Count(body)
	return n, n
}

func metaInt(r *mcp.CallToolResult, key string) (int, bool) {
	if r == nil || r.Meta == nil {
		return 0, false
	}
	switch v := r.Meta[key].(type) {
	case int:
		return v, true
	case float64:
		return int(v), true
	case json.Number:
		n, err := v.Int64()
		return int(n), err == nil
	}
	return 0, false
}

func metaString(r *mcp.CallToolResult, key string) (string, bool) {
	if r == nil || r.Meta == nil {
		return "", false
	}
	s, ok := r.Meta[key].(string)
	return s, ok
}
