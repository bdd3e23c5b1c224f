package ctxfit

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/telemetry"
)

// A continuation of a stored snapshot reads only what it sends, when the
// store can read part of an entry ([store.RangeReader]: the in-memory
// store without a copy, Redis with GETRANGE): a page or chunk from a 10 MB
// snapshot then costs what one from a 100 KB snapshot does.
//
// The shaper's data is then a window of the snapshot, s.base its offset.
// A text's chunk knows the bytes it needs (the cut's window, then the
// chunk), and reads them as it goes ([shaper.text]). A page reads a window
// from its cursor's position sized for its budget; a page that reaches the
// window's end before it is full, or whose separator starts before the
// window, panics with shortWindow, and the page is made again from a
// window four times as long. The last chunk of a JSON string reads, as
// well, what lies around the string, to tell whether it is the whole
// response. Whatever else a continuation asks (a part, a search, a new
// query, a drill-down) reads the whole snapshot, as does a cursor issued
// before cursors carried the snapshot's length.

// rangeSource is where a windowed continuation reads its snapshot.
type rangeSource struct {
	ctx context.Context // the request's, without the shaping deadline
	rr  store.RangeReader
	id  string
}

// shortWindow is the panic value of a page that needs more of the
// snapshot than its window holds.
type shortWindow struct{}

// windowFailed is the panic value of a failed read of a window: err is
// what the request fails with.
type windowFailed struct{ err error }

// Windows of a page: the bytes read before the cursor's position (for the
// separator a page reports in meta.lead), and the bytes read after it per
// token of the page's budget, on the first try; each retry reads four
// times as much, and after maxWindowTries the whole snapshot is read.
const (
	windowBack          = 256
	windowBytesPerToken = 8
	windowSlack         = 4096
	maxWindowTries      = 4
)

// snapLen is the length of the snapshot.
func (s *shaper) snapLen() int64 {
	if s.src != nil {
		return s.size
	}
	return int64(len(s.data))
}

// needMore panics with shortWindow when s.data is a window that ends
// before end (an offset in the snapshot), or starts after the snapshot
// does when end is 0.
func (s *shaper) needMore(end int64) {
	if s.src == nil {
		return
	}
	if end == 0 && s.base > 0 || s.base+int64(len(s.data)) < end {
		panic(shortWindow{})
	}
}

// load makes s.data hold at least the bytes [lo, hi) of the snapshot.
func (s *shaper) load(lo, hi int64) {
	if s.src == nil || lo >= s.base && hi <= s.base+int64(len(s.data)) {
		return
	}
	data, ok, err := s.src.rr.GetRange(store.WithSubject(s.src.ctx, s.req.Subject), s.src.id, lo, hi)
	switch {
	case err != nil:
		panic(windowFailed{s.g.storeError(err)})
	case !ok:
		panic(windowFailed{ErrSnapshotGone})
	case int64(len(data)) != hi-lo:
		panic(windowFailed{fmt.Errorf("ctxfit: %w", errBadRef)}) // shorter than the cursor says
	}
	s.data, s.base = data, lo
}

// text returns the bytes [from, to) of the text r continues, reading them
// when s.data is a window that does not hold them.
func (s *shaper) text(r ref, from, to int) []byte {
	lo, hi := r.start+int64(from), r.start+int64(to)
	s.load(lo, hi)
	return s.data[lo-s.base : hi-s.base]
}

// loadPage reads the window of the page r continues, for a page of budget
// tokens, on the try'th try.
func (s *shaper) loadPage(r ref, budget, try int) {
	if s.src == nil {
		return
	}
	grow := int64(1) << (2 * try)
	s.load(max(r.start, r.pos-windowBack*grow), min(r.end, r.pos+(int64(budget)*windowBytesPerToken+windowSlack)*grow))
}

// windowable reports whether the continuation req of r can be served from
// windows of its snapshot, and the store to read them from.
func (g *Guard) windowable(r ref, req *Request) (store.RangeReader, bool) {
	rr, ok := g.store.(store.RangeReader)
	if !ok || !r.snap.stored || r.bytes == 0 || req.Part != 0 || req.Search != nil || r.kind == contSearch ||
		req.Query != "" && r.view != "query="+req.Query {
		return nil, false
	}
	switch r.kind {
	case contPage, contMembers:
		return rr, true
	case contChunk:
		return rr, true
	}
	return nil, false
}

// windowed is a continuation to serve from windows of its snapshot: the
// request, its rules, the ref its cursor leads to, and the store that
// reads the windows. The tries of continueWindowed share it.
type windowed struct {
	ctx context.Context // the request's, without the shaping deadline
	e   *engine
	rl  *rules
	req *Request
	r   ref
	rr  store.RangeReader
}

// continueWindowed serves the continuation w from windows of its
// snapshot. ok is false when it cannot (a page whose windows stay too
// short, a strategy that panicked): the caller reads the whole snapshot.
func (g *Guard) continueWindowed(w *windowed) (res Result, err error, ok bool) {
	// A window is bounded by its page's or chunk's budget, not by the
	// snapshot: a chunk's reads at most 128 bytes a token (chunk.Window).
	release, err := w.e.admission.admit(w.ctx, w.req.Subject, int(min(w.r.bytes, int64(w.rl.budget.HardCap)*128+2*windowSlack)))
	if err != nil {
		return Result{}, err, true
	}
	defer release()
	src := &rangeSource{ctx: w.ctx, rr: w.rr, id: w.r.snap.id}
	for try := range maxWindowTries {
		res, err, again := g.windowTry(w, src, try)
		switch {
		case !again:
			return res, err, true
		case err != nil:
			return Result{}, nil, false // not a short window: serve it whole
		}
	}
	return Result{}, nil, false
}

// errWindowPanic marks a windowed try that panicked otherwise than for a
// short window.
var errWindowPanic = fmt.Errorf("ctxfit: a windowed continuation panicked")

// windowTry is one try of continueWindowed, reading from src: again is set
// when the window was too short (err nil), the strategy panicked (err
// errWindowPanic) or ran past the time limit (err ErrShapeTimeout).
func (g *Guard) windowTry(w *windowed, src *rangeSource, try int) (res Result, err error, again bool) {
	r, req := w.r, w.req
	s := g.shaper(w.ctx, w.e, w.rl, req, nil)
	defer s.cancel()
	s.src, s.size, s.try = src, r.bytes, try
	s.snap, s.view = &r.snap, r.view
	s.format = pageFormat(req.Format, r.format)
	s.rec = telemetry.Record{BytesBefore: int(r.bytes), TokensBefore: int(r.tokens), TokensBeforeEstimated: r.tokensEstimated}
	defer func() {
		switch p := recover().(type) {
		case nil:
		case shortWindow:
			res, err, again = Result{}, nil, true
		case windowFailed:
			res, err, again = Result{}, p.err, false
		default:
			res, err, again = Result{}, errWindowPanic, true
		}
	}()
	res, err = s.guard(func() (Result, error) {
		if r.kind == contChunk {
			return s.serveText(r, layout{})
		}
		return s.serveSeq(r, layout{})
	})
	if errors.Is(err, ErrShapeTimeout) && w.ctx.Err() == nil {
		// Past the time limit: the whole snapshot answers the part it
		// continues with (see shaper.timedOut), not an error.
		return Result{}, err, true
	}
	return res, err, false
}
