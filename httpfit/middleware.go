package httpfit

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/cachedfetch"
	"github.com/ctxfit/ctxfit/internal/jsonwire"
	"github.com/ctxfit/ctxfit/internal/redact"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Options configure [Middleware]. The zero value (or a nil *Options) gives
// the defaults described on each field. Middleware copies the Options.
type Options struct {
	// Subject returns the tenant, session or principal a request is made
	// for; cursors are bound to it, so a cursor issued to one subject is
	// rejected for another. Nil means the credentials the request carried:
	// a keyed digest of its Authorization header and cookies
	// ([ctxfit.Guard.CredentialSubject]), and no subject for a request with
	// neither. A rotated token or a changed cookie then means following the
	// cursors from the first page again; set Subject to a user ID to bind
	// cursors to the user instead.
	Subject func(*http.Request) string
	// Endpoint returns the route pattern of a request, which selects the
	// per-endpoint settings ([ctxfit.Config.Endpoints], whose Match must
	// equal it) and is the scope cursors are bound to and the endpoint of
	// telemetry. It should have few distinct values: a pattern, not a path.
	// Nil (or an empty result) means, in order: the pattern the wrapped
	// handler routes the request to when it is a *http.ServeMux (or has the
	// same Handler method); the request's Pattern when the middleware is
	// itself registered on a ServeMux; the first endpoint Match of the
	// Guard's Config that, read as a ServeMux pattern, matches the request;
	// else "METHOD /path".
	Endpoint func(*http.Request) string
	// RequestID returns the ID that correlates a request's telemetry. Nil
	// means the X-Request-Id request header ("" when absent). An ID longer
	// than 128 bytes is cut to 128 (telemetry never repeats a header
	// without bound).
	RequestID func(*http.Request) string
	// Logger receives the internal errors the middleware answers with a
	// 500 problem, or fails open on (see [Middleware]). Their messages may
	// hold a backend's (a panicking store's, say), so the client gets a
	// generic detail and the message goes here. Nil means slog.Default().
	Logger *slog.Logger
	// Cache serves GET responses with status 200 from a response cache
	// (package cache), keyed by endpoint, path, subject and the query's raw
	// parameters, under HTTP's caching rules for a shared cache (see
	// cache.Cache.LookupHTTP: no-store, private, Vary, credentials without a
	// Subject). Nil means no caching. On a hit the handler does not run,
	// and its headers other than Content-Type are not replayed.
	Cache *cache.Cache
	// BaseURL returns the scheme, host and path prefix under which the
	// client reached this server, as the client sees it (for example
	// "https://api.example.com", or "https://example.com/api" behind a
	// proxy that strips /api), for the URLs of the Link headers the
	// middleware sends: the request's path and query follow it. Nil means
	// the request as it arrived: https when the connection is TLS, else
	// http, and the Host header. The X-Forwarded-* and Forwarded headers are
	// not read unless BaseURL reads them: any client can send them, so only
	// a server behind a proxy that sets them may trust them, e.g.
	//
	//	BaseURL: func(r *http.Request) string {
	//		return r.Header.Get("X-Forwarded-Proto") + "://" + r.Header.Get("X-Forwarded-Host")
	//	},
	BaseURL func(*http.Request) string
	// Now is the clock of entity tags, which change every half cursor
	// lifetime (see [Middleware]); give it the Guard's clock
	// (ctxfit.Options.Now) when that is not the system's. Nil means
	// time.Now.
	Now func() time.Time
}

// Middleware returns middleware that keeps the responses of the handler it
// wraps within the token budget of g, as [ctxfit.Guard.Handle] describes.
//
// It reads the query parameters named by g's [ctxfit.Config.Params]
// (cursor, limit, fields, startLine, endLine, part by default), "order" and
// "sort", and the other query parameters as filters (see the package
// documentation). limit, startLine and endLine must be integers (limit >=
// 0, lines >= 1), part an integer >= 1. A ctxfit parameter that is not
// URL-encoded correctly is bad input; any other parameter is the handler's,
// which gets it as written (a malformed % escape in it is not a 400).
//
// It sends:
//   - a response under the threshold, or one it leaves alone (see the
//     package documentation), exactly as the handler wrote it, headers and
//     status included;
//   - a shaped response with the handler's status and headers, except that
//     Content-Type and Content-Length describe the shaped body, the
//     validators that described the old body (ETag, Last-Modified,
//     Content-MD5, Digest, Content-Digest, Repr-Digest) and Accept-Ranges
//     are removed, and Ctxfit-Strategy names what was done (pagination,
//     summary, chunking or cut); a response served from the store has
//     the status of the response it continues;
//   - with a shaped response to a GET that has a next page, chunk or
//     member page, a Link header field (RFC 8288) with its full URL:
//     `Link: <http://host/path?...&cursor=...>; rel="next"`, the request's
//     own URL (scheme and Host as the request arrived, or [Options.BaseURL];
//     path and query as the client sent them, every parameter kept byte for
//     byte) with the cursor parameter set and no part parameter. Following
//     these links alone reads a list, a text or an object's members to the
//     end; a held-back value ({"ctxfit:part":N,...}) opens with cursor and
//     part, as before. It is added after the handler's own Link fields,
//     which are kept;
//   - with a shaped response to a GET, or one served from the store, a
//     weak ETag of its own: the same for the same page of the same data
//     within half a cursor lifetime, and another for another page, other
//     data or other parameters (see "Links, entity tags and problem
//     types" in the package documentation). A GET whose If-None-Match
//     matches it (the weak comparison of RFC 9110: "*", or the tag in a
//     list) gets 304 Not Modified with no body, with the ETag, the Link
//     and the handler's headers but none that describe a body. Where the
//     body sent is the handler's as it wrote it, its ETag and
//     If-None-Match stay the handler's business;
//   - 400 with an application/problem+json [ctxfit.Problem], whose "type"
//     is the URI of its code ([ProblemType]), for bad input:
//     a malformed, tampered, expired or foreign cursor, a bad limit, an
//     unknown field, a bad line range, a ctxfit parameter that is not
//     URL-encoded correctly; the handler's response, if it ran, is
//     discarded;
//   - 503 with Retry-After and a problem document when the snapshot store is
//     unavailable, a query's answer took too long, or too many responses
//     are being shaped at once;
//   - 502 with a problem document when the handler's response cannot be
//     held or read to shape it: larger than MaxBufferBytes (decoded), or
//     compressed in a coding other than gzip and deflate (see "What is
//     left alone" in the package documentation).
//
// When shaping fails (an error in the Guard that is not the client's
// fault; a panic falls back to a byte-bounded cut inside the Guard), the
// handler's response is sent as it was if it cannot be over the hard cap
// (no more bytes than the cap), and a 500 problem otherwise: nothing over
// the hard cap ever goes out. Either way the error goes to
// [Options.Logger], and the problem's detail is generic: no problem
// echoes a backend's message (a store's errors are a 503 that says the
// store is unavailable). A panic in the wrapped handler is not the middleware's business:
// it propagates, with the same value, as it would without the middleware.
//
// The ResponseWriter the handler gets implements http.Flusher and
// http.Hijacker (flushing or hijacking ends buffering: the response passes
// through from then on) and Unwrap, so http.ResponseController reaches the
// underlying writer for deadlines and full duplex.
//
// Middleware panics if g is nil.
func Middleware(g *ctxfit.Guard, opts *Options) func(http.Handler) http.Handler {
	if g == nil {
		panic("httpfit: Middleware needs a *ctxfit.Guard; create one with ctxfit.New")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	return func(next http.Handler) http.Handler {
		h := &handler{g: g, next: next, opts: o}
		if rt, ok := next.(router); ok {
			h.router = rt
		}
		return h
	}
}

// router is what a ServeMux offers to find the pattern of a request without
// serving it.
type router interface {
	Handler(r *http.Request) (h http.Handler, pattern string)
}

type handler struct {
	g      *ctxfit.Guard
	next   http.Handler
	opts   Options
	router router
	routes atomic.Pointer[routeTable]
}

// errPassedThrough is what the Fetch returns when the handler's response
// went to the client as it was written.
var errPassedThrough = errors.New("httpfit: the response passed through")

// bypassType is the content type under which a response that passed
// through is shown to the Guard, so that it records a bypass.
const bypassType = "application/vnd.ctxfit.bypass"

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodHead, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		h.next.ServeHTTP(w, r)
		return
	}
	cfg := h.g.Config()
	req, inner, err := h.request(r, cfg)
	if err != nil {
		writeProblem(w, problemOf(err, cfg.Params))
		return
	}
	c := callPool.Get().(*call)
	c.h, c.orig, c.inner, c.cursor = h, r, inner, req.Cursor != ""
	// parseQuery gives the filters as one JSON string when the handler's
	// parameters are not URL-encoded correctly: cursors are then bound to
	// the query's raw bytes.
	c.verbatim = len(req.Filters) > 0 && req.Filters[0] == '"'
	c.hardCap = cfg.HardCap
	c.bw.reset(w, cfg.MaxBufferBytes)
	fetch := c.fetchFunc
	if h.opts.Cache != nil && r.Method == http.MethodGet {
		c.via = cachedfetch.WrapHTTP(h.opts.Cache, req, cache.HTTP{Header: r.Header, RawQuery: inner.URL.RawQuery}, fetch)
		fetch = c.viaFunc
	}
	page := pageOf(h.g)
	if page != nil {
		req.Original = true
	}
	var res ctxfit.Result
	func() {
		defer func() {
			if p := recover(); p != nil {
				if c.inHandler {
					panic(p) // the handler's own panic
				}
				err = fmt.Errorf("httpfit: shaping panicked: %v", p)
			}
		}()
		res, err = h.g.Handle(r.Context(), req, fetch)
	}()
	c.respond(w, &req, res, err, &cfg)
	if page != nil {
		showRequest(page, h.g, r, &req, res, err)
	}
	// Nothing holds the buffer of a response that passed through, once it
	// is written (a cache stores a copy). Shaping may have left it with a
	// Store, which may keep the slice, or with a shaping goroutine past its
	// time limit: then the buffer is not reused.
	reuse := err == nil &&
		(res.Record.Outcome == telemetry.OutcomePassthrough || res.Record.Outcome == telemetry.OutcomeBypass)
	c.release(reuse)
}

// call is the state of one request through the middleware. Calls are
// pooled, so that a response that passes through costs no allocation for
// its buffer, headers or closure.
type call struct {
	hardCap   int
	h         *handler
	orig      *http.Request // the request as the middleware got it
	inner     *http.Request // the request the handler gets
	cursor    bool
	verbatim  bool // the filters are the query's raw bytes
	bw        bufferWriter
	inHandler bool
	fetched   bool
	fetchFunc ctxfit.Fetch // c.fetch, bound once
	// via is the response cache's Fetch in front of c.fetch, and viaFunc
	// (c.fetchVia, bound once) calls it.
	via, viaFunc ctxfit.Fetch
	// got is the body the Guard got from the handler or the cache: the
	// snapshot of a first request, for its entity tag.
	got []byte
}

var callPool = sync.Pool{New: func() any {
	c := new(call)
	c.fetchFunc = c.fetch
	c.viaFunc = c.fetchVia
	return c
}}

// maxPooledBuffer bounds the buffers kept for reuse: a rare large response
// must not pin its buffer.
const maxPooledBuffer = 64 << 10

// release returns c to the pool, with its buffer if reuse is set.
func (c *call) release(reuse bool) {
	c.h, c.orig, c.inner, c.cursor, c.verbatim, c.inHandler, c.fetched = nil, nil, nil, false, false, false, false
	c.via, c.got = nil, nil
	if !reuse || c.bw.buf.Cap() > maxPooledBuffer {
		c.bw.buf = bytes.Buffer{}
	}
	c.bw.reset(nil, 0)
	callPool.Put(c)
}

// fetch runs the handler into the buffering writer; the Guard calls it at
// most once.
func (c *call) fetch(ctx context.Context) (ctxfit.Response, error) {
	if c.fetched {
		return ctxfit.Response{}, errors.New("httpfit: the handler cannot run twice for one request")
	}
	c.fetched = true
	in := c.inner
	if ctx != in.Context() {
		in = in.WithContext(ctx)
	}
	bw := &c.bw
	c.inHandler = true
	c.h.next.ServeHTTP(bw, in)
	c.inHandler = false
	bw.finish()
	var body []byte
	if bw.mode == modeBuffer && bw.refused == nil {
		if bw.compressedMedia() {
			bw.stream() // media, compressed: sent as the handler wrote it
		} else {
			var err error
			if body, err = bw.decoded(); err != nil {
				bw.refused = err
			}
		}
	}
	if bw.mode != modeBuffer || bw.status != http.StatusOK || bw.refused != nil {
		cache.DontStore(ctx)
	} else {
		cache.ResponseHeader(ctx, bw.Header())
	}
	if bw.refused != nil {
		return ctxfit.Response{}, bw.refused
	}
	if bw.mode != modeBuffer {
		if c.cursor {
			return ctxfit.Response{}, errPassedThrough
		}
		// Recorded as a bypass; Handle writes nothing.
		return ctxfit.Response{ContentType: bypassType}, nil
	}
	c.got = body
	return ctxfit.Response{Body: body, ContentType: bw.ct, Status: bw.status}, nil
}

// fetchVia is c.fetch behind the response cache: it notes the body the
// Guard gets, the handler's or the cache's.
func (c *call) fetchVia(ctx context.Context) (ctxfit.Response, error) {
	resp, err := c.via(ctx)
	c.got = resp.Body
	return resp, err
}

// respond sends what the Guard made of the request req.
func (c *call) respond(w http.ResponseWriter, req *ctxfit.Request, res ctxfit.Result, err error, cfg *ctxfit.Config) {
	bw := &c.bw
	if c.fetched && bw.mode != modeBuffer {
		return // the response went out as the handler wrote it
	}
	if err != nil {
		p := problemOf(err, cfg.Params)
		if p.Status == http.StatusInternalServerError {
			c.h.logInternal(c.inner, err)
			p.Detail = internalDetail
		}
		if p.Status == http.StatusInternalServerError && c.fetched && bw.refused == nil && len(c.got) <= c.hardCap {
			// Fail open, but only with a response that cannot be over the
			// hard cap (n bytes never hold more than n tokens; a
			// compressed body's decoded bytes).
			bw.send(bw.buf.Bytes(), false, "", "", "")
			return
		}
		if c.fetched {
			bw.restore() // the handler's response is discarded
		}
		writeProblem(w, p)
		return
	}
	if !c.fetched {
		// Served from the store: the status of the response it continues.
		bw.status = cmp.Or(res.Status, http.StatusOK)
	}
	etag := ""
	if c.orig.Method == http.MethodGet {
		if res.Next != "" {
			if link := nextLink(c.orig, c.h.opts.BaseURL, cfg.Params.Cursor, cfg.Params.Part, res.Next, c.verbatim); link != "" {
				w.Header().Add("Link", link)
			}
		}
		// A body ctxfit made, not the handler's as it wrote it: the
		// handler's own validators do not describe it.
		if res.Shaped || c.cursor && !c.fetched {
			etag = entityTag(req, &res, c.got, etagWindow(c.h.now(), time.Duration(cfg.CursorTTL)))
			if noneMatch(c.orig.Header["If-None-Match"], etag) {
				bw.notModified(etag, res.Shaped, string(res.Strategy))
				return
			}
		}
	}
	body := res.Body
	if !res.Shaped && c.fetched && bw.encoding != "" {
		body = bw.buf.Bytes() // the handler's compressed bytes, as it wrote them
	}
	bw.send(body, res.Shaped, res.ContentType, string(res.Strategy), etag)
}

func (h *handler) now() time.Time {
	if h.opts.Now != nil {
		return h.opts.Now()
	}
	return time.Now()
}

// request builds the Guard's Request from r, and the request the handler
// sees: r itself, or a shallow copy of r without the ctxfit parameters.
func (h *handler) request(r *http.Request, cfg ctxfit.Config) (ctxfit.Request, *http.Request, error) {
	q, err := parseQuery(r.URL.RawQuery, cfg.Params)
	if err != nil {
		return ctxfit.Request{}, nil, err
	}
	req := ctxfit.Request{
		Endpoint: h.endpoint(r, cfg),
		Method:   r.Method,
		Path:     r.URL.Path,
		Cursor:   q.cursor,
		Part:     q.part,
		Limit:    q.limit,
		Fields:   q.fields,
		Search:   q.search,
		Query:    q.jq,
		Format:   q.format,
		Order:    q.order,
		Filters:  q.filters,

		StartLine: q.startLine,
		EndLine:   q.endLine,
	}
	if h.opts.Subject != nil {
		req.Subject = h.opts.Subject(r)
	} else if len(r.Header["Authorization"]) > 0 || len(r.Header["Cookie"]) > 0 {
		req.Subject = h.g.CredentialSubject(strings.Join(r.Header["Authorization"], "\n"), strings.Join(r.Header["Cookie"], "\n"))
	}
	if h.opts.RequestID != nil {
		req.RequestID = h.opts.RequestID(r)
	} else {
		req.RequestID = get(r.Header, "X-Request-Id")
	}
	req.RequestID = redact.Bound(req.RequestID, maxRequestID)
	inner := r
	if q.stripped != r.URL.RawQuery {
		inner = new(http.Request)
		*inner = *r
		u := *r.URL
		u.RawQuery = q.stripped
		inner.URL = &u
	}
	if ae, ok := r.Header["Accept-Encoding"]; ok {
		if readable, changed := readableEncodings(ae); changed {
			if inner == r {
				inner = new(http.Request)
				*inner = *r
			}
			inner.Header = r.Header.Clone()
			inner.Header["Accept-Encoding"] = readable
		}
	}
	return req, inner, nil
}

// readableEncodings is an Accept-Encoding field without the codings the
// middleware cannot decode to shape a body (br, zstd, "*", ...): a handler
// that compresses as its client accepts then compresses in a way ctxfit
// reads, or not at all. changed reports whether it dropped any.
func readableEncodings(field []string) (readable []string, changed bool) {
	for _, line := range field {
		for coding := range strings.SplitSeq(line, ",") {
			name, _, _ := strings.Cut(coding, ";")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "gzip", "x-gzip", "deflate", "identity":
				readable = append(readable, strings.TrimSpace(coding))
			case "":
			default:
				changed = true
			}
		}
	}
	if !changed {
		return field, false
	}
	if len(readable) == 0 {
		return []string{"identity"}, true
	}
	return []string{strings.Join(readable, ", ")}, true
}

func (h *handler) endpoint(r *http.Request, cfg ctxfit.Config) string {
	if h.opts.Endpoint != nil {
		if e := h.opts.Endpoint(r); e != "" {
			return e
		}
	}
	if h.router != nil {
		if _, p := h.router.Handler(r); p != "" {
			return p
		}
	}
	if r.Pattern != "" {
		return r.Pattern
	}
	if p := h.routeTable(cfg.Endpoints).match(r); p != "" {
		return p
	}
	return r.Method + " " + r.URL.Path
}

// internalDetail is the detail of a 500 problem: what went wrong inside is
// logged, not sent.
const internalDetail = "ctxfit: the response could not be shaped because of an internal error (logged on the server)"

// logInternal logs an internal error of the request r.
func (h *handler) logInternal(r *http.Request, err error) {
	l := h.opts.Logger
	if l == nil {
		l = slog.Default()
	}
	l.LogAttrs(r.Context(), slog.LevelError, "httpfit: shaping the response failed",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("err", err.Error()))
}

// problemOf maps err to a problem, naming the parameter at fault when the
// middleware found it.
func problemOf(err error, params ctxfit.Params) ctxfit.Problem {
	p := ctxfit.ProblemOf(err, params)
	var pe *paramError
	if errors.As(err, &pe) {
		p.Parameter = pe.param
		if p.Expected == "" {
			p.Expected = pe.expected
		}
	}
	return p
}

// problemTypes is the start of every problem type URI: the section of
// docs/problems.md that documents a code is its fragment.
const problemTypes = "https://github.com/ctxfit/ctxfit/blob/main/docs/problems.md#"

// ProblemType returns the RFC 9457 type URI of the problems with the given
// code ([ctxfit.Problem.Code]), as [Middleware] sends it in the "type" member
// of a problem document: the section of the repository's docs/problems.md
// that says what the code means and what to do about it, e.g.
// https://github.com/ctxfit/ctxfit/blob/main/docs/problems.md#cursor_expired.
// The URIs are stable; a client may compare them instead of codes. It
// returns "" for an empty code.
func ProblemType(code string) string {
	if code == "" {
		return ""
	}
	return problemTypes + code
}

// writeProblem sends p as an RFC 9457 problem document, with the type URI
// of its code.
func writeProblem(w http.ResponseWriter, p ctxfit.Problem) {
	body, err := jsonwire.Marshal(p) // the same bytes on every Go release
	if err != nil {                  // cannot happen: Problem is strings and ints
		p.Code = "internal"
		body = []byte(`{"status":500,"code":"internal","title":"Internal error"}`)
	}
	if t := ProblemType(p.Code); t != "" && len(body) > 1 && body[0] == '{' {
		// "type" first, as RFC 9457's examples have it.
		typed := make([]byte, 0, len(body)+len(t)+10)
		typed = append(typed, `{"type":`...)
		typed = appendString(typed, t)
		typed = append(typed, ',')
		body = append(typed, body[1:]...)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/problem+json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	if p.RetryAfter > 0 {
		hdr.Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}
