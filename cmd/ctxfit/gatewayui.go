package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/mcpui"
	"github.com/ctxfit/ctxfit/internal/principal"
	"github.com/ctxfit/ctxfit/internal/redact"
	"github.com/ctxfit/ctxfit/internal/ui"
)

// uiOptions configure [uiMiddleware].
type uiOptions struct {
	// Cookies are the cookies that are part of a credential. Nil means none.
	Cookies []string
	// ShowArguments keeps each call's arguments, redacted. False means none.
	ShowArguments bool
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// uiMaxEcho bounds each string of the arguments kept.
const uiMaxEcho = 256

// uiMiddleware returns a receiving middleware of an MCP server guarded by g
// (mcpfit's, installed before it, so that this one sees the shaped
// results) that hands every tools/call to u. A call belongs to the
// credential of the HTTP request that carried it (principal.Of), and its
// original is read back for the subject mcpfit bound its cursors to: that
// principal and the session ID.
func uiMiddleware(u *ui.UI, g *ctxfit.Guard, o uiOptions) mcp.Middleware {
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
					c.Arguments = redact.JSON(call.Params.Arguments, uiMaxEcho)
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
				c.Cursors, original = mcpui.Cursors(raw)
				c.Original = mcpui.Original(g, original, subject)
				if s, ok := r.Meta[mcpcore.MetaStrategy].(string); ok && s != "" {
					c.Strategy = s
				}
				after, okA := uiNumber(r.Meta[mcpcore.MetaTokens])
				before, okB := uiNumber(r.Meta[mcpcore.MetaOriginalTokens])
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

func uiNumber(v any) (int, bool) {
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

// uiSessions lists the sessions server serves for the --ui page, each
// with the principal owners bound it to ("" when none did: then only an
// operator sees it). The page shows an ID only as a digest.
func uiSessions(server *mcp.Server, owners *principal.Sessions) []ui.Session {
	var out []ui.Session
	for ss := range server.Sessions() {
		id := ss.ID()
		who, _ := owners.Owner(id)
		out = append(out, ui.Session{Owner: who, ID: id, State: "open"})
	}
	return out
}

// uiHealth is the gateway's health as the --ui page shows it: its status,
// the API it serves (no credential), the sessions served and the API's
// calls and errors, with the report of /healthz beside them.
func uiHealth(s gateway.Stats, upstream string) map[string]any {
	report := healthReport(s)
	report["upstream"] = upstream
	report["sessions"] = s.CurrentSessions
	report["apiCalls"], report["apiErrors"] = s.Calls, s.APIErrors
	return report
}

// gatewayUpstream names the API a gateway serves, for the --ui page:
// --base-url, else the document it read, a URL without its credentials or
// a file by its name alone (a local path says nothing the page needs).
func gatewayUpstream(baseURL, document string) string {
	switch {
	case baseURL != "":
		return "api: " + redact.Endpoint(baseURL)
	case strings.Contains(document, "://"):
		return "openapi: " + redact.Endpoint(document)
	}
	return "openapi: " + filepath.Base(document)
}
