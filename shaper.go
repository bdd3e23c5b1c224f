package ctxfit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/telemetry"
)

// shaper is the state of one request's shaping: what every strategy
// shares. It is used by one goroutine.
type shaper struct {
	ctx    context.Context
	cancel context.CancelFunc
	// parent is the request's context, without the time limit of shaping
	// (see shaper.timedOut).
	parent context.Context
	g      *Guard
	e      *engine
	rl     *rules
	req    *Request
	data   []byte // the snapshot: the response body, or the view it was shaped from; or a window of it (see src)
	// base is the offset in the snapshot of data[0]: 0 unless data is a
	// window. Refs hold offsets in the snapshot; data is indexed by an
	// offset less base.
	base int64
	// src, in a continuation that reads a window of the snapshot, is where
	// more of it is read from (see window.go); size is then the
	// snapshot's length.
	src    *rangeSource
	size   int64
	try    int    // the windowed continuation's try (see loadPage)
	view   string // in replay mode, the drill-down data was made from; "" for the body
	snap   *snapRef
	id     string // data's content ID, once computed (see contentID)
	format string // of pages: FormatTOON, or "" for JSON
	rec    telemetry.Record
	// fallback is set once a strategy panicked (the byte cut then counts
	// nothing) or ran past its time limit (what is answered then counts
	// bytes: see shaper.counter).
	fallback bool
	// stranded is set when a next cursor could not be issued (see
	// errNoContinuation).
	stranded bool
	// lossless, once an explicit request's answer is known (a query's
	// results, a projection, a line range, a search), answers its cheap
	// still-lossless part when shaping runs past its time limit: a byte
	// cut of the answer, or a byte-bounded search page (see
	// shaper.timedOut). It runs under the request's own context.
	lossless func() (Result, error)
}

// cutOf makes the shaper's time-out answer the byte cut of
// data[start:end], the answer an explicit request asked for.
func (s *shaper) cutOf(start, end int) {
	r := ref{kind: contCut, start: int64(start), pos: int64(start), end: int64(end)}
	s.lossless = func() (Result, error) { return s.serveCut(r) }
}

// Budget constants of shaped responses (and [MinHardCap]).
const (
	// minPageTokens is the smallest budget a page's content gets, whatever
	// the threshold.
	minPageTokens = 200
)

// errOverCap is what a strategy's finish returns when what it built is
// over the hard cap by exact count; the strategy then builds less.
var errOverCap = errors.New("ctxfit: over the hard cap")

// errTimeout is returned when shaping runs past Config.ShapeTimeout.
var errTimeout = errors.New("ctxfit: shaping took longer than the time limit")

func (s *shaper) counter() budget.Counter {
	if s.fallback {
		return byteCount{}
	}
	return s.e.counter
}

// byteCount counts a text's bytes: an upper bound of its tokens (a token is
// at least one byte) that costs nothing, for what shaping answers once it
// ran past its time limit (see shaper.timedOut).
type byteCount struct{}

func (byteCount) Count(text string) int { return len(text) }

// count returns the exact count of b, or a number over limit when it is
// over limit (counting stops there); past the time limit, its bytes.
func (s *shaper) count(b []byte, limit int) int {
	return budget.CountUpTo(s.counter(), view(b), limit)
}

// measure sets the record's size before shaping for data: its exact token
// count up to the hard cap, which is all any decision needs; beyond it an
// estimate, scaled from an exact count of a prefix and marked as such, so
// that no request counts a large response whole.
func (s *shaper) measure(data []byte) {
	n, read := budget.CountPrefix(s.e.counter, view(data), s.rl.budget.HardCap)
	s.rec.TokensBefore, s.rec.BytesBefore, s.rec.TokensBeforeEstimated = n, len(data), false
	if n <= s.rl.budget.HardCap || read >= 1 {
		return
	}
	// Past the hard cap the decision is made; the tokens of the whole are
	// estimated from the share counted so far (a hard cap's worth, tens of
	// KB), not counted again. A counter that does not say how far it read
	// has a prefix counted instead.
	if read <= 0 {
		p := min(len(data), estimatePrefix)
		for p < len(data) && !utf8.RuneStart(data[p]) {
			p++
		}
		n, read = s.e.counter.Count(view(data[:p])), float64(p)/float64(len(data))
	}
	est := int(float64(n) / max(read, 1e-9))
	s.rec.TokensBefore, s.rec.TokensBeforeEstimated = max(est, s.rl.budget.HardCap+1), read < 1
}

// estimatePrefix is the prefix measure counts to estimate a response's
// tokens beyond the hard cap when its counter cannot say how far it read.
const estimatePrefix = 64 << 10

// view is b as a string without a copy, for counting: b is not modified
// while the string is in use.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// contentID is the ID of the data's content: the store ID of a snapshot
// and the fingerprint of replay mode (the same digest), computed once.
func (s *shaper) contentID() string {
	if s.snap != nil {
		return s.snap.id
	}
	if s.id == "" {
		s.id = store.IDOf(s.data)
	}
	return s.id
}

// alive reports the context's error, if any: every loop checks it.
func (s *shaper) alive() error {
	if err := s.ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return errTimeout
		}
		return err
	}
	return nil
}

// pageBudget is the token budget of a page's content: the threshold less
// room for the envelope.
func (s *shaper) pageBudget(envelope int) int {
	return max(s.rl.budget.Threshold-envelope, minPageTokens)
}

// keep makes the snapshot continuations find: a store entry (store mode)
// or a fingerprint of the response (replay mode). It runs once, when a
// first cursor is issued.
func (s *shaper) keep() (snapRef, error) {
	if s.snap != nil {
		return *s.snap, nil
	}
	var ref snapRef
	if s.e.cfg.Mode == ModeReplay && !s.req.Unrepeatable {
		ref = snapRef{id: s.contentID()}
	} else {
		id := s.contentID() // identical snapshots share one entry
		err := s.g.put(s.storeCtx(), id, s.data, time.Duration(s.e.cfg.CursorTTL))
		switch {
		case (errors.Is(err, store.ErrTooLarge) || errors.Is(err, store.ErrFull)) && s.req.Unrepeatable:
			// No room for it, and the handler must not run again.
			return snapRef{}, errNoContinuation
		case errors.Is(err, store.ErrTooLarge), errors.Is(err, store.ErrFull):
			// No room for it (now): this response continues as in replay
			// mode, by running the handler again.
			ref = snapRef{id: id}
		case err != nil:
			return snapRef{}, s.storeFailed(err)
		default:
			ref = snapRef{stored: true, id: id}
		}
	}
	if !ref.stored && s.view != "" && len(s.view) > maxCarried {
		return snapRef{}, fmt.Errorf("%w: the fields or query parameter is longer than %d bytes; name fewer fields or shorten the query", ErrBadRequest, maxCarried)
	}
	s.snap = &ref
	return ref, nil
}

// fingerprint is the content ID of body: what a replay-mode continuation
// checks the handler's new response against.
func fingerprint(body []byte) string { return store.IDOf(body) }

// cursorFor seals r into a cursor for this request.
func (s *shaper) cursorFor(r ref) (string, error) {
	snap, err := s.keep()
	if err != nil {
		return "", err
	}
	r.snap = snap
	r.block = int64(s.req.Block)
	r.tokens, r.tokensEstimated = int64(s.rec.TokensBefore), s.rec.TokensBeforeEstimated
	r.bytes = s.snapLen()
	r.format = s.format
	r.status = int64(s.req.status)
	if !snap.stored || strings.HasPrefix(s.view, "query=") {
		// A query's results carry their query in store mode too, so that
		// a continuation that repeats it is told from a new one.
		r.view = s.view
	}
	if !snap.stored {
		if r.args, err = s.carry(s.req.Filters); err != nil {
			return "", err
		}
	}
	tok, err := s.e.codec.Encode(r.payload(s.req))
	if err != nil {
		return "", fmt.Errorf("ctxfit: issuing a cursor: %w", err)
	}
	return tok, nil
}

// nextCursor is cursorFor for a next page or chunk: when the response
// cannot be continued now, it is "" and the result says so (stranded).
func (s *shaper) nextCursor(r ref) (string, error) {
	tok, err := s.cursorFor(r)
	if errors.Is(err, errNoContinuation) {
		s.stranded = true
		return "", nil
	}
	return tok, err
}

// carry returns what a replay-mode cursor carries of the request's
// filters (an MCP tool's arguments), so that a continuation can run the
// tool again: the canonical filters themselves when they are small, else
// the ID under which they are kept in the store.
func (s *shaper) carry(filters []byte) ([]byte, error) {
	if len(filters) == 0 {
		return nil, nil
	}
	if len(filters) <= maxCarried {
		return append([]byte{argsInline}, filters...), nil
	}
	id := store.IDOf(filters)
	if err := s.g.put(s.storeCtx(), id, filters, time.Duration(s.e.cfg.CursorTTL)); err != nil {
		if errors.Is(err, store.ErrTooLarge) || errors.Is(err, store.ErrFull) {
			return nil, errNoContinuation
		}
		return nil, s.storeFailed(err)
	}
	return append([]byte{argsStored}, id...), nil
}

// storeFailed is the error of a store call made while shaping: a time-out
// (errTimeout, which answers a lossless cut under the request's own
// context: see shaper.timedOut) when the call failed because shaping ran
// past its time limit, else the store's failure (a 503).
func (s *shaper) storeFailed(err error) error {
	if errors.Is(err, context.DeadlineExceeded) && s.ctx.Err() != nil && s.parent != nil && s.parent.Err() == nil {
		return errTimeout
	}
	return s.g.storeError(err)
}

// storeCtx is the request's context, telling the store whose snapshot it
// keeps (each subject has a share of the store).
func (s *shaper) storeCtx() context.Context {
	return store.WithSubject(s.ctx, s.req.Subject)
}

// errNoContinuation: the response cannot be continued now (the arguments
// it would need are too large for a cursor, or its handler must not run
// again, and the store has no room): what fits is sent without a cursor,
// and the guidance says so.
var errNoContinuation = errors.New("ctxfit: cannot continue this response now")

// How a cursor carries arguments: the first byte says.
const (
	argsInline byte = 1
	argsStored byte = 2
)

// finish adds the budget fields to a shaped body and counts it exactly;
// errOverCap when it is over the hard cap.
func (s *shaper) finish(out []byte, strategy telemetry.Strategy) (Result, error) {
	out, tokens := withBudget(out, s.counter(), s.rl.budget)
	if tokens > s.rl.budget.HardCap {
		return Result{}, errOverCap
	}
	rec := withSizes(s.rec, out, tokens, strategy, telemetry.OutcomeShaped)
	if rec.TokensBefore > s.rl.budget.HardCap {
		rec.Outcome = telemetry.OutcomeOversize
	}
	switch strategy {
	case telemetry.StrategyPagination:
		rec.PaginationUsed = true
	case telemetry.StrategySummary:
		rec.SummarizationUsed = true
	case telemetry.StrategyChunking, telemetry.StrategyCut:
		rec.ChunkingUsed = true
	}
	return Result{Body: out, ContentType: jsonType, Shaped: true, Strategy: strategy, Record: rec}, nil
}

const jsonType = "application/json"

func withSizes(rec telemetry.Record, body []byte, tokens int, strategy telemetry.Strategy, outcome telemetry.Outcome) telemetry.Record {
	rec.TokensAfter, rec.EstimatedTokens = tokens, tokens
	rec.BytesAfter, rec.ResponseBytes = len(body), len(body)
	rec.Strategy, rec.Outcome = strategy, outcome
	rec.ReductionPercent = telemetry.ReductionPercent(rec.TokensBefore, tokens)
	return rec
}

// withBudget adds estimatedTokens, budgetUsed and budgetRemaining to the
// last object of a shaped response (its meta or metadata), and returns the
// response with its exact count. estimatedTokens is that count: the whole
// response's, the three fields included.
func withBudget(out []byte, c budget.Counter, b budget.Budget) ([]byte, int) {
	end := bytes.LastIndexByte(out, '}')
	if end < 0 {
		return out, c.Count(string(out))
	}
	at := end
	if prev := bytes.LastIndexByte(out[:end], '}'); prev >= 0 && len(bytes.TrimSpace(out[prev+1:end])) == 0 {
		at = prev // the response ends with its meta object: add the fields there
	}
	// The fields count themselves: guess the total from the parts, then
	// count the whole; a guess off by the merges at the seam takes another
	// round. budgetUsed has a fixed width, so only a number gaining a digit
	// can move the count again; should no count describe itself, the
	// metadata is off by a token and n is still the response's exact count.
	n := c.Count(string(out))
	n += c.Count(budgetFields(b.Usage(n)))
	res := make([]byte, 0, len(out)+96)
	for range 4 {
		res = append(res[:0], out[:at]...)
		res = append(res, budgetFields(b.Usage(n))...)
		res = append(res, out[at:]...)
		got := c.Count(string(res))
		if got == n {
			break
		}
		n = got
	}
	return res, n
}

func budgetFields(u budget.Usage) string {
	return `,"estimatedTokens":` + strconv.Itoa(u.EstimatedTokens) + `,"budgetUsed":` +
		strconv.FormatFloat(u.BudgetUsed, 'f', 3, 64) + `,"budgetRemaining":` + strconv.Itoa(u.BudgetRemaining)
}

// placeholder is what stands in a shaped response for a value held back:
// a small object of ctxfit's own, whose "ctxfit:part" is the value's
// offset in the snapshot, to pass as the part parameter with the
// response's cursor. start and end are offsets in s.data.
func (s *shaper) appendPlaceholder(dst []byte, start, end int) []byte {
	v := s.data[start:end]
	dst = append(dst, `{"ctxfit:part":`...)
	dst = strconv.AppendInt(dst, int64(start)+s.base, 10)
	dst = append(dst, `,"kind":"`...)
	dst = append(dst, rawjson.KindOf(v[0]).String()...)
	dst = append(dst, '"')
	switch rawjson.KindOf(v[0]) {
	case rawjson.Array:
		dst = append(dst, `,"items":`...)
		dst = strconv.AppendInt(dst, int64(items(v)), 10)
	case rawjson.Object:
		dst = append(dst, `,"members":`...)
		dst = strconv.AppendInt(dst, int64(items(v)), 10)
	}
	dst = append(dst, `,"bytes":`...)
	dst = strconv.AppendInt(dst, int64(len(v)), 10)
	return append(dst, '}')
}

// items counts the elements or members of the valid container v.
func items(v []byte) int {
	return countFrom(v, rawjson.Space(v, 1), v[0] == '{')
}

// partCursor is the cursor that opens the parts of a response which has
// no next cursor.
func (s *shaper) partCursor() (string, error) {
	return s.nextCursor(ref{kind: contParts, end: s.snapLen()})
}

// appendKey appends a JSON member name and colon.
func appendKey(dst []byte, key string) []byte {
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendCursor appends "name":"cursor" or "name":null.
func appendCursor(dst []byte, name, tok string) []byte {
	dst = appendKey(dst, name)
	if tok == "" {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = append(dst, tok...)
	return append(dst, '"')
}

// errNotFound is the error of a part that names no value.
func errPart(part int64) error {
	return fmt.Errorf("%w: part %d is not a value of this response; pass the \"ctxfit:part\" number of a placeholder unchanged", ErrPart, part)
}
