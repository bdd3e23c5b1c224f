package httpfit

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/principal"
	"github.com/ctxfit/ctxfit/internal/redact"
	"github.com/ctxfit/ctxfit/internal/ui"
)

// pages are the pages of UI, by guard; anyPage says whether there is one,
// so that a request through a guard without a page looks nothing up.
var (
	pages   sync.Map // weak.Pointer[ctxfit.Guard] -> *page
	anyPage atomic.Bool
)

// UIOptions configure the page of [UI]. The zero value (or a nil
// *UIOptions) gives the defaults described on each field.
type UIOptions struct {
	// Calls is how many recent requests the page keeps (a ring: the
	// oldest leaves first). Zero means 500.
	Calls int
	// ShowArguments shows each request's query parameters (secrets
	// redacted: a parameter whose name says it is one, and what looks like
	// a token inside any value; each value cut to 256 bytes) and the
	// cursors of its response. False means neither is shown: cursors read
	// "[cursor]" in the response and its original.
	ShowArguments bool
	// Operators are bearer tokens whose holders see the requests of every
	// credential. Nil means none: a user sees only the requests made with
	// the credential they present.
	Operators []string
}

// UI returns a handler of a web page, at /ui, that shows what g did to the
// requests the [Middleware] of g handles from then on: a live list (time,
// route, strategy, tokens before and after, latency, status) with filters,
// totals and a chart of tokens saved, and each shaped response beside its
// original, read back from g's store for as long as its snapshot lives
// there (the page never runs a handler again). opts is copied; nil means
// the defaults of [UIOptions]. The first call of UI with g sets the
// options; later calls return the same page and ignore theirs.
//
// A user sees only the requests made with the credential they present:
// their Authorization header, all their cookies and their TLS client
// certificate, or none (as the Middleware binds cursors), unless they hold
// one of [UIOptions.Operators]. Cursors and arguments are shown only with
// [UIOptions.ShowArguments]. The handler authenticates no one and answers
// only GET and HEAD (405 otherwise): mount it on a loopback address (or
// behind your authentication) at "/ui" and "/ui/". Every answer carries a
// strict Content-Security-Policy; the page writes what responses carry as
// text, never as markup.
func UI(g *ctxfit.Guard, opts *UIOptions) http.Handler {
	key := weak.Make(g)
	if v, ok := pages.Load(key); ok {
		return v.(*page).ui
	}
	var o UIOptions
	if opts != nil {
		o = *opts
	}
	p := &page{showArgs: o.ShowArguments, ui: ui.New(&ui.Options{
		Size: o.Calls, ShowArguments: o.ShowArguments, Operators: slices.Clone(o.Operators), Principal: owner,
	})}
	v, loaded := pages.LoadOrStore(key, p)
	if !loaded {
		anyPage.Store(true)
		runtime.AddCleanup(g, func(k weak.Pointer[ctxfit.Guard]) { pages.Delete(k) }, key)
	}
	return v.(*page).ui
}

// page is the page of a guard and what it shows.
type page struct {
	ui       *ui.UI
	showArgs bool
}

// pageOf is the page of g, nil when UI was never called with it.
func pageOf(g *ctxfit.Guard) *page {
	if !anyPage.Load() {
		return nil
	}
	v, ok := pages.Load(weak.Make(g))
	if !ok {
		return nil
	}
	return v.(*page)
}

var errNoReplay = errors.New("httpfit: the original is no longer kept")

// showRequest hands a request the guard handled to its page.
func showRequest(p *page, g *ctxfit.Guard, r *http.Request, req *ctxfit.Request, res ctxfit.Result, err error) {
	rec := res.Record
	c := ui.Call{
		Time: rec.Timestamp, Owner: owner(r), Tool: rec.Endpoint, Strategy: string(rec.Strategy),
		Status: strconv.Itoa(max(res.Status, 200)), TokensBefore: rec.TokensBefore, TokensAfter: rec.TokensAfter, Latency: rec.Latency,
	}
	if c.Tool == "" {
		c.Tool = req.Endpoint
	}
	if err != nil {
		c.Status = "error"
	}
	if res.Shaped {
		c.Result = append([]byte(nil), res.Body...)
	}
	for _, k := range []ui.Cursor{{Name: "next", Token: res.Next}, {Name: "details", Token: res.Details}, {Name: "part", Token: res.PartCursor}, {Name: "original", Token: res.Original}} {
		if k.Token != "" {
			c.Cursors = append(c.Cursors, k)
		}
	}
	if token, subject := res.Original, req.Subject; token != "" {
		c.Original = func(ctx context.Context) ([]byte, error) {
			data, _, err := g.ReadResource(ctx, token, subject, func(context.Context) (ctxfit.Response, error) {
				return ctxfit.Response{}, errNoReplay
			})
			return data, err
		}
	}
	if p.showArgs {
		c.Arguments = arguments(r)
	}
	p.ui.Add(c)
}

// owner is the principal of r: its Authorization header, every cookie it
// carries (the Middleware binds cursors to all of them) and its client
// certificate.
func owner(r *http.Request) string {
	var names []string
	for _, c := range r.Cookies() {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return principal.Of(r, slices.Compact(names))
}

// uiMaxEcho bounds each value of the arguments a page shows.
const uiMaxEcho = 256

// arguments are r's query parameters as a JSON object (a name with one
// value maps to it, with several to their list), redacted.
func arguments(r *http.Request) json.RawMessage {
	q := r.URL.Query()
	if len(q) == 0 {
		return nil
	}
	obj := make(map[string]any, len(q))
	for k, v := range q {
		if len(v) == 1 {
			obj[k] = v[0]
		} else {
			obj[k] = v
		}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return redact.JSON(raw, uiMaxEcho)
}
