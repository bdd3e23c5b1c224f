package ctxfit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Search asks for what matches a pattern in a response ctxfit shaped,
// instead of reading it page by page: Request.Search, with Request.Cursor
// set to any cursor of that response (a next, part or details cursor).
//
// What is searched is the value the cursor continues: a text (a text
// body, or a JSON string) line by line; a JSON array item by item; an
// object member by member. For any other cursor, the whole response. The
// answer lists the matches in order, with their line numbers (texts) or
// indexes (arrays) and the total number of matches, fitted to the budget;
// its nextCursor continues the search.
type Search struct {
	// Pattern is an RE2 regular expression (https://github.com/google/re2/wiki/Syntax),
	// or a literal string with Literal set. At most 512 bytes.
	Pattern string `json:"pattern"`
	// Literal matches Pattern as it is, not as a regular expression.
	Literal bool `json:"literal,omitempty"`
	// IgnoreCase matches without regard to case.
	IgnoreCase bool `json:"ignoreCase,omitempty"`
	// Path, for an array of objects, matches one field of each item (a
	// dotted path such as "guest.name") instead of the whole item: a
	// string field by its text, any other by its JSON.
	Path string `json:"path,omitempty"`
	// Context is the number of lines shown before and after a matching
	// line of a text, 0 to 5.
	Context int `json:"context,omitempty"`
}

// Limits of a search.
const (
	maxPattern     = 512
	maxContext     = 5
	maxLineShown   = 400 // bytes of a line shown around its match
	searchEnvelope = 300 // tokens the envelope of a search result may take
)

// compile returns the search's regular expression, or an error that says
// what is wrong with it.
func (q *Search) compile() (*regexp.Regexp, error) {
	switch {
	case q.Pattern == "":
		return nil, fmt.Errorf("%w: search needs a pattern", ErrBadRequest)
	case len(q.Pattern) > maxPattern:
		return nil, fmt.Errorf("%w: the search pattern is %d bytes, at most %d", ErrBadRequest, len(q.Pattern), maxPattern)
	case q.Context < 0 || q.Context > maxContext:
		return nil, fmt.Errorf("%w: search context %d: from 0 to %d lines", ErrBadRequest, q.Context, maxContext)
	case len(q.Path) > maxPattern:
		return nil, fmt.Errorf("%w: the search path is %d bytes, at most %d", ErrBadRequest, len(q.Path), maxPattern)
	}
	expr := q.Pattern
	if q.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if q.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: the search pattern is not an RE2 regular expression (%v); fix it, or set literal to match it as it is", ErrBadRequest, err)
	}
	return re, nil
}

// target is what a search scans: a text (data[start:end] in form), or the
// items of the container that starts at data[start].
type target struct {
	kind       rawjson.Kind // Array, Object, or String for a text
	start, end int
	form       chunk.Form
}

// searchTarget is the value the ref r continues, or the whole response.
func (s *shaper) searchTarget(r ref) target {
	switch r.kind {
	case contChunk:
		return target{kind: rawjson.String, start: int(r.start), end: int(r.end), form: r.form}
	case contPage, contMembers:
		start := int(r.start)
		if c := s.data[start]; c != '[' && c != '{' {
			start, _, _ = rawjson.Root(s.data)
		}
		return target{kind: rawjson.KindOf(s.data[start]), start: start, end: int(r.end)}
	}
	start, end, ok := rawjson.Root(s.data)
	if !ok {
		return target{kind: rawjson.String, end: len(s.data), form: chunk.FormEscaped}
	}
	switch k := rawjson.KindOf(s.data[start]); k {
	case rawjson.Array, rawjson.Object:
		return target{kind: k, start: start, end: end}
	case rawjson.String:
		return target{kind: rawjson.String, start: start + 1, end: end - 1, form: chunk.FormJSONString}
	}
	return target{kind: rawjson.String, end: len(s.data), form: chunk.FormEscaped}
}

// search serves the first page of a search over what r leads to.
func (s *shaper) search(r ref, q *Search) (Result, error) {
	spec, err := json.Marshal(q)
	if err != nil || len(spec) > maxCarried {
		return Result{}, fmt.Errorf("%w: the search is too long to continue; shorten the pattern or the path", ErrBadRequest)
	}
	re, err := q.compile()
	if err != nil {
		return Result{}, err
	}
	t := s.searchTarget(r)
	sr := ref{kind: contSearch, start: int64(t.start), end: int64(t.end), form: t.form, search: string(spec), line: 1}
	switch t.kind {
	case rawjson.Array, rawjson.Object:
		sr.pos = int64(rawjson.Space(s.data, t.start+1))
		sr.textKind = chunk.Kind(t.kind.String())
	default:
		sr.pos = int64(t.start)
		sr.textKind = "text"
	}
	// Past the time limit from here, a page bounded by bytes; its total
	// is not known until the count below ends.
	sr.total = totalUnknown
	s.lossless = func() (Result, error) { return s.searchCut(sr, q, re) }
	total, err := s.countMatches(sr, q, re)
	if err != nil {
		return Result{}, err
	}
	sr.total = int64(total)
	return s.searchPage(sr, q, re)
}

// continueSearch serves the next page of the search r continues; again,
// when not nil, must be that search.
func (s *shaper) continueSearch(r ref, again *Search) (Result, error) {
	var q Search
	if err := json.Unmarshal([]byte(r.search), &q); err != nil {
		return Result{}, fmt.Errorf("ctxfit: %w", errBadRef)
	}
	if again != nil && *again != q {
		return Result{}, fmt.Errorf("%w: this cursor continues the search for %q; leave the search out to continue it, or pass a cursor of the response to search it anew", ErrBadRequest, shorten(q.Pattern, 80))
	}
	re, err := q.compile()
	if err != nil {
		return Result{}, err
	}
	s.lossless = func() (Result, error) { return s.searchCut(r, &q, re) }
	return s.searchPage(r, &q, re)
}

// countMatches counts every match from r.pos.
func (s *shaper) countMatches(r ref, q *Search, re *regexp.Regexp) (int, error) {
	n := 0
	err := s.scan(r, q, re, func(match) (bool, error) { n++; return true, nil })
	return n, err
}

// match is one match a scan found: a line of a text (its span in the
// text, and its 1-based number) or an item of a container (its span in
// the data, and its 0-based index). resume is where a scan that is to
// show it starts: the line's start in the data, or the position before
// the item.
type match struct {
	start, end int
	number     int
	resume     int
}

// scan calls found for every match from r.pos in order, until found
// returns false.
func (s *shaper) scan(r ref, q *Search, re *regexp.Regexp, found func(match) (bool, error)) error {
	_, err := s.scanUntil(r, q, re, -1, found)
	return err
}

// scanUntil is scan that stops, too, before the first line or item that
// starts at least until bytes past r.pos (until < 0: never), and then
// returns that line or item (its number and resume); else nil.
func (s *shaper) scanUntil(r ref, q *Search, re *regexp.Regexp, until int, found func(match) (bool, error)) (*match, error) {
	if r.textKind == "text" {
		text, toData, fromData := s.searchText(r)
		line := int(r.line)
		for at := fromData(int(r.pos)); at < len(text); line++ {
			if err := s.alive(); err != nil {
				return nil, err
			}
			if until >= 0 && toData(at)-int(r.pos) >= until {
				return &match{number: line, resume: toData(at)}, nil
			}
			end := bytes.IndexByte(text[at:], '\n')
			next := len(text)
			if end < 0 {
				end = len(text)
			} else {
				end += at
				next = end + 1
			}
			ln := bytes.TrimSuffix(text[at:end], []byte{'\r'})
			if re.Match(ln) {
				m := match{start: at, end: at + len(ln), number: line, resume: toData(at)}
				if ok, err := found(m); !ok || err != nil {
					return nil, err
				}
			}
			at = next
		}
		return nil, nil
	}
	object := r.textKind == "object"
	it := rawjson.At(s.data, int(r.pos), object)
	for index := int(r.offset); ; index++ {
		if err := s.alive(); err != nil {
			return nil, err
		}
		at := it.Pos()
		if until >= 0 && at-int(r.pos) >= until {
			return &match{number: index, resume: at}, nil
		}
		item, ok := it.Next()
		if !ok {
			if it.Err() {
				return nil, fmt.Errorf("ctxfit: %w (the data is not valid JSON where it points)", errBadRef)
			}
			return nil, nil
		}
		if s.itemMatches(item, object, q.Path, re) {
			m := match{start: item.Start, end: item.End, number: index, resume: at}
			if ok, err := found(m); !ok || err != nil {
				return nil, err
			}
		}
	}
}

// searchText returns the text a text search scans (a JSON string's text,
// decoded), and the functions from its offsets to the data's and back.
func (s *shaper) searchText(r ref) (text []byte, toData, fromData func(int) int) {
	raw := s.data[r.start:r.end]
	base := int(r.start)
	if r.form != chunk.FormJSONString {
		return raw, func(i int) int { return base + i }, func(j int) int { return j - base }
	}
	text, m := rawjson.Decode(raw)
	return text, func(i int) int { return base + m.Encoded(i) }, func(j int) int { return m.Text(j - base) }
}

// itemMatches reports whether an item (or, with path, the value at path
// in it) matches re.
func (s *shaper) itemMatches(item rawjson.Item, object bool, path string, re *regexp.Regexp) bool {
	v := s.data[item.Start:item.End]
	if path != "" && !object {
		var ok bool
		if v, ok = valueAt(s.data, item.Start, path); !ok {
			return false
		}
		if v[0] == '"' {
			text, _ := rawjson.Decode(v[1 : len(v)-1])
			return re.Match(text)
		}
	}
	return re.Match(v)
}

// valueAt returns the value at the dotted path in the object at
// data[start].
func valueAt(data []byte, start int, path string) ([]byte, bool) {
	for name := range strings.SplitSeq(path, ".") {
		it, ok := rawjson.Open(data, start)
		if !ok || data[start] != '{' {
			return nil, false
		}
		found := false
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			if string(rawjson.Unescape(data[m.Start+1:m.KeyEnd-1])) == name {
				start, found = m.Value, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	end, ok := rawjson.End(data, start)
	if !ok {
		return nil, false
	}
	return data[start:end], true
}

// searchPage writes the matches from r.pos that fit the page budget.
func (s *shaper) searchPage(r ref, q *Search, re *regexp.Regexp) (Result, error) {
	budget := s.pageBudget(searchEnvelope)
	used, shown, held := 0, 0, false
	var entries []byte
	var next *match
	var text []byte
	if r.textKind == "text" {
		text, _, _ = s.searchText(r)
	}
	err := s.scan(r, q, re, func(m match) (bool, error) {
		var entry []byte
		if text != nil {
			entry = lineEntry(text, m, q.Context)
		} else {
			entry = s.itemEntry(m, r.textKind == "object")
		}
		t := s.count(entry, budget)
		if t > budget-used && shown > 0 {
			next = &m
			return false, nil
		}
		if t > budget-used && text == nil {
			// One item alone over the page: held back behind a placeholder.
			entry = s.heldEntry(m, r.textKind == "object")
			t = s.count(entry, budget)
			held = true
		}
		if shown > 0 {
			entries = append(entries, ',')
		}
		entries = append(entries, entry...)
		used += t + 1
		shown++
		return true, nil
	})
	if err != nil {
		return Result{}, err
	}
	cursor, parts, err := s.searchCursors(r, next, text != nil, held)
	if err != nil {
		return Result{}, err
	}
	out := appendSearchPage(nil, searchPageOf{entries: entries, cursor: cursor, parts: parts, total: r.total, shown: shown,
		lines: text != nil, pattern: rawjson.AppendQuoted(nil, q.Pattern)})
	res, err := s.finish(out, telemetry.StrategySearch)
	if err != nil {
		return res, err
	}
	res.Next = cursor
	if held {
		res.PartCursor = cmpOr(parts, cursor)
	}
	unit := "line"
	if text == nil {
		unit = "item"
		if r.textKind == "object" {
			unit = "member"
		}
	}
	found := fmt.Sprintf("Found %s %s%s matching %q", thousands(int(r.total)), unit, plural(int(r.total)), q.Pattern)
	if r.total == totalUnknown {
		found = fmt.Sprintf("Searching %ss for %q (the total was not counted)", unit, q.Pattern)
	}
	res.Guidance = fmt.Sprintf("%s; showing %d (%s tokens; budget %s).", found, shown, thousands(res.Record.TokensAfter), thousands(s.rl.budget.Threshold))
	return res, nil
}

// searchCursors returns the cursors of a search page of r: the
// nextCursor that continues the search at next (nil for none; lines when
// the search reads lines of text, else items), and, when the page held a
// match back and no nextCursor leads on, the partCursor that opens it.
func (s *shaper) searchCursors(r ref, next *match, lines, held bool) (cursor, parts string, err error) {
	if next != nil {
		nr := r
		nr.pos, nr.index = int64(next.resume), r.index+1
		if lines {
			nr.line = int64(next.number)
		} else {
			nr.offset = int64(next.number)
		}
		cursor, err = s.nextCursor(nr)
		return cursor, "", err
	}
	if held {
		parts, err = s.partCursor()
	}
	return "", parts, err
}

// searchPageOf is what a search page holds: its entries (JSON values
// separated by commas), cursors, totals, what it searched and the pattern
// (as a JSON string).
type searchPageOf struct {
	entries       []byte
	cursor, parts string
	total         int64
	shown         int
	lines         bool
	pattern       []byte
	timedOut      bool
}

// appendSearchPage appends the body of a search page:
// {"matches":[...],"nextCursor":...,"meta":{...}}.
func appendSearchPage(out []byte, p searchPageOf) []byte {
	out = append(out, `{"matches":[`...)
	out = append(out, p.entries...)
	out = append(out, "],"...)
	out = appendCursor(out, "nextCursor", p.cursor)
	if p.parts != "" {
		out = append(out, ',')
		out = appendCursor(out, "partCursor", p.parts)
	}
	out = appendTotal(append(out, `,"meta":`...), p.total)
	out = append(out, `,"shown":`...)
	out = strconv.AppendInt(out, int64(p.shown), 10)
	out = append(out, `,"searched":"`...)
	out = append(out, map[bool]string{true: "lines", false: "items"}[p.lines]...)
	out = append(out, `","pattern":`...)
	out = append(out, p.pattern...)
	if p.timedOut {
		out = append(out, `,"timedOut":true`...)
	}
	return append(out, "}}"...)
}

// totalUnknown is the total of a search whose first page ran out of time
// before its matches were counted (see shaper.searchCut): its pages say
// "totalMatches":null.
const totalUnknown = 1 << 62

// appendTotal appends a search page's {"totalMatches":N (or null).
func appendTotal(out []byte, total int64) []byte {
	out = append(out, `{"totalMatches":`...)
	if total == totalUnknown {
		return append(out, "null"...)
	}
	return strconv.AppendInt(out, total, 10)
}

// searchCutScan bounds the bytes of data a search page reads once shaping
// ran past its time limit.
const searchCutScan = 1 << 20

// searchCut is the page of a search whose shaping ran past its time limit,
// still lossless and cheap: the matches in at most searchCutScan bytes
// from r.pos that fit the hard cap in bytes (nothing is counted: a token
// is at least one byte), a match too large for the room shortened (a
// line) or held back behind a placeholder (an item), and the nextCursor
// that continues the search after the last one shown or the last byte
// read. Following it finds every match. It fails when not even one match
// fits the hard cap in its shortest form.
func (s *shaper) searchCut(r ref, q *Search, re *regexp.Regexp) (Result, error) {
	probe, err := s.nextCursor(r) // as long as the cursors to come, give or take a few digits
	if err != nil {
		return Result{}, err
	}
	pattern := rawjson.AppendQuoted(nil, q.Pattern)
	room := s.rl.budget.HardCap - len(pattern) - 2*len(probe) - searchCutEnvelope
	var text []byte
	if r.textKind == "text" {
		text, _, _ = s.searchText(r)
	}
	var entries []byte
	shown, held := 0, false
	var next *match
	stop, err := s.scanUntil(r, q, re, searchCutScan, func(m match) (bool, error) {
		left := room - len(entries) - 1
		var entry []byte
		if text != nil {
			entry = lineEntry(text, m, q.Context)
			if len(entry) > left && shown == 0 {
				entry = shortLineEntry(text, m, left)
			}
		} else {
			entry = s.itemEntry(m, r.textKind == "object")
			if len(entry) > left && shown == 0 {
				entry, held = s.heldEntry(m, r.textKind == "object"), true
			}
		}
		if len(entry) > left {
			if shown == 0 {
				return false, errOverCap // not even one match fits
			}
			next = &m
			return false, nil
		}
		if shown > 0 {
			entries = append(entries, ',')
		}
		entries = append(entries, entry...)
		shown++
		return true, nil
	})
	if err != nil {
		return Result{}, err
	}
	if next == nil {
		next = stop
	}
	cursor, parts, err := s.searchCursors(r, next, text != nil, held)
	if err != nil {
		return Result{}, err
	}
	out := appendSearchPage(nil, searchPageOf{entries: entries, cursor: cursor, parts: parts, total: r.total, shown: shown,
		lines: text != nil, pattern: pattern, timedOut: true})
	if len(out) > s.rl.budget.HardCap {
		return Result{}, errOverCap
	}
	rec := withSizes(s.rec, out, len(out), telemetry.StrategySearch, telemetry.OutcomeShaped)
	res := Result{Body: out, ContentType: jsonType, Shaped: true, Strategy: telemetry.StrategySearch, Next: cursor, Record: rec}
	if held {
		res.PartCursor = cmpOr(parts, cursor)
	}
	res.Guidance = fmt.Sprintf("The search for %q ran out of time; showing the %d match%s found so far, bytes %d-%d of %d searched.",
		q.Pattern, shown, map[bool]string{true: "", false: "es"}[shown == 1], r.pos+1, cmpOrPos(next, r.end), s.snapLen())
	if cursor != "" {
		res.Guidance += " Its nextCursor continues the search from there."
	}
	return res, nil
}

// searchCutEnvelope bounds the bytes of a search page's envelope besides
// its pattern and cursors.
const searchCutEnvelope = 160

// cmpOrPos is where a search page stopped: next's resume, else end.
func cmpOrPos(next *match, end int64) int64 {
	if next != nil {
		return int64(next.resume)
	}
	return end
}

// shortLineEntry is a text match with no context and its line shortened
// to fit in n bytes as JSON: {"line":N,"text":"...","truncated":true}; it
// may be longer than n when even an empty text does not fit.
func shortLineEntry(text []byte, m match, n int) []byte {
	out := []byte(`{"line":`)
	out = strconv.AppendInt(out, int64(m.number), 10)
	out = append(out, `,"text":"`...)
	const tail = `","truncated":true}`
	line := text[m.start:m.end]
	size := len(out) + len(tail)
	end := 0
	for end < len(line) {
		_, w := utf8.DecodeRune(line[end:])
		l := rawjson.EscapedLen(line[end : end+w])
		if size+l > n {
			break
		}
		size += l
		end += w
	}
	out, _ = rawjson.Escape(out, line[:end])
	return append(out, tail...)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// lineEntry writes a text match: {"line":N,"text":"...","before":[...],"after":[...]},
// long lines shortened ("truncated":true).
func lineEntry(text []byte, m match, context int) []byte {
	out := []byte(`{"line":`)
	out = strconv.AppendInt(out, int64(m.number), 10)
	out = append(out, `,"text":`...)
	out, cut := appendLine(out, text[m.start:m.end])
	if cut {
		out = append(out, `,"truncated":true`...)
	}
	if context > 0 {
		out = append(out, `,"before":[`...)
		lines := linesBefore(text, m.start, context)
		for i, l := range lines {
			if i > 0 {
				out = append(out, ',')
			}
			out, _ = appendLine(out, l)
		}
		out = append(out, `],"after":[`...)
		for i, l := range linesAfter(text, m.end, context) {
			if i > 0 {
				out = append(out, ',')
			}
			out, _ = appendLine(out, l)
		}
		out = append(out, ']')
	}
	return append(out, '}')
}

// appendLine appends a line as a JSON string, shortened to maxLineShown
// bytes at a rune boundary.
func appendLine(dst, line []byte) ([]byte, bool) {
	cut := len(line) > maxLineShown
	if cut {
		n := maxLineShown
		for n > 0 && line[n]&0xC0 == 0x80 {
			n--
		}
		line = line[:n]
	}
	dst = append(dst, '"')
	dst, _ = rawjson.Escape(dst, line)
	return append(dst, '"'), cut
}

// linesBefore returns up to n lines before the line that starts at at.
func linesBefore(text []byte, at, n int) [][]byte {
	var out [][]byte
	end := at - 1 // the line break before the line
	for len(out) < n && end >= 0 {
		start := bytes.LastIndexByte(text[:end], '\n') + 1
		out = append(out, bytes.TrimSuffix(text[start:end], []byte{'\r'}))
		end = start - 1
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// linesAfter returns up to n lines after the line that ends at end.
func linesAfter(text []byte, end, n int) [][]byte {
	var out [][]byte
	if end < len(text) && text[end] == '\r' {
		end++
	}
	at := end + 1
	for len(out) < n && at <= len(text) && end < len(text) {
		e := bytes.IndexByte(text[at:], '\n')
		if e < 0 {
			e = len(text) - at
		}
		out = append(out, bytes.TrimSuffix(text[at:at+e], []byte{'\r'}))
		at += e + 1
		end = at - 1
	}
	return out
}

// itemEntry writes an item match: {"index":N,"item":...} for an array,
// {"key":"...","value":...} for an object, the item as the data has it.
func (s *shaper) itemEntry(m match, object bool) []byte {
	if object {
		it := rawjson.At(s.data, m.start, true)
		mem, _ := it.Next()
		out := append([]byte(`{"key":`), s.data[mem.Start:mem.KeyEnd]...)
		out = append(out, `,"value":`...)
		return append(append(out, s.data[mem.Value:mem.End]...), '}')
	}
	out := []byte(`{"index":`)
	out = strconv.AppendInt(out, int64(m.number), 10)
	out = append(out, `,"item":`...)
	return append(append(out, s.data[m.start:m.end]...), '}')
}

// heldEntry is itemEntry with the value held back behind a placeholder.
func (s *shaper) heldEntry(m match, object bool) []byte {
	if object {
		it := rawjson.At(s.data, m.start, true)
		mem, _ := it.Next()
		out := append([]byte(`{"key":`), s.data[mem.Start:mem.KeyEnd]...)
		out = append(out, `,"value":`...)
		return append(s.appendPlaceholder(out, mem.Value, mem.End), '}')
	}
	out := []byte(`{"index":`)
	out = strconv.AppendInt(out, int64(m.number), 10)
	out = append(out, `,"item":`...)
	return append(s.appendPlaceholder(out, m.start, m.end), '}')
}
