package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/redact"
	"github.com/ctxfit/ctxfit/internal/ui"
)

// UIOptions configure the page of [Proxy.UI]. The zero value, like nil,
// means the defaults.
type UIOptions struct {
	// Calls is how many recent tool calls the page keeps. Zero means 500.
	Calls int
	// ShowArguments shows each call's arguments (redacted as
	// [Options.LogArguments] logs them) and the cursors of its result.
	// False means neither is shown.
	ShowArguments bool
	// Operators are bearer tokens whose holders see the calls and sessions
	// of every credential. Nil means none: a user sees only the calls
	// made with the credential they present (their Authorization header,
	// the cookies of [Options.CredentialCookies], their client
	// certificate, or none).
	Operators []string
}

// UI returns a handler of a web page, at /ui, that shows what the guard
// did to the tool calls the Proxy relays from then on: a live list with
// filters, totals and a chart of tokens saved, each call's result beside
// its original (read back from the guard's store for as long as its
// snapshot lives there), and the sessions and the upstream's health. The
// first call sets the options; later calls return the same page.
//
// The handler authenticates no one and answers only GET and HEAD: mount it
// on a loopback address, or behind the same bearer check as
// [Proxy.Handler]. A user sees only the calls of their own credential
// unless they hold an operator token. Every answer carries a strict
// Content-Security-Policy; the page writes what calls carry as text.
func (p *Proxy) UI(o *UIOptions) http.Handler {
	p.uiOnce.Do(func() {
		var opts UIOptions
		if o != nil {
			opts = *o
		}
		p.showArgs = opts.ShowArguments
		p.ui.Store(ui.New(&ui.Options{
			Size:          opts.Calls,
			ShowArguments: opts.ShowArguments,
			Operators:     append([]string(nil), opts.Operators...),
			Cookies:       p.o.CredentialCookies,
			Sessions:      p.uiSessions,
			Health:        func() any { return p.Health() },
		}))
	})
	return p.ui.Load()
}

func (p *Proxy) uiSessions() []ui.Session {
	p.mu.Lock()
	all := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		all = append(all, s)
	}
	p.mu.Unlock()
	out := make([]ui.Session, 0, len(all))
	for _, s := range all {
		s.mu.Lock()
		out = append(out, ui.Session{Owner: s.owner, ID: s.subject, State: string(s.state)})
		s.mu.Unlock()
	}
	return out
}

// errNoReplay is what reading an original the store no longer holds
// answers: the page never runs a tool again.
var errNoReplay = errors.New("proxy: the original is no longer kept")

// showCall hands a tool call to the page of [Proxy.UI], if there is one.
func (p *Proxy) showCall(s *session, pd *pending, status, strategy string, before, after int, res json.RawMessage) {
	u := p.ui.Load()
	if u == nil {
		return
	}
	c := ui.Call{
		Time: pd.start, Owner: s.owner, Session: s.subject, Tool: pd.tool, Strategy: strategy, Status: status,
		TokensBefore: before, TokensAfter: after, Latency: max(p.o.Now().Sub(pd.start), 0),
		Result: append(json.RawMessage(nil), res...),
	}
	if c.Strategy == "" {
		c.Strategy = "passthrough"
	}
	if p.showArgs {
		var params struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(pd.params, &params)
		c.Arguments = redact.JSON(params.Arguments, maxEcho, p.o.Redact...)
	}
	var original string
	c.Cursors, original = cursorsOf(res)
	if original != "" {
		g, bound := p.guard, s.bound
		c.Original = func(ctx context.Context) ([]byte, error) {
			data, _, err := g.ReadResource(ctx, original, bound, func(context.Context) (ctxfit.Response, error) {
				return ctxfit.Response{}, errNoReplay
			})
			return data, err
		}
	}
	u.Add(c)
}

// cursorsOf returns the cursors a tool result hands the model (in its
// _meta and its ctxfit:// links) and the token of the link to its whole
// original ("" when none).
func cursorsOf(res json.RawMessage) (cursors []ui.Cursor, original string) {
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
