package httpfit

import (
	"context"
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
	"github.com/ctxfit/ctxfit/internal/ui"
)

// pages are the pages of UI, by guard; anyPage says whether there is one,
// so that a request through a guard without a page looks nothing up.
var (
	pages   sync.Map // weak.Pointer[ctxfit.Guard] -> *ui.UI
	anyPage atomic.Bool
)

// UI returns a handler of a web page, at /ui, that shows what g did to the
// requests the [Middleware] of g handles from then on: a live list (time,
// route, strategy, tokens before and after, latency, status) with filters,
// totals and a chart of tokens saved, and each shaped response beside its
// original, read back from g's store for as long as its snapshot lives
// there (the page never runs a handler again). It keeps the last 500
// requests. Every call of UI with g returns the same page.
//
// A user sees only the requests made with the credential they present:
// their Authorization header, all their cookies and their TLS client
// certificate, or none (as the Middleware binds cursors).
// Cursors and arguments are never shown. The handler authenticates no one
// and answers only GET and HEAD: mount it on a loopback address (or
// behind your authentication) at "/ui" and "/ui/". Every answer carries a
// strict Content-Security-Policy; the page writes what responses carry as
// text, never as markup.
func UI(g *ctxfit.Guard) http.Handler {
	key := weak.Make(g)
	v, loaded := pages.LoadOrStore(key, ui.New(&ui.Options{Principal: owner}))
	if !loaded {
		anyPage.Store(true)
		runtime.AddCleanup(g, func(k weak.Pointer[ctxfit.Guard]) { pages.Delete(k) }, key)
	}
	return v.(*ui.UI)
}

// pageOf is the page of g, nil when UI was never called with it.
func pageOf(g *ctxfit.Guard) *ui.UI {
	if !anyPage.Load() {
		return nil
	}
	v, ok := pages.Load(weak.Make(g))
	if !ok {
		return nil
	}
	return v.(*ui.UI)
}

var errNoReplay = errors.New("httpfit: the original is no longer kept")

// showRequest hands a request the guard handled to its page.
func showRequest(page *ui.UI, g *ctxfit.Guard, r *http.Request, req *ctxfit.Request, res ctxfit.Result, err error) {
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
	page.Add(c)
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
