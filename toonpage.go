package ctxfit

import (
	"fmt"

	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/telemetry"
	"github.com/ctxfit/ctxfit/toon"
)

// toonPage serves the page of the array r continues written as TOON
// (FormatTOON): as many items as their TOON takes within budget tokens,
// at most limit. ok is false when TOON does not pay for this page (an item
// it cannot write exactly, an item too large for a page, a page no smaller
// than its JSON): the caller writes it as JSON.
func (s *shaper) toonPage(r ref, lay layout, budget, limit int) (Result, bool, error) {
	// The candidates: what a JSON page of twice the budget holds, since
	// TOON takes about a third fewer tokens on tables.
	pg, err := s.fillSeq(r, false, 2*budget, limit, 2*budget)
	if err != nil {
		return Result{}, false, err
	}
	if len(pg.pieces) == 0 {
		return Result{}, false, nil
	}
	for _, p := range pg.pieces {
		if p.hold {
			return Result{}, false, nil
		}
	}
	encode := func(k int) ([]byte, int, error) {
		arr := []byte{'['}
		for i, p := range pg.pieces[:k] {
			if i > 0 {
				arr = append(arr, ',')
			}
			arr = append(arr, s.data[p.start:p.end]...)
		}
		t, err := toon.Encode(nil, append(arr, ']'), nil)
		if err != nil {
			return nil, 0, err
		}
		return t, s.count(t, budget), nil
	}
	// The most items whose TOON fits the budget: a binary search.
	lo, hi := 0, len(pg.pieces)
	var text []byte
	for lo < hi {
		m := (lo + hi + 1) / 2
		t, n, err := encode(m)
		if err != nil {
			return Result{}, false, nil // TOON cannot write these items exactly
		}
		if n <= budget {
			lo, text = m, t
		} else {
			hi = m - 1
		}
	}
	if lo == 0 {
		return Result{}, false, nil
	}
	jsonTokens := 0
	for _, p := range pg.pieces[:lo] {
		jsonTokens += p.tokens + 1
	}
	if s.count(text, budget) >= jsonTokens {
		return Result{}, false, nil // no smaller than the JSON
	}
	k := lo
	page := seqPage{pieces: pg.pieces[:k], count: k, next: pg.next, done: pg.done}
	if k < len(pg.pieces) {
		page.next, page.done = pg.pieces[k].start, false
	}
	res, err := s.toonResult(r, lay, page, text)
	if err == errOverCap {
		return Result{}, false, nil
	}
	return res, err == nil, err
}

// toonResult writes the envelope of a TOON page.
func (s *shaper) toonResult(r ref, lay layout, pg seqPage, text []byte) (Result, error) {
	var next string
	if !pg.done {
		nr := r
		nr.pos, nr.offset, nr.index = int64(pg.next)+s.base, r.offset+int64(pg.count), r.index+1
		var err error
		if next, err = s.nextCursor(nr); err != nil {
			return Result{}, err
		}
	}
	var parts string
	if lay.parts && next == "" {
		var err error
		if parts, err = s.partCursor(); err != nil {
			return Result{}, err
		}
	}
	out := make([]byte, 0, len(text)+512)
	out = append(out, '{')
	if lay.outline != nil {
		out = appendKey(out, "outline")
		out = append(out, lay.outline...)
		out = append(out, ',')
	}
	out = appendKey(out, "toon")
	out = append(out, '"')
	out, _ = rawjson.Escape(out, text)
	out = append(out, `",`...)
	out = appendPageMeta(out, next, parts, r, pg)
	out = append(out, `,"format":"toon"`...)
	out = appendPlace(out, lay, r)
	out = append(out, "}}"...)
	res, err := s.finish(out, telemetry.StrategyPagination)
	if err != nil {
		return res, err
	}
	res.Next = next
	if lay.parts {
		res.PartCursor = cmpOr(parts, next)
	}
	res.Record.ItemCount = pg.count
	res.Record.OptimizationMetadata = map[string]any{"pageSize": pg.count, "totalCount": r.total, "offset": r.offset, "format": FormatTOON}
	what := cmpOr(lay.path, "items")
	res.Guidance = fmt.Sprintf("Showing %s %s-%s of %s as TOON (%s tokens; budget %s).", what, thousands(int(r.offset)+1),
		thousands(int(r.offset)+pg.count), thousands(int(r.total)), thousands(res.Record.TokensAfter), thousands(s.rl.budget.Threshold))
	res.Guidance += s.strandedNote()
	return res, nil
}
