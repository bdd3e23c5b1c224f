// Package mcpui hands the tool calls of an MCP server to the page of
// package internal/ui: what the model received, the cursors inside it, and
// a way to read its original back from the guard's store.
package mcpui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/principal"
	"github.com/ctxfit/ctxfit/internal/redact"
	"github.com/ctxfit/ctxfit/internal/ui"
)

// errNoReplay is what reading an original the store no longer holds
// answers: the page never runs a tool again.
var errNoReplay = errors.New("ui: the original is no longer kept")

// Original returns the function that reads back the original a token of
// a shaped result leads to, from g's store, for subject; nil when token is
// "". It never runs the tool again (replay mode): an original the store
// does not hold is an error.
func Original(g *ctxfit.Guard, token, subject string) func(context.Context) ([]byte, error) {
	if token == "" {
		return nil
	}
	return func(ctx context.Context) ([]byte, error) {
		data, _, err := g.ReadResource(ctx, token, subject, func(context.Context) (ctxfit.Response, error) {
			return ctxfit.Response{}, errNoReplay
		})
		return data, err
	}
}

// Cursors returns the cursors a tool result hands the model (in its _meta
// and its ctxfit:// links) and the token of the link to its whole
// original ("" when none).
func Cursors(res json.RawMessage) (cursors []ui.Cursor, original string) {
	var r struct {
		Content []struct {
			Type string         `json:"type"`
			URI  string         `json:"uri"`
			Meta map[string]any `json:"_meta"`
		} `json:"content"`
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(res, &r) != nil {
		return nil, ""
	}
	for _, k := range []struct{ key, name string }{
		{mcpcore.MetaNextCursor, "next"}, {mcpcore.MetaDetailsCursor, "details"}, {mcpcore.MetaPartCursor, "part"},
	} {
		if v, ok := r.Meta[k.key].(string); ok && v != "" {
			cursors = append(cursors, ui.Cursor{Name: k.name, Token: v})
		}
	}
	if more, ok := r.Meta[mcpcore.MetaMoreCursors].([]any); ok {
		for _, m := range more {
			obj, _ := m.(map[string]any)
			for name, v := range obj {
				if v, ok := v.(string); ok && v != "" {
					cursors = append(cursors, ui.Cursor{Name: "more " + name, Token: v})
				}
			}
		}
	}
	for _, b := range r.Content {
		token, ok := strings.CutPrefix(b.URI, mcpcore.ResourcePrefix)
		if b.Type != "resource_link" || !ok || token == "" {
			continue
		}
		if b.Meta[mcpcore.MetaOriginal] == true {
			original = token
			cursors = append(cursors, ui.Cursor{Name: "original", Token: token})
		} else {
			cursors = append(cursors, ui.Cursor{Name: "resource", Token: token})
		}
	}
	return cursors, original
}

// Options configure [Middleware].
type Options struct {
	// Cookies are the cookies that are part of a credential. Nil means none.
	Cookies []string
	// ShowArguments keeps each call's arguments, redacted. False means none.
	ShowArguments bool
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// maxEcho bounds each string of the arguments kept.
const maxEcho = 256

// Middleware returns a receiving middleware of an MCP server guarded by g
// (mcpfit's, installed before it, so that this one sees the shaped
// results) that hands every tools/call to u. A call belongs to the
// credential of the HTTP request that carried it (principal.Of), and its
// original is read back for the subject mcpfit bound its cursors to: that
// principal and the session ID.
func Middleware(u *ui.UI, g *ctxfit.Guard, o Options) mcp.Middleware {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	count := func(s string) int {
		c, err := budget.Exact(g.Config().Encoding)
		if err != nil {
			return 0
		}
		return c.Count(s)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" {
				return next(ctx, method, req)
			}
			start := now()
			res, err := next(ctx, method, req)
			c := ui.Call{Time: start, Latency: max(now().Sub(start), 0), Status: "success", Strategy: "passthrough"}
			if call.Params != nil {
				c.Tool = call.Params.Name
				if o.ShowArguments {
					c.Arguments = redact.JSON(call.Params.Arguments, maxEcho)
				}
			}
			if call.Session != nil {
				c.Session = call.Session.ID()
			}
			subject := c.Session
			if call.Extra != nil && call.Extra.Header != nil {
				c.Owner = principal.Of(&http.Request{Header: call.Extra.Header}, o.Cookies)
				subject = c.Owner + " " + c.Session
			} else {
				c.Owner = principal.Anonymous
			}
			if err != nil {
				c.Status = "error"
			}
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
				if r.IsError {
					c.Status = "tool_error"
				}
				raw, _ := json.Marshal(r)
				c.Result = raw
				var original string
				c.Cursors, original = Cursors(raw)
				c.Original = Original(g, original, subject)
				if s, ok := r.Meta[mcpcore.MetaStrategy].(string); ok && s != "" {
					c.Strategy = s
				}
				after, okA := number(r.Meta[mcpcore.MetaTokens])
				before, okB := number(r.Meta[mcpcore.MetaOriginalTokens])
				if okA && okB {
					c.TokensBefore, c.TokensAfter = before, after
				} else if body, _, err := mcpcore.BlockBody(raw, 0); err == nil {
					n := count(string(body))
					c.TokensBefore, c.TokensAfter = n, n
				}
			}
			u.Add(c)
			return res, err
		}
	}
}

func number(v any) (int, bool) {
	switch v := v.(type) {
	case float64:
		return int(v), true
	case int:
		return v, true
	case json.Number:
		n, err := v.Int64()
		return int(n), err == nil
	}
	return 0, false
}
