package ctxfit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

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
	if r.textKind == "text" {
		text, toData, fromData := s.searchText(r)
		line := int(r.line)
		for at := fromData(int(r.pos)); at < len(text); line++ {
			if err := s.alive(); err != nil {
				return err
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
					return err
				}
			}
			at = next
		}
		return nil
	}
	object := r.textKind == "object"
	it := rawjson.At(s.data, int(r.pos), object)
	for index := int(r.offset); ; index++ {
		if err := s.alive(); err != nil {
			return err
		}
		at := it.Pos()
		item, ok := it.Next()
		if !ok {
			if it.Err() {
				return fmt.Errorf("ctxfit: %w (the data is not valid JSON where it points)", errBadRef)
			}
			return nil
		}
		if s.itemMatches(item, object, q.Path, re) {
			m := match{start: item.Start, end: item.End, number: index, resume: at}
			if ok, err := found(m); !ok || err != nil {
				return err
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
	var cursor string
	if next != nil {
		nr := r
		nr.pos, nr.index = int64(next.resume), r.index+1
		if text != nil {
			nr.line = int64(next.number)
		} else {
			nr.offset = int64(next.number)
		}
		if cursor, err = s.nextCursor(nr); err != nil {
			return Result{}, err
		}
	}
	var parts string
	if held && cursor == "" {
		if parts, err = s.partCursor(); err != nil {
			return Result{}, err
		}
	}
	out := append([]byte(`{"matches":[`), entries...)
	out = append(out, "],"...)
	out = appendCursor(out, "nextCursor", cursor)
	if parts != "" {
		out = append(out, ',')
		out = appendCursor(out, "partCursor", parts)
	}
	out = append(out, `,"meta":{"totalMatches":`...)
	out = strconv.AppendInt(out, r.total, 10)
	out = append(out, `,"shown":`...)
	out = strconv.AppendInt(out, int64(shown), 10)
	out = append(out, `,"searched":"`...)
	out = append(out, map[bool]string{true: "lines", false: "items"}[text != nil]...)
	out = append(out, `","pattern":`...)
	out = rawjson.AppendQuoted(out, q.Pattern)
	out = append(out, "}}"...)
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
	res.Guidance = fmt.Sprintf("Found %s %s%s matching %q; showing %d (%s tokens; budget %s).",
		thousands(int(r.total)), unit, plural(int(r.total)), q.Pattern, shown, thousands(res.Record.TokensAfter), thousands(s.rl.budget.Threshold))
	return res, nil
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
