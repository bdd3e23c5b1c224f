package ctxfit

import (
	"fmt"
	"strconv"

	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/pagination"
	"github.com/ctxfit/ctxfit/telemetry"
)

// A sequence is an array's elements or an object's members, served in
// pages: each page holds the original bytes of as many items as fit, from
// the first item's start to the last item's end (separators and white
// space between them included), with any value too large for a page held
// back behind a placeholder. Its cursor leads to the next page.
//
// An array page (pagination.Page) is
//
//	{"items":[...],"nextCursor":"..."|null,"meta":{"totalCount":500,"pageSize":44,"hasMore":true,"offset":0,...}}
//
// and an object page the same with "members":{...}. meta.lead and
// meta.tail, when present, are the bytes before the first item and after
// the last one that a compact container would not have ("[\n  " and
// "\n]"): with them, the pages give back the container byte for byte.

// piece is one item of a page: its span, and the span of its value when
// the value is held back.
type piece struct {
	start, end  int
	hold        bool
	value, vend int
	tokens      int
}

// seqPage is one page of a sequence, as built before its envelope.
type seqPage struct {
	pieces []piece
	next   int  // position of the next item, or of the closing bracket
	done   bool // no item after this page
	count  int  // items read, the page's own
}

// fillSeq reads items of the container r continues from r.pos, as many as
// fit budget tokens and limit items. A value over hold tokens (members) or
// over the page (elements) is held back.
//
// The page's offsets are in s.data. When s.data is a window that ends
// before the container does, a page that reaches its end panics with
// shortWindow (see window.go): the window is too short to tell.
func (s *shaper) fillSeq(r ref, object bool, budget, limit, hold int) (seqPage, error) {
	it := rawjson.At(s.data, int(r.pos-s.base), object)
	var pg seqPage
	used := 0
	for len(pg.pieces) < limit {
		if err := s.alive(); err != nil {
			return pg, err
		}
		at := it.Pos()
		item, ok := it.Next()
		if !ok {
			if it.Err() {
				s.needMore(r.end)
				return pg, fmt.Errorf("%w (the data is not valid JSON where it points)", cursor.ErrInvalid)
			}
			pg.next, pg.done = it.Pos(), true
			return pg, nil
		}
		p := piece{start: item.Start, end: item.End, value: item.Value, vend: item.End}
		room := budget - used
		lim := room
		if object {
			lim = min(room, hold)
		}
		t := s.count(s.data[item.Start:item.End], lim)
		if t > lim {
			tooBig := len(pg.pieces) == 0 || (object && hold <= room)
			if !tooBig {
				pg.next = at // it starts the next page
				return pg, nil
			}
			if s.holdable(item.Value, item.End) {
				p.hold = true
				var ph []byte
				ph = append(ph, s.data[item.Start:item.Value]...)
				ph = s.appendPlaceholder(ph, item.Value, item.End)
				t = s.count(ph, budget)
			}
			if used+t > budget && len(pg.pieces) > 0 {
				pg.next = at
				return pg, nil
			}
		}
		p.tokens = t
		used += t + 1 // and a separator
		pg.pieces = append(pg.pieces, p)
		pg.count++
	}
	pg.next = it.Pos()
	if pg.next >= len(s.data) {
		s.needMore(r.end)
	}
	pg.done = pg.next >= len(s.data) || s.data[pg.next] == ']' || s.data[pg.next] == '}'
	return pg, nil
}

// holdable reports whether the value data[start:end] can be held back: any
// value but a short literal.
func (s *shaper) holdable(start, end int) bool {
	return end-start > 16
}

// appendPieces writes the page's items as they are in the data, with held
// values replaced by placeholders.
func (s *shaper) appendPieces(dst []byte, ps []piece) []byte {
	for i, p := range ps {
		if i > 0 {
			dst = append(dst, s.data[ps[i-1].end:p.start]...)
		}
		if p.hold {
			dst = append(dst, s.data[p.start:p.value]...)
			dst = s.appendPlaceholder(dst, p.value, p.vend)
			continue
		}
		dst = append(dst, s.data[p.start:p.end]...)
	}
	return dst
}

// layout is what a first response adds around a page or chunk: the
// outline of the value the sequence or text sits in, with it held back.
type layout struct {
	outline []byte // raw JSON, or nil
	parts   bool   // the outline holds placeholders besides the sequence's
	path    string // where the sequence or text is in the outline, e.g. "data.items"
	details string // of a text: the details cursor to the original it renders (see shaper.compactChunks), or ""
}

// serveSeq serves the page of the container r continues. r.offset is the
// number of the next item, r.index the page number, r.total the number of
// items (computed on the first page when zero).
func (s *shaper) serveSeq(r ref, lay layout) (Result, error) {
	object := r.kind == contMembers
	if r.offset == 0 {
		r.total = int64(countFrom(s.data, int(r.pos-s.base), object))
	}
	limit, err := s.limit()
	if err != nil {
		return Result{}, err
	}
	if object && s.req.Limit == 0 {
		limit = 1 << 30 // members are bounded by tokens only, unless asked
	}
	envelope := 160 // two cursors and the meta fields, about
	if lay.outline != nil {
		envelope += s.counter().Count(string(lay.outline))
	}
	budget := s.pageBudget(envelope)
	hold := budget
	if object {
		hold = max(budget/4, 64)
	}
	if s.format == FormatTOON && !object {
		s.loadPage(r, 2*budget, s.try) // a TOON page's candidates fill twice the budget
		if res, ok, err := s.toonPage(r, lay, budget, limit); ok || err != nil {
			return res, err
		}
	}
	s.loadPage(r, budget, s.try)
	for {
		pg, err := s.fillSeq(r, object, budget, limit, hold)
		if err != nil {
			return Result{}, err
		}
		res, err := s.seqResult(r, lay, pg)
		if err == errOverCap && budget > 1 {
			budget /= 2
			hold = min(hold, budget)
			if len(pg.pieces) <= 1 {
				budget, hold = 1, 1 // one piece at most, held back
			}
			continue
		}
		return res, err
	}
}

// limit is the page size a request asks for, checked.
func (s *shaper) limit() (int, error) {
	l := s.req.Limit
	switch {
	case l == 0:
		return s.rl.pageSize, nil
	case l < 0 || l > s.rl.maxPageSize:
		return 0, &pagination.LimitError{Limit: l, Max: s.rl.maxPageSize, Rule: "gte=0,lte=" + strconv.Itoa(s.rl.maxPageSize)}
	}
	return l, nil
}

// seqResult writes the envelope of a page.
func (s *shaper) seqResult(r ref, lay layout, pg seqPage) (Result, error) {
	object := r.kind == contMembers
	var next string
	if !pg.done {
		nr := r
		nr.pos, nr.offset, nr.index = int64(pg.next)+s.base, r.offset+int64(pg.count), r.index+1
		var err error
		if next, err = s.nextCursor(nr); err != nil {
			return Result{}, err
		}
	}
	held := 0
	for _, p := range pg.pieces {
		if p.hold {
			held++
		}
	}
	hasParts := held > 0 || lay.parts
	var parts string
	if hasParts && next == "" {
		var err error
		if parts, err = s.partCursor(); err != nil {
			return Result{}, err
		}
	}
	out := make([]byte, 0, 512)
	out = append(out, '{')
	if lay.outline != nil {
		out = appendKey(out, "outline")
		out = append(out, lay.outline...)
		out = append(out, ',')
	}
	if object {
		out = appendKey(out, "members")
		out = append(out, '{')
	} else {
		out = appendKey(out, "items")
		out = append(out, '[')
	}
	out = s.appendPieces(out, pg.pieces)
	if object {
		out = append(out, '}')
	} else {
		out = append(out, ']')
	}
	out = append(out, ',')
	out = appendPageMeta(out, next, parts, r, pg)
	out = appendPlace(out, lay, r)
	out = s.appendLeadTail(out, r, pg)
	if object && !pg.done && r.offset == 0 {
		out = s.appendNextNames(out, pg.next, int(r.total)-pg.count)
	}
	out = append(out, "}}"...)
	strategy := telemetry.StrategyPagination
	res, err := s.finish(out, strategy)
	if err != nil {
		return res, err
	}
	res.Next = next
	if hasParts {
		res.PartCursor = cmpOr(parts, next)
	}
	res.Record.ItemCount = pg.count
	res.Record.OptimizationMetadata = map[string]any{"pageSize": pg.count, "totalCount": r.total, "offset": r.offset}
	what := "items"
	if object {
		what = "members"
	}
	if lay.path != "" {
		what = lay.path
	}
	if pg.count == 0 {
		res.Guidance = fmt.Sprintf("No more %s (%s in all).", what, thousands(int(r.total)))
	} else {
		res.Guidance = fmt.Sprintf("Showing %s %s-%s of %s (%s tokens; budget %s).", what, thousands(int(r.offset)+1),
			thousands(int(r.offset)+pg.count), thousands(int(r.total)), thousands(res.Record.TokensAfter), thousands(s.rl.budget.Threshold))
	}
	if held > 0 {
		res.Guidance += fmt.Sprintf(" %d large value(s) held back as parts.", held)
	}
	res.Guidance += s.strandedNote()
	return res, nil
}

// appendLeadTail adds meta.lead and meta.tail when the bytes around the
// page's items are not what a compact container has there.
func (s *shaper) appendLeadTail(out []byte, r ref, pg seqPage) []byte {
	if len(pg.pieces) == 0 {
		return out
	}
	open, sep := "[", ","
	if r.kind == contMembers {
		open = "{"
	}
	start := int(r.start - s.base) // negative when s.data is a window that starts after it
	var lead []byte
	if r.offset == 0 {
		lead = s.data[start:pg.pieces[0].start]
		if string(lead) != open {
			out = append(out, `,"lead":`...)
			out = rawjson.AppendQuoted(out, string(lead))
		}
	} else if first := pg.pieces[0].start; int(r.pos-s.base) == first {
		// The separator before this page was the previous page's: find it
		// back from the previous item's end, which is the last non-space
		// byte before the comma.
		low := max(start, 0)
		i := first - 1
		for i > low && isSpace(s.data[i]) {
			i--
		}
		j := i - 1
		for j > low && isSpace(s.data[j]) {
			j--
		}
		if j <= low && start < 0 {
			s.needMore(0) // the window starts within the white space
		}
		if gap := s.data[j+1 : first]; string(gap) != sep {
			out = append(out, `,"lead":`...)
			out = rawjson.AppendQuoted(out, string(gap))
		}
	}
	if pg.done {
		tail := s.data[pg.pieces[len(pg.pieces)-1].end : r.end-s.base]
		if len(tail) != 1 {
			out = append(out, `,"tail":`...)
			out = rawjson.AppendQuoted(out, string(tail))
		}
	}
	return out
}

// appendNextNames lists, in meta.more, the names of the members after the
// first page (rest of them), in about a tenth of the threshold.
func (s *shaper) appendNextNames(out []byte, pos, rest int) []byte {
	room := s.rl.budget.Threshold / 10
	it := rawjson.At(s.data, pos, true)
	var names []byte
	shown, used := 0, 0
	for item, ok := it.Next(); ok; item, ok = it.Next() {
		key := s.data[item.Start:item.KeyEnd]
		t := len(key)/3 + 1 // about; the page is counted exactly
		if used+t > room {
			break
		}
		if shown > 0 {
			names = append(names, ',')
		}
		names = append(names, key...)
		used += t
		shown++
	}
	out = append(out, `,"more":{"names":[`...)
	out = append(out, names...)
	out = append(out, `],"others":`...)
	out = strconv.AppendInt(out, int64(rest-shown), 10)
	return append(out, '}')
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// countFrom counts the items of a container from the one at pos.
func countFrom(data []byte, pos int, object bool) int {
	it := rawjson.At(data, pos, object)
	n := 0
	for _, ok := it.Next(); ok; _, ok = it.Next() {
		n++
	}
	return n
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// appendPageMeta appends a page's cursors and the first members of its
// meta, up to its offset (the meta object is left open).
func appendPageMeta(out []byte, next, parts string, r ref, pg seqPage) []byte {
	out = appendCursor(out, "nextCursor", next)
	if parts != "" {
		out = append(out, ',')
		out = appendCursor(out, "partCursor", parts)
	}
	out = append(out, `,"meta":{"totalCount":`...)
	out = strconv.AppendInt(out, r.total, 10)
	out = append(out, `,"pageSize":`...)
	out = strconv.AppendInt(out, int64(pg.count), 10)
	out = append(out, `,"hasMore":`...)
	out = strconv.AppendBool(out, !pg.done)
	out = append(out, `,"offset":`...)
	return strconv.AppendInt(out, r.offset, 10)
}

// appendPlace appends to a page's meta where its list is: the path of a
// list inside an object, and the part of the outline it is.
func appendPlace(out []byte, lay layout, r ref) []byte {
	if lay.path != "" {
		out = append(out, `,"path":`...)
		out = rawjson.AppendQuoted(out, lay.path)
	}
	if lay.outline != nil {
		out = append(out, `,"part":`...)
		out = strconv.AppendInt(out, r.start, 10)
	}
	return out
}
