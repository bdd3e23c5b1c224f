package ctxfit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/mediatype"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Fetch runs the wrapped handler and returns its response. The Guard calls
// it at most once per [Guard.Handle], and not at all when a cursor can be
// served from the store. An error from Fetch is returned by Handle as it is.
type Fetch func(ctx context.Context) (Response, error)

// Handle answers one request: it serves a cursor from the store (store
// mode) or calls fetch for the handler's response and shapes it.
//
// Shaping, when the response is over the threshold:
//   - a JSON array, or a JSON object whose bulk is one array: a page fitted
//     to the budget, with a cursor to the next; an object keeps its other
//     fields and gains nextCursor and meta beside the paged array;
//   - another large JSON object: a summary with a drill-down link;
//   - text, or a JSON string that dominates the response: chunks;
//   - whatever no strategy brings under the hard cap: a byte-bounded cut
//     with a continuation cursor.
//
// No shaped response exceeds the hard cap by exact count. Bad input (a
// malformed, tampered, expired or foreign cursor, a bad limit, an unknown
// field) is an error that [ProblemOf] maps to a 400. Anything else that
// goes wrong while shaping (a panic, a parse failure, the time limit) falls
// back to the byte-bounded cut and is recorded, never failing the request.
func (g *Guard) Handle(ctx context.Context, req Request, fetch Fetch) (res Result, err error) {
	start := g.now()
	e := g.cur.Load()
	r := e.rulesFor(req.Endpoint)
	if req.Cursor != "" && !r.disabled {
		res, err = g.resume(ctx, e, r, req, fetch)
	} else {
		resp, ferr := fetch(ctx)
		if ferr != nil {
			return Result{}, ferr // the handler's error, not recorded
		}
		switch {
		case r.disabled:
			res.estimatedPassThrough(resp, telemetry.OutcomeBypass)
		case len(resp.Body) <= r.budget.Threshold && !req.explicit():
			// n bytes never hold more than n tokens: nothing to count or
			// shape. This is the common case, filled in place.
			outcome := telemetry.OutcomePassthrough
			if mediatype.Of(resp.ContentType) == mediatype.Other {
				outcome = telemetry.OutcomeBypass
			}
			res.estimatedPassThrough(resp, outcome)
		default:
			res, err = g.first(ctx, e, r, req, resp)
		}
		res.Record.CacheHit = resp.CacheHit
	}
	res.Record.RequestID = req.RequestID
	res.Record.Endpoint = req.Endpoint
	res.Record.Timestamp = start
	res.Record.Latency = max(g.since(start), 0)
	res.Record.HardCap = r.budget.HardCap
	if err != nil {
		var fe fetchError
		if errors.As(err, &fe) {
			return Result{}, fe.err
		}
		res.Record.Strategy = telemetry.StrategyError
		res.Record.Outcome = telemetry.OutcomeRejected
		g.emit(ctx, res.Record)
		return Result{Record: res.Record}, err
	}
	g.emit(ctx, res.Record)
	return res, nil
}

// explicit reports whether req asks for a line range or a drill-down,
// which are answered whatever the response's size.
func (req *Request) explicit() bool {
	return req.StartLine != 0 || req.EndLine != 0 || req.Fields != ""
}

// fetchError marks errors of the handler, which Handle returns unchanged
// and does not record.
type fetchError struct{ err error }

func (f fetchError) Error() string { return f.err.Error() }

func (g *Guard) emit(ctx context.Context, rec telemetry.Record) {
	if g.sink != nil {
		_ = g.sink.Record(context.WithoutCancel(ctx), rec)
	}
}

// resume answers a request with a cursor, recording whether the handler's
// response (replay mode) came from a cache.
func (g *Guard) resume(ctx context.Context, e *engine, r *rules, req Request, fetch Fetch) (Result, error) {
	var cacheHit *bool
	res, err := g.continuation(ctx, e, r, req, func(ctx context.Context) (Response, error) {
		resp, err := fetch(ctx)
		cacheHit = resp.CacheHit
		return resp, err
	})
	res.Record.CacheHit = cacheHit
	return res, err
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
func (res *Result) estimatedPassThrough(resp Response, outcome string) {
	*res = passThrough(resp, (len(resp.Body)+3)/4) // budget.Estimator without its margin
	res.Record.Outcome = outcome
	res.Record.OptimizationMetadata = estimatedMetadata
}

// estimatedMetadata marks a record whose token counts are estimates. It is
// shared: records' OptimizationMetadata is read-only by contract.
var estimatedMetadata = map[string]any{"tokensEstimated": true}

// kindOf tells JSON from text.
type bodyKind int

const (
	kindOther bodyKind = iota
	kindJSON
	kindText
)

func kindOf(resp Response) bodyKind {
	switch mediatype.Of(resp.ContentType) {
	case mediatype.JSON:
		if json.Valid(resp.Body) {
			return kindJSON
		}
		return kindText
	case mediatype.Text:
		return kindText
	case mediatype.None:
		if json.Valid(resp.Body) {
			return kindJSON
		}
		if utf8.Valid(resp.Body) {
			return kindText
		}
	}
	return kindOther
}

// first shapes a fresh response (no cursor) that may need it: one over
// the threshold in bytes, or an explicit request.
func (g *Guard) first(ctx context.Context, e *engine, r *rules, req Request, resp Response) (Result, error) {
	kind := kindOf(resp)
	if kind == kindOther {
		var res Result
		res.estimatedPassThrough(resp, telemetry.OutcomeBypass)
		return res, nil
	}
	// Line ranges and drill-downs are explicit requests.
	if req.StartLine != 0 || req.EndLine != 0 {
		return g.lines(ctx, e, r, req, resp)
	}
	body := string(resp.Body)
	tokens := e.counter.Count(body)
	rec := telemetry.Record{TokensBefore: tokens, BytesBefore: len(body)}
	g.sample(e, body, tokens, &rec)
	if req.Fields != "" && kind == kindJSON {
		return g.details(ctx, e, r, req, resp, tokens, rec)
	}
	if tokens <= r.budget.Threshold {
		res := passThrough(resp, tokens)
		res.Record = withSizes(rec, body, tokens, telemetry.StrategyPassthrough, telemetry.OutcomePassthrough)
		return res, nil
	}
	res, err := g.shapeGuarded(ctx, e, r, req, resp, kind, tokens, rec)
	if err != nil {
		return res, err
	}
	if r.compare {
		// A/B: record what shaping would have sent, send the original.
		rec := res.Record
		rec.Compare = true
		return Result{Body: resp.Body, ContentType: resp.ContentType, Strategy: telemetry.StrategyPassthrough, Record: rec}, nil
	}
	return res, nil
}

func withSizes(rec telemetry.Record, body string, tokens int, strategy, outcome string) telemetry.Record {
	rec.TokensAfter, rec.EstimatedTokens = tokens, tokens
	rec.BytesAfter, rec.ResponseBytes = len(body), len(body)
	rec.Strategy, rec.Outcome = strategy, outcome
	rec.ReductionPercent = telemetry.ReductionPercent(rec.TokensBefore, tokens)
	return rec
}

// sample records the estimator's error on a sample of responses when the
// counter is not exact.
func (g *Guard) sample(e *engine, body string, estimated int, rec *telemetry.Record) {
	if g.sampler == nil || !g.sampler.Sample() {
		return
	}
	exact, err := budget.Exact(e.cfg.Encoding)
	if err != nil {
		return
	}
	re := telemetry.RelativeError(estimated, exact.Count(body))
	rec.EstimateError = &re
}

// shapeGuarded runs the strategies under the time limit and recovers from
// panics; on either it falls back to the byte-bounded cut.
func (g *Guard) shapeGuarded(ctx context.Context, e *engine, r *rules, req Request, resp Response, kind bodyKind, tokens int, rec telemetry.Record) (Result, error) {
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		res, err := g.shape(ctx, e, r, req, resp, kind, rec)
		done <- outcome{res, err}
	}()
	timer := time.NewTimer(time.Duration(e.cfg.ShapeTimeout))
	defer timer.Stop()
	var reason string
	select {
	case o := <-done:
		if o.err == nil {
			return o.res, nil
		}
		if isBadInput(o.err) {
			return o.res, o.err
		}
		reason = o.err.Error()
	case <-timer.C:
		reason = "timeout"
	case <-ctx.Done():
		reason = "canceled"
	}
	res, err := g.cutAt(ctx, e, r, req, resp.Body, 0, 0, "", rec)
	if err != nil {
		return res, err
	}
	res.Record.Outcome = telemetry.OutcomeFallback
	res.Record.Fallback = reason
	return res, nil
}

// isBadInput reports errors that are the client's to fix (400s), as
// opposed to failures of shaping, which fall back.
func isBadInput(err error) bool {
	p := ProblemOf(err, Params{})
	return p.Status == 400 || p.Status == 503
}

// shape picks and runs the strategy for a response over the threshold.
func (g *Guard) shape(ctx context.Context, e *engine, r *rules, req Request, resp Response, kind bodyKind, rec telemetry.Record) (Result, error) {
	body := resp.Body
	if kind == kindText {
		if r.chunking {
			return g.chunkText(ctx, e, r, req, body, string(body), "text", "", rec)
		}
		return g.cutAt(ctx, e, r, req, body, 0, 0, "", rec)
	}
	switch firstByte(body) {
	case '[':
		if r.pagination {
			return g.page(ctx, e, r, req, body, nil, 0, "", rec)
		}
	case '{':
		if r.pagination {
			if path := arrayPath(body, r.arrayPath); path != nil {
				return g.page(ctx, e, r, req, body, path, 0, "", rec)
			}
		}
		if r.chunking {
			if field, text, ok := dominantString(body); ok {
				return g.chunkText(ctx, e, r, req, body, text, "field:"+field, "", rec)
			}
		}
		if r.summarize {
			res, err := g.summarize(ctx, e, r, req, resp, rec)
			if err == nil || isBadInput(err) {
				return res, err
			}
		}
	case '"':
		if r.chunking {
			if text, err := textOf(body, "string"); err == nil {
				return g.chunkText(ctx, e, r, req, body, text, "string", "", rec)
			}
		}
	}
	return g.cutAt(ctx, e, r, req, body, 0, 0, "", rec)
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// snapshot keeps body for continuations and returns the reference to seal
// into cursors: a store ID (store mode) or a fingerprint (replay mode).
func (g *Guard) snapshot(ctx context.Context, e *engine, body []byte) (string, error) {
	if e.cfg.Mode == ModeReplay {
		return fingerprint(body), nil
	}
	id := store.IDOf(body) // identical snapshots share one entry
	if err := g.store.Put(ctx, id, body, time.Duration(e.cfg.CursorTTL)); err != nil {
		if errors.Is(err, store.ErrTooLarge) {
			return fingerprint(body), nil // cannot keep it: fall back to replay for this response
		}
		return "", fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	}
	return "s:" + id, nil
}

func fingerprint(body []byte) string {
	sum := sha256.Sum256(body)
	return "f:" + base64.RawURLEncoding.EncodeToString(sum[:12])
}

// load returns the data a cursor's snapshot reference leads to: from the
// store, or (replay mode) from the handler, checked against the fingerprint.
func (g *Guard) load(ctx context.Context, ref string, fetch Fetch) ([]byte, error) {
	switch {
	case strings.HasPrefix(ref, "s:"):
		data, ok, err := g.store.Get(ctx, ref[2:])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
		}
		if !ok {
			return nil, ErrSnapshotGone
		}
		return data, nil
	case strings.HasPrefix(ref, "f:"):
		resp, err := fetch(ctx)
		if err != nil {
			return nil, fetchError{err}
		}
		if fingerprint(resp.Body) != ref {
			return nil, ErrDataChanged
		}
		return resp.Body, nil
	default:
		return nil, fmt.Errorf("%w (no data reference)", cursor.ErrInvalid)
	}
}

// continuation serves a request that carries a cursor.
func (g *Guard) continuation(ctx context.Context, e *engine, r *rules, req Request, fetch Fetch) (Result, error) {
	p, err := e.codec.Decode(req.Cursor, cursor.Expect{Scope: req.Endpoint, Subject: req.Subject, Order: req.Order, Filters: req.Filters})
	if err != nil {
		return Result{}, fmt.Errorf("ctxfit: %w", err)
	}
	sealed := p.Snapshot
	if p.Kind == cursor.KindChunk {
		sealed = chunk.SnapshotOf(p)
	}
	ref, part, _ := strings.Cut(sealed, "|")
	data, err := g.load(ctx, ref, fetch)
	if err != nil {
		return Result{}, err
	}
	// Counting the whole snapshot on every continuation would make following
	// a large response quadratic: count only far enough to tell whether it
	// was over the hard cap.
	rec := telemetry.Record{BytesBefore: len(data), TokensBefore: budget.CountUpTo(e.counter, string(data), r.budget.HardCap)}
	if p.Kind == cursor.KindPage {
		var path []string
		if part != "" {
			path = strings.Split(part, ".")
		}
		return g.page(ctx, e, r, req, data, path, p.Offset, sealed, rec)
	}
	if v, ok := strings.CutPrefix(part, "cut"); ok {
		if data, err = view(data, v); err != nil {
			return Result{}, fmt.Errorf("ctxfit: %w (%v)", cursor.ErrInvalid, err)
		}
		return g.cutView(ctx, e, r, req, data, p.Offset, p.Index, ref, v, rec)
	}
	text, err := textOf(data, part)
	if err != nil {
		return Result{}, fmt.Errorf("ctxfit: %w", err)
	}
	return g.chunkText(ctx, e, r, req, data, text, part, ref, rec)
}

// Resume reads a cursor on its own, as an MCP continuation tool receives it,
// and returns the [Request] it continues: Endpoint (the tool name), Order,
// Filters (the tool's arguments) and Subject as they were sealed in the
// cursor, with Cursor set. The cursor must verify and be unexpired, and its
// subject must equal subject (the caller's MCP session or principal; "" for
// none). Pass the Request to [Guard.Handle] with a Fetch that runs the tool
// named by Endpoint with the arguments in Filters (replay mode calls it).
func (g *Guard) Resume(token, subject string) (Request, error) {
	e := g.cur.Load()
	p, err := e.codec.Open(token)
	if err != nil {
		return Request{}, fmt.Errorf("ctxfit: %w", err)
	}
	if p.Subject != subject {
		return Request{}, fmt.Errorf("ctxfit: %w (it was issued for another subject)", cursor.ErrMismatch)
	}
	return Request{Endpoint: p.Scope, Subject: p.Subject, Order: p.Order, Filters: p.Filters, Cursor: token}, nil
}
