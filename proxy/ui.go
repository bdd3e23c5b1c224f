package proxy

import (
	"encoding/json"
	"net/http"
	"path/filepath"

	"github.com/ctxfit/ctxfit/internal/mcpui"
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
			Health:        p.uiHealth,
		}))
	})
	return p.ui.Load()
}

// uiHealth is [Proxy.Health] as the page shows it: a stdio upstream's
// program by its name alone (its directory says nothing the page needs,
// and may name a user's home).
func (p *Proxy) uiHealth() any {
	h := p.Health()
	if p.up.Command != nil {
		h.Upstream = "stdio: " + filepath.Base(p.up.Command.Path)
	}
	return h
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
	c.Cursors, original = mcpui.Cursors(res)
	c.Original = mcpui.Original(p.guard, original, s.bound)
	u.Add(c)
}
