package ctxfit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/mediatype"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/summary"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Fetch runs the wrapped handler and returns its response. The Guard calls
// it at most once per [Guard.Handle], and not at all when a cursor can be
// served from the store. An error from Fetch is returned by Handle as it is.
type Fetch func(ctx context.Context) (Response, error)

// Handle answers one request: it serves a cursor from the store (store
// mode) or calls fetch for the handler's response and shapes it.
//
// A response at most the threshold passes through byte for byte. Over it,
// the response is shaped (see the package documentation for the layouts):
// a list in pages, an object's bulk array in pages beside an outline of
// the rest, a record as a summary, any other object as pages of its
// members, a text or large string in chunks; values too large for a page
// are held back behind placeholders that a cursor and Request.Part open.
// Every item, member and string in a shaped response is the original's
// bytes, and following every cursor and part gives back the whole
// response byte for byte.
//
// No shaped response exceeds the hard cap by exact count. Bad input (a
// malformed, tampered, expired or foreign cursor, a bad limit, part, line
// range or field) is an error that [ProblemOf] maps to a 400; a snapshot
// store that cannot be reached, or a query or projection whose answer is
// not made within Config.ShapeTimeout, to a 503. A panic while shaping, or
// shaping past Config.ShapeTimeout, falls back to a cheap lossless part
// that counts nothing (a token is at least one byte): the byte-bounded cut
// of the response, or of the answer to a query, fields or lines request,
// or a search page bounded by bytes, with a cursor to the rest, recorded
// as a fallback. Handle never returns the original response over the hard
// cap.
func (g *Guard) Handle(ctx context.Context, req Request, fetch Fetch) (res Result, err error) {
	start := g.now()
	e := g.cur.Load()
	rl, err := e.rulesOf(&req)
	if err != nil {
		return Result{}, err
	}
	switch {
	case req.Format != "" && req.Format != FormatJSON && req.Format != FormatTOON:
		err = fmt.Errorf("%w: format %q: \"json\" or \"toon\"", ErrBadRequest, shorten(req.Format, 40))
	case req.Part != 0 && req.Cursor == "":
		err = fmt.Errorf("%w: part needs the cursor of the response whose placeholder names it", ErrPart)
	case req.Cursor != "" && !rl.disabled:
		res, err = g.continuation(ctx, e, rl, &req, fetch)
	default:
		var resp Response
		if resp, err = fetch(ctx); err != nil {
			return Result{}, err // the handler's error, not recorded
		}
		req.status = resp.Status
		res, err = g.first(ctx, e, rl, &req, resp)
		res.Record.CacheHit = resp.CacheHit
	}
	res.Status = req.status
	res.Record.RequestID = req.RequestID
	res.Record.Endpoint = req.Endpoint
	res.Record.Timestamp = start
	res.Record.Latency = max(g.since(start), 0)
	res.Record.HardCap = rl.budget.HardCap
	if err != nil {
		var fe fetchError
		if errors.As(err, &fe) {
			return Result{}, fe.err
		}
		res.Record.Strategy = telemetry.StrategyError
		res.Record.Outcome = telemetry.OutcomeRejected
		res.Record.ErrorType = ProblemOf(err, Params{}).Code
		if res.Record.ErrorType == codeInternal {
			// The client gets a generic problem; the operator, the cause.
			g.logger.Error("ctxfit: internal error", "endpoint", req.Endpoint, "err", err)
		}
		g.emit(ctx, res.Record)
		return Result{Record: res.Record}, err
	}
	g.emit(ctx, res.Record)
	return res, nil
}

// explicit reports whether req asks for a line range or a drill-down,
// which are answered whatever the response's size.
func (req *Request) explicit() bool {
	return req.StartLine != 0 || req.EndLine != 0 || req.Fields != "" || req.Search != nil || req.Query != ""
}

// pageFormat is the format of pages a request asks for, else the one it
// continues or its endpoint's: FormatTOON, or "" for JSON.
func pageFormat(asked, inherited string) string {
	f := cmp.Or(asked, inherited)
	if f == FormatTOON {
		return f
	}
	return ""
}

// fetchError marks errors of the handler, which Handle returns unchanged
// and does not record.
type fetchError struct{ err error }

func asFetchError(err error, fe *fetchError) bool { return errors.As(err, fe) }

func (f fetchError) Error() string { return f.err.Error() }

func (g *Guard) emit(ctx context.Context, rec telemetry.Record) {
	if g.sink != nil {
		_ = g.sink.Record(context.WithoutCancel(ctx), rec)
	}
}

// passThrough returns the response unchanged; tokens is its token count.
func passThrough(resp Response, tokens int) Result {
	n := tokens
	return Result{
		Body: resp.Body, ContentType: resp.ContentType, Strategy: telemetry.StrategyPassthrough,
		Record: telemetry.Record{
			Strategy: telemetry.StrategyPassthrough, Outcome: telemetry.OutcomePassthrough,
			TokensBefore: n, TokensAfter: n, EstimatedTokens: n,
			BytesBefore: len(resp.Body), BytesAfter: len(resp.Body), ResponseBytes: len(resp.Body),
		},
	}
}

// estimatedPassThrough returns the response unchanged without counting it:
// the record's token counts are the chars/4 estimate, marked as such in its
// optimization metadata. The guard uses it where no count can change the
// decision (a response no longer than the threshold in bytes, a bypass), so
// that pass-through costs next to nothing.
func (res *Result) estimatedPassThrough(resp Response, outcome telemetry.Outcome) {
	*res = passThrough(resp, (len(resp.Body)+3)/4) // budget.Estimator without its margin
	res.Record.Outcome = outcome
	res.Record.OptimizationMetadata = estimatedMetadata
}

// estimatedMetadata marks a record whose token counts are estimates. It is
// shared: records' OptimizationMetadata is read-only by contract.
var estimatedMetadata = map[string]any{"tokensEstimated": true}

// bodyKind tells JSON from text.
type bodyKind int

const (
	kindOther bodyKind = iota
	kindJSON
	kindText
)

// kindOf tells what a response is: JSON when it is declared or sniffed as
// JSON and is valid, text when declared as text (or JSON that is not
// valid) or undeclared, other (media: passed through) otherwise.
func kindOf(resp Response) bodyKind {
	switch mediatype.Of(resp.ContentType) {
	case mediatype.JSON:
		if rawjson.Valid(resp.Body) {
			return kindJSON
		}
		return kindText
	case mediatype.Text:
		return kindText
	case mediatype.None:
		if rawjson.Valid(resp.Body) {
			return kindJSON
		}
		return kindText
	}
	return kindOther
}

// first answers a request without a cursor.
func (g *Guard) first(ctx context.Context, e *engine, rl *rules, req *Request, resp Response) (res Result, err error) {
	switch {
	case rl.disabled:
		res.estimatedPassThrough(resp, telemetry.OutcomeBypass)
		return res, nil
	case len(resp.Body) <= rl.budget.Threshold && !req.explicit() && rl.compact == nil:
		// n bytes never hold more than n tokens: nothing to count or
		// shape. This is the common case, filled in place.
		outcome := telemetry.OutcomePassthrough
		if mediatype.Of(resp.ContentType) == mediatype.Other {
			outcome = telemetry.OutcomeBypass
		}
		res.estimatedPassThrough(resp, outcome)
		return res, nil
	}
	if mediatype.Of(resp.ContentType) == mediatype.Other {
		res.estimatedPassThrough(resp, telemetry.OutcomeBypass)
		return res, nil
	}
	release, err := e.admission.admit(ctx, req.Subject, len(resp.Body))
	if err != nil {
		return Result{}, err
	}
	defer release()
	kind := kindOf(resp)
	s := g.shaper(ctx, e, rl, req, resp.Body)
	defer s.cancel()
	s.format = pageFormat(req.Format, rl.format)
	res, err = s.guard(func() (Result, error) { return s.first(kind) })
	if err == nil && !res.Shaped {
		res.ContentType = resp.ContentType
	}
	if err == nil && res.Shaped && req.Original && !req.explicit() {
		// Best effort: without it the cursors still lead to everything.
		res.Original, _ = s.cursorFor(ref{kind: contResource, end: int64(len(resp.Body)), mime: cmp.Or(resp.ContentType, "text/plain")})
	}
	if err != nil || !rl.compare || !res.Shaped {
		return res, err
	}
	// A/B: record what shaping would have sent, send the original.
	rec := res.Record
	rec.Compare = true
	return Result{Body: resp.Body, ContentType: resp.ContentType, Strategy: telemetry.StrategyPassthrough, Record: rec}, nil
}

// first shapes a response without a cursor that may need it.
func (s *shaper) first(kind bodyKind) (Result, error) {
	req, rl, e := s.req, s.rl, s.e
	if req.StartLine != 0 || req.EndLine != 0 {
		return s.lines()
	}
	s.measure(s.data)
	tokens := s.rec.TokensBefore
	if tokens > rl.budget.Threshold {
		e.sample(view(s.data), tokens, &s.rec)
	}
	if req.Query != "" {
		return s.query(req.Query)
	}
	if req.Search != nil {
		r := ref{kind: contParts, end: int64(len(s.data))} // the whole response
		if kind == kindText {
			r = ref{kind: contChunk, end: int64(len(s.data)), form: chunk.FormEscaped}
		}
		return s.search(r, req.Search)
	}
	if req.Fields != "" && kind == kindJSON {
		return s.details()
	}
	if rl.compact != nil && kind == kindJSON {
		if res, ok, err := s.compact(); ok || err != nil {
			return res, err
		}
	}
	if tokens <= rl.budget.Threshold {
		res := passThrough(Response{Body: s.data}, tokens)
		res.Record = withSizes(s.rec, s.data, tokens, telemetry.StrategyPassthrough, telemetry.OutcomePassthrough)
		return res, nil
	}
	return s.serveRoot(kind)
}

// shaper returns the shaping state of a request over data, under the time
// limit of shaping.
func (g *Guard) shaper(ctx context.Context, e *engine, rl *rules, req *Request, data []byte) *shaper {
	withTimeout := context.WithTimeout
	if g.shapeContext != nil {
		withTimeout = g.shapeContext
	}
	sctx, cancel := withTimeout(ctx, time.Duration(e.cfg.ShapeTimeout))
	return &shaper{ctx: sctx, parent: ctx, cancel: cancel, g: g, e: e, rl: rl, req: req, data: data}
}

// guard runs a strategy, turning a panic into the byte-bounded cut: a
// smaller, lossless response, recorded as a fallback.
func (s *shaper) guard(run func() (Result, error)) (res Result, err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if s.src != nil {
			// A window of the snapshot: the windowed continuation decides
			// (read more, or serve from the whole snapshot).
			panic(p)
		}
		reason := fmt.Sprintf("panic: %v", p)
		// The panic's value may hold anything (data, a backend's message):
		// it goes to the log and to telemetry, never to the client.
		s.g.logger.Error("ctxfit: shaping panicked; sending a byte cut", "endpoint", s.req.Endpoint,
			"panic", reason, "stack", string(debug.Stack()))
		s.fallback = true
		func() {
			defer func() {
				if recover() != nil {
					res, err = Result{}, errInternal
				}
			}()
			res, err = s.serveCut(ref{kind: contCut, end: int64(len(s.data))})
		}()
		if err == nil {
			res.Record.Outcome = telemetry.OutcomeFallback
			res.Record.Fallback = reason
		}
	}()
	res, err = run()
	if errors.Is(err, errTimeout) || errors.Is(err, context.DeadlineExceeded) && s.ctx.Err() != nil {
		if cut, ok := s.timedOut(); ok {
			return cut, nil
		}
		err = ErrShapeTimeout
	}
	return res, err
}

// timedOut answers a response whose shaping ran past Config.ShapeTimeout
// with a still lossless part that counts nothing (a token is at least one
// byte), recorded as a fallback, instead of an error that loses a readable
// answer: the byte-bounded cut from the response's start; for a
// continuation, its page, chunk or part with bytes counted for tokens;
// for an explicit request (a query, a search, fields, lines) the cut of
// its answer, or a search page bounded by bytes (shaper.lossless). It
// does not when the request itself is gone, when an explicit request's
// answer was not made in time (a query that ran past the limit has no
// answer to cut), or in a windowed continuation (which then reads the
// whole snapshot: see windowTry).
func (s *shaper) timedOut() (Result, bool) {
	if s.parent == nil || s.parent.Err() != nil || s.src != nil || s.lossless == nil && s.req.explicit() {
		return Result{}, false
	}
	s.ctx = s.parent // the cut keeps its snapshot under the request's own context
	s.fallback = true
	serve := s.lossless
	if serve == nil {
		serve = func() (Result, error) { return s.serveCut(ref{kind: contCut, end: int64(len(s.data))}) }
	}
	res, err := serve()
	if err != nil {
		return Result{}, false
	}
	res.Record.Outcome = telemetry.OutcomeFallback
	res.Record.Fallback = "shaping_timeout"
	return res, true
}

// sample records the estimator's error on a sample of responses when the
// counter is not exact.
func (e *engine) sample(body string, estimated int, rec *telemetry.Record) {
	if e.sampler == nil || !e.sampler.sample() {
		return
	}
	exact, err := budget.Exact(e.cfg.Encoding)
	if err != nil {
		return
	}
	re := telemetry.RelativeError(estimated, exact.Count(body))
	rec.EstimateError = &re
}

// lines serves the line range a request asks for.
func (s *shaper) lines() (Result, error) {
	text := view(s.data)
	s.measure(s.data)
	start, end := s.req.StartLine, s.req.EndLine
	if start == 0 {
		start = 1
	}
	if end == 0 {
		end = chunk.TotalLines(text)
	}
	from, to, err := chunk.LineSpan(text, start, end)
	if err != nil {
		return Result{}, fmt.Errorf("ctxfit: %w", err)
	}
	s.cutOf(from, to)
	r := ref{kind: contChunk, start: int64(from), end: int64(to), pos: int64(from), form: chunk.FormEscaped,
		line: int64(start), lines: int64(chunk.TotalLines(text))}
	res, err := s.serveText(r, layout{})
	if err == nil && res.Next == "" {
		res.Guidance = fmt.Sprintf("Showing lines %d-%d of %d.", start, start+newlines(s.data[from:max(from, to-1)], chunk.FormEscaped), r.lines)
	}
	return res, err
}

// details serves an explicit drill-down: fields=all, or named fields
// (dotted paths too) of an object; of a list, the fields of each item.
func (s *shaper) details() (Result, error) {
	fields := s.req.Fields
	out := s.data
	if fields != summary.FieldsAll {
		var err error
		if out, err = project(s.ctx, s.data, fields); err != nil {
			if s.ctx.Err() != nil {
				return Result{}, errTimeout
			}
			return Result{}, fmt.Errorf("ctxfit: %w", err)
		}
		// The projection is a new snapshot: its cursors point into it,
		// not into the response it was projected from.
		s.data, s.view, s.snap, s.id = out, "fields="+fields, nil, ""
		s.measure(out)
	}
	s.cutOf(0, len(s.data))
	tokens := budget.CountUpTo(s.e.counter, view(out), s.rl.budget.HardCap)
	if tokens <= s.rl.budget.HardCap {
		rec := withSizes(s.rec, out, tokens, telemetry.StrategyPassthrough, telemetry.OutcomePassthrough)
		return Result{Body: out, ContentType: jsonType, Shaped: fields != summary.FieldsAll, Strategy: telemetry.StrategyPassthrough, Record: rec}, nil
	}
	// Asked for explicitly, but over the hard cap: in pages, nothing left
	// out (no summary).
	start, end, _ := rawjson.Root(s.data)
	switch rawjson.KindOf(s.data[start]) {
	case rawjson.Object:
		return s.serveSeq(ref{kind: contMembers, end: int64(len(s.data)), pos: int64(rawjson.Space(s.data, start+1))}, layout{})
	case rawjson.Array:
		return s.serveSeq(ref{kind: contPage, end: int64(len(s.data)), pos: int64(rawjson.Space(s.data, start+1))}, layout{})
	}
	return s.serveValue(start, end)
}

// project applies a fields parameter: to an object, its fields; to an
// array, the same fields of each element that is an object.
func project(ctx context.Context, data []byte, fields string) ([]byte, error) {
	start, end, _ := rawjson.Root(data)
	switch data[start] {
	case '{':
		return summary.ServeDetailsContext(ctx, data[start:end], fields)
	case '[':
	default:
		return nil, fmt.Errorf("%w: fields names fields of an object or of a list's objects; this response is a JSON %s: leave fields out", summary.ErrUnknownField, rawjson.KindOf(data[start]))
	}
	out := []byte{'['}
	it, _ := rawjson.Open(data, start)
	n := 0
	for item, ok := it.Next(); ok; item, ok = it.Next() {
		if n > 0 {
			out = append(out, ',')
		}
		n++
		v := data[item.Start:item.End]
		if v[0] != '{' {
			out = append(out, v...)
			continue
		}
		p, err := summary.ServeDetailsContext(ctx, v, fields)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	return append(out, ']'), nil
}

// continuation serves a request that carries a cursor.
func (g *Guard) continuation(ctx context.Context, e *engine, rl *rules, req *Request, fetch Fetch) (_ Result, err error) {
	var p cursor.Payload
	if req.resumed {
		p, err = e.codec.OpenFor(req.Cursor, req.Subject)
	} else {
		p, err = e.codec.Decode(req.Cursor, cursor.Binding{Scope: req.scope(), Subject: req.Subject, Order: req.boundQuery(), Filters: req.Filters})
	}
	if err != nil {
		return Result{}, fmt.Errorf("ctxfit: %w", err)
	}
	defer func() { err = g.expiredIfGone(p, err) }()
	r, err := refOf(p)
	if err != nil {
		return Result{}, fmt.Errorf("ctxfit: %w", err)
	}
	req.status = int(r.status)
	if rr, ok := g.windowable(r, req); ok {
		if res, err, ok := g.continueWindowed(&windowed{ctx: ctx, e: e, rl: rl, req: req, r: r, rr: rr}); ok {
			return res, err
		}
	}
	var cacheHit *bool
	data, err := g.load(ctx, e, r, func(ctx context.Context) (Response, error) {
		resp, err := fetch(ctx)
		cacheHit = resp.CacheHit
		if err == nil && r.view == viewFormat && rl.compact != nil {
			// The chunks of a compact rendering continue the rendering.
			if resp.Body, err = rl.compact.rerender(ctx, resp.Body, req.Filters); err != nil {
				err = ErrDataChanged
			}
		}
		return resp, err
	})
	if err != nil {
		return Result{Record: telemetry.Record{CacheHit: cacheHit}}, err
	}
	if r.end > int64(len(data)) || r.bytes != 0 && r.bytes != int64(len(data)) {
		return Result{}, fmt.Errorf("ctxfit: %w", errBadRef)
	}
	release, err := e.admission.admit(ctx, req.Subject, len(data))
	if err != nil {
		return Result{Record: telemetry.Record{CacheHit: cacheHit}}, err
	}
	defer release()
	s := g.shaper(ctx, e, rl, req, data)
	defer s.cancel()
	s.snap, s.view = &r.snap, r.view
	s.format = pageFormat(req.Format, r.format)
	// The first response measured the snapshot; counting it again on every
	// continuation would make following a large response quadratic.
	s.rec = telemetry.Record{BytesBefore: len(data), TokensBefore: int(r.tokens), TokensBeforeEstimated: r.tokensEstimated, CacheHit: cacheHit}
	s.resumeOnTimeOut(r)
	res, err := s.guard(func() (Result, error) {
		switch {
		case req.Part != 0:
			return s.openPart(req.Part)
		case r.kind == contSearch:
			// A search continues by its cursor, with or without the search
			// repeated (a next link repeats it).
			return s.continueSearch(r, req.Search)
		case req.Search != nil:
			return s.search(r, req.Search)
		case req.Query != "" && r.view != "query="+req.Query:
			// A new query; a query's results continue by their cursors,
			// with or without the query repeated (a next link repeats it).
			if s.view != "" && !r.snap.stored {
				return Result{}, fmt.Errorf("%w: in replay mode a query runs over a response, not over a drill-down: pass a cursor of the response itself", ErrBadRequest)
			}
			s.view = ""
			return s.query(req.Query)
		}
		if r.kind == contDetails {
			if req.Fields == "" {
				return Result{}, fmt.Errorf("%w: a summary's details cursor needs fields: \"all\", or the fields to drill into", ErrBadRequest)
			}
			s.view = ""
			return s.details()
		}
		switch r.kind {
		case contPage, contMembers:
			return s.serveSeq(r, layout{})
		case contChunk:
			return s.serveText(r, layout{})
		case contCut:
			return s.serveCut(r)
		}
		return Result{}, fmt.Errorf("%w: this cursor opens the parts of a response: pass it with part set to a placeholder's \"ctxfit:part\"", ErrBadRequest)
	})
	res.Record.CacheHit = cacheHit
	return res, err
}

// resumeOnTimeOut makes the shaper's time-out answer (see
// shaper.timedOut) of the continuation of r the answer it continues with
// bytes counted for tokens: the first response of the part it opens, or
// its next page or chunk. A search, a query or a drill-down sets its own.
func (s *shaper) resumeOnTimeOut(r ref) {
	req := s.req
	switch {
	case req.Part != 0:
		s.lossless = func() (Result, error) { return s.openPart(req.Part) }
	case r.kind == contSearch, req.Search != nil, req.Query != "" && r.view != "query="+req.Query:
	case r.kind == contPage, r.kind == contMembers:
		s.lossless = func() (Result, error) { return s.serveSeq(r, layout{}) }
	case r.kind == contChunk:
		s.lossless = func() (Result, error) { return s.serveText(r, layout{}) }
	case r.kind == contCut:
		s.lossless = func() (Result, error) { return s.serveCut(r) }
	}
}

// openPart serves the first response of the value at offset part of the
// snapshot: a held-back value a placeholder named.
func (s *shaper) openPart(part int64) (Result, error) {
	if part <= 0 || part >= int64(len(s.data)) || rawjson.KindOf(s.data[part]) == rawjson.Invalid {
		return Result{}, errPart(part)
	}
	end, ok := rawjson.End(s.data, int(part))
	if !ok {
		return Result{}, errPart(part)
	}
	return s.serveValue(int(part), end)
}

// get and put call the store; a store that panics is unavailable, as one
// that fails (its panic value, which may hold anything, is logged as the
// store's error, never shown).
func (g *Guard) get(ctx context.Context, id string) (data []byte, ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			data, ok, err = nil, false, fmt.Errorf("store panicked: %v", p)
		}
	}()
	return g.store.Get(ctx, id)
}

func (g *Guard) put(ctx context.Context, id string, data []byte, ttl time.Duration) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store panicked: %v", p)
		}
	}()
	return g.store.Put(ctx, id, data, ttl)
}

// load returns the data a ref leads to: from the store, or (replay mode)
// from the handler, checked against the fingerprint.
func (g *Guard) load(ctx context.Context, e *engine, r ref, fetch Fetch) ([]byte, error) {
	if r.snap.stored {
		data, ok, err := g.get(ctx, r.snap.id)
		if err != nil {
			return nil, g.storeError(err)
		}
		if !ok {
			return nil, ErrSnapshotGone
		}
		return data, nil
	}
	resp, err := fetch(ctx)
	if err != nil {
		return nil, fetchError{err}
	}
	data := resp.Body
	if v, ok := strings.CutPrefix(r.view, "fields="); ok {
		if data, err = project(ctx, data, v); err != nil {
			return nil, ErrDataChanged
		}
	} else if v, ok := strings.CutPrefix(r.view, "query="); ok {
		if data, _, err = runQuery(ctx, data, v); err != nil {
			return nil, ErrDataChanged
		}
	}
	if fingerprint(data) != r.snap.id {
		return nil, ErrDataChanged
	}
	return data, nil
}

// expiredIfGone returns err, or [cursor.ErrExpired] when err is that the
// data behind p is gone and p is past its expiry: the codec accepts a
// cursor up to its clock skew after expiry, but its snapshot was kept for
// the cursor's lifetime only, and an expired cursor is cursor_expired,
// not cursor_stale.
func (g *Guard) expiredIfGone(p cursor.Payload, err error) error {
	if !errors.Is(err, ErrSnapshotGone) {
		return err
	}
	now := g.now()
	if !now.After(p.Expires) {
		return err
	}
	return fmt.Errorf("ctxfit: %w (it expired %v ago)", cursor.ErrExpired, now.Sub(p.Expires).Truncate(time.Second))
}

// Resume reads a cursor on its own, as an MCP continuation tool receives
// it, and returns the [Request] it continues: Endpoint (the tool name) as
// sealed in the cursor, Subject, and Cursor; in replay mode also Filters,
// the tool's arguments, when the cursor carries them. The cursor must
// verify, be unexpired, and have been issued for subject (the caller's MCP
// session or principal; "" for none); it is then not checked against
// Order or Filters. Pass the Request to [Guard.Handle] with a Fetch that
// runs the tool named by Endpoint with the arguments in Filters (replay
// mode calls it).
func (g *Guard) Resume(token, subject string) (Request, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return g.ResumeContext(ctx, token, subject)
}

// ResumeContext is [Guard.Resume] with a context, for reading arguments
// that a replay-mode cursor keeps in the store.
func (g *Guard) ResumeContext(ctx context.Context, token, subject string) (Request, error) {
	e := g.cur.Load()
	p, err := e.codec.OpenFor(token, subject)
	if err != nil {
		return Request{}, fmt.Errorf("ctxfit: %w", err)
	}
	r, err := refOf(p)
	if err != nil {
		return Request{}, fmt.Errorf("ctxfit: %w", err)
	}
	req := Request{Endpoint: p.Scope, Path: p.Scope, Subject: subject, Cursor: token, Block: int(r.block), resumed: true}
	if len(r.args) > 1 {
		switch r.args[0] {
		case argsInline:
			req.Filters = r.args[1:]
		case argsStored:
			args, ok, err := g.get(ctx, string(r.args[1:]))
			if err != nil {
				return Request{}, g.storeError(err)
			}
			if !ok {
				return Request{}, g.expiredIfGone(p, ErrSnapshotGone)
			}
			req.Filters = args
		}
	}
	return req, nil
}

// serveCut is the last resort: a byte-bounded slice of the data from
// r.pos, with a continuation cursor. It counts no tokens: a tiktoken token
// is at least one byte, so a response of at most HardCap bytes holds at
// most HardCap tokens.
func (s *shaper) serveCut(r ref) (Result, error) {
	size := max(s.rl.budget.HardCap-cutEnvelopeBytes, 16)
	start := int(r.pos)
	end := start
	n := 0
	for end < int(r.end) {
		_, w := utf8.DecodeRune(s.data[end:r.end])
		l := rawjson.EscapedLen(s.data[end : end+w])
		if n+l > size && end > start {
			break
		}
		n += l
		end += w
	}
	var next string
	if end < int(r.end) {
		nr := r
		nr.pos, nr.index = int64(end), r.index+1
		var err error
		if next, err = s.cursorFor(nr); err != nil {
			return Result{}, err
		}
	}
	out := []byte(`{"content":"`)
	out, _ = rawjson.Escape(out, s.data[start:end])
	out = append(out, `","chunkIndex":`...)
	out = strconv.AppendInt(out, r.index, 10)
	out = append(out, ',')
	out = appendCursor(out, "nextCursor", next)
	out = append(out, `,"metadata":{"offset":`...)
	out = strconv.AppendInt(out, int64(start), 10)
	out = append(out, `,"bytesInChunk":`...)
	out = strconv.AppendInt(out, int64(end-start), 10)
	if !utf8.Valid(s.data[start:end]) {
		out = append(out, `,"encoding":"utf-8+surrogateescape"`...)
	}
	out = append(out, "}}"...)
	tokens := len(out) // n bytes never hold more than n tokens
	if !s.fallback {
		// The counter is trusted: add the budget fields. After a panic it
		// may be what broke: the byte bound stands.
		out, tokens = withBudget(out, s.e.counter, s.rl.budget)
	}
	rec := withSizes(s.rec, out, min(len(out), tokens), telemetry.StrategyCut, telemetry.OutcomeShaped)
	rec.ChunkingUsed = true
	return Result{Body: out, ContentType: jsonType, Shaped: true, Strategy: telemetry.StrategyCut, Next: next, Record: rec,
		Guidance: fmt.Sprintf("Showing bytes %d-%d of %d (cut by size).", start+1, end, len(s.data))}, nil
}

// cutEnvelopeBytes bounds the bytes a cut's envelope adds to its content:
// field names, numbers, the cursor and the budget metadata.
const cutEnvelopeBytes = 600
