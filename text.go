package ctxfit

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/telemetry"
)

// A text is served in chunks (chunk.ContentChunk):
//
//	{"content":"...","chunkIndex":0,"totalChunks":3,"nextCursor":"..."|null,
//	 "metadata":{"startLine":1,"endLine":40,"totalLines":120,"bytesInChunk":8012,"offset":0,...}}
//
// A text body, or the raw bytes of a huge scalar, is cut at semantic
// boundaries and sent escaped (chunk.FormEscaped): content decodes to the
// chunk's bytes exactly. A chunk that is not valid UTF-8 says how its
// bytes are written in metadata.encoding: "latin1" when it holds no UTF-8
// sequence at all (each byte is the character U+0000 to U+00FF), else
// "utf-8+surrogateescape" (each byte that is not valid UTF-8 is the escape
// \udc80 to \udcff). A
// JSON string's body is sent as it is in the data (chunk.FormJSONString):
// content holds the original escapes, lone surrogates included, and
// metadata.form says "json-string". metadata.offset is where the chunk
// starts in the text; the chunks, in order, are the text. totalChunks is
// exact for a text of at most planMaxBytes (2 MiB); for a longer one it is
// an estimate until the last chunk, which states it exactly.

// serveText serves the chunk of the text r continues: s.data[r.start:r.end]
// in form r.form, from r.pos.
func (s *shaper) serveText(r ref, lay layout) (Result, error) {
	limit := s.rl.chunkTokens
	if lay.outline != nil {
		limit = max(min(limit, s.pageBudget(300+s.count(lay.outline, s.rl.budget.HardCap))), chunk.MinMaxTokens)
	}
	for {
		span, r2, err := s.cut(r, limit)
		if err != nil {
			return Result{}, err
		}
		res, err := s.textResult(r2, lay, span)
		if err == errOverCap && limit > chunk.MinMaxTokens {
			limit = max(limit/2, chunk.MinMaxTokens)
			continue
		}
		return res, err
	}
}

// cut finds the chunk at r.pos with limit tokens. On the first chunk it
// plans the whole text to count the chunks and lines, and fills them into
// the ref it returns; a text of more than planMaxBytes is not planned (see
// firstUnplanned).
func (s *shaper) cut(r ref, limit int) (chunk.Span, ref, error) {
	n := int(r.end - r.start)
	at := int(r.pos - r.start)
	key := planKey(s.contentID(), r, limit, s.e.cfg.Encoding)
	if at == 0 && r.index == 0 {
		p := s.g.plans.get(key)
		if p == nil && n > planMaxBytes {
			return s.firstUnplanned(r, limit)
		}
		if p == nil {
			var err error
			if p, err = s.plan(s.text(r, 0, n), r.form, limit); err != nil {
				return chunk.Span{}, r, err
			}
			s.g.plans.put(key, p)
		}
		r.textKind, r.total = p.kind, int64(max(len(p.ends), 1))
		if r.line == 0 {
			r.line = 1
		}
		if r.lines == 0 {
			r.lines = int64(p.lines)
		}
		first, _ := p.chunkAt(0)
		return first, r, nil
	}
	if at >= n {
		return chunk.Span{Start: at, End: at}, r, nil
	}
	if p := s.g.plans.get(key); p != nil {
		if sp, ok := p.chunkAt(at); ok {
			return sp, r, nil
		}
	}
	from, to := chunk.Window(n, at, limit)
	// The window holds the longest chunk limit tokens can make (128 bytes
	// a token), which prose and logs never come near: first try one sized
	// for text (narrowBytesPerToken), and keep its chunk when it ends well
	// inside it. Either way the chunk is a span of the text counted
	// exactly: the narrow window can only move a boundary, never lose a
	// byte or pass the budget.
	if narrow := at + limit*narrowBytesPerToken + narrowSlack; narrow < to {
		sp, err := s.cutIn(s.text(r, from, narrow), at-from, limit, r)
		if err != nil {
			return chunk.Span{}, r, err
		}
		if sp.End+from <= narrow-narrowSlack {
			sp.Start, sp.End = sp.Start+from, sp.End+from
			return sp, r, nil
		}
	}
	sp, err := s.cutIn(s.text(r, from, to), at-from, limit, r)
	if err != nil {
		return chunk.Span{}, r, err
	}
	sp.Start, sp.End = sp.Start+from, sp.End+from
	return sp, r, nil
}

// planMaxBytes is the longest text whose first chunk plans the whole text
// (an exact count of all of it, about 50 ms for 2 MiB of prose). The first
// chunk of a longer text costs the chunk it sends, not the text.
const planMaxBytes = 2 << 20

// firstUnplanned cuts the first chunk of the text r continues, of more than
// planMaxBytes, from a window at its start, as a continuation is cut: the
// kind of text is detected on that window and travels in the cursors, and
// the ref's total is an estimate, the text's length over the first chunk's,
// which the later chunks correct (at least one more while a cursor follows,
// exact on the last chunk). The lines are counted in the whole text, which
// only looks for line feeds.
func (s *shaper) firstUnplanned(r ref, limit int) (chunk.Span, ref, error) {
	n := int(r.end - r.start)
	_, to := chunk.Window(n, 0, limit)
	c, err := chunk.NewCutter(view(s.text(r, 0, to)), r.form, &chunk.Options{Counter: s.counter(), MaxTokens: limit})
	if err != nil {
		return chunk.Span{}, r, err
	}
	sp, err := c.Next(0)
	if err != nil {
		return chunk.Span{}, r, err
	}
	r.textKind = c.Kind()
	r.total = int64(max((n+sp.End-1)/max(sp.End, 1), 2))
	if r.line == 0 {
		r.line = 1
	}
	if r.lines == 0 {
		r.lines = int64(lineCount(s.text(r, 0, n), r.form))
	}
	return sp, r, nil
}

// The narrow window of a continuation chunk: bytes per token of the
// chunk, and the margin the chunk must end before the window's end.
const (
	narrowBytesPerToken = 8
	narrowSlack         = 4096
)

// plan cuts the whole text into chunks of limit tokens.
func (s *shaper) plan(text []byte, form chunk.Form, limit int) (*plan, error) {
	c, err := chunk.NewCutter(view(text), form, &chunk.Options{Counter: s.counter(), MaxTokens: limit})
	if err != nil {
		return nil, err
	}
	p := &plan{kind: c.Kind(), lines: lineCount(text, form)}
	for at := 0; at < len(text); {
		if err := s.alive(); err != nil {
			return nil, err
		}
		sp, err := c.Next(at)
		if err != nil {
			return nil, err
		}
		p.ends = append(p.ends, sp.End)
		at = sp.End
	}
	return p, nil
}

// cutIn returns the chunk at at of window, a part of the text r
// continues, in window's offsets.
func (s *shaper) cutIn(window []byte, at, limit int, r ref) (chunk.Span, error) {
	c, err := chunk.NewCutter(view(window), r.form, &chunk.Options{Counter: s.counter(), MaxTokens: limit, Kind: r.textKind})
	if err != nil {
		return chunk.Span{}, err
	}
	return c.Next(at)
}

// textResult writes the envelope of the chunk span (offsets of the text)
// of the text r continues.
func (s *shaper) textResult(r ref, lay layout, span chunk.Span) (Result, error) {
	piece := s.text(r, span.Start, span.End)
	var next string
	total := r.total
	if span.End < int(r.end-r.start) {
		nr := r
		nr.pos = r.start + int64(span.End)
		nr.offset = int64(span.End)
		nr.index = r.index + 1
		nr.line = r.line + int64(newlines(piece, r.form))
		nr.total = max(total, r.index+2)
		var err error
		if next, err = s.nextCursor(nr); err != nil {
			return Result{}, err
		}
		total = nr.total
	} else {
		total = r.index + 1
	}
	var parts string
	if lay.parts && next == "" {
		var err error
		if parts, err = s.partCursor(); err != nil {
			return Result{}, err
		}
	}
	out := make([]byte, 0, len(piece)+512)
	out = append(out, '{')
	if lay.outline != nil {
		out = appendKey(out, "outline")
		out = append(out, lay.outline...)
		out = append(out, ',')
	}
	out = append(out, `"content":"`...)
	encoding := ""
	switch {
	case r.form == chunk.FormJSONString:
		out = append(out, piece...)
	case utf8.Valid(piece):
		out, _ = rawjson.Escape(out, piece)
	case !rawjson.MultiByte(piece):
		encoding = "latin1" // not UTF-8 at all: a character per byte
		out = rawjson.EscapeLatin1(out, piece)
	default:
		encoding = "utf-8+surrogateescape"
		out, _ = rawjson.Escape(out, piece)
	}
	out = append(out, `","chunkIndex":`...)
	out = strconv.AppendInt(out, r.index, 10)
	out = append(out, `,"totalChunks":`...)
	out = strconv.AppendInt(out, total, 10)
	out = append(out, ',')
	out = appendCursor(out, "nextCursor", next)
	if parts != "" {
		out = append(out, ',')
		out = appendCursor(out, "partCursor", parts)
	}
	if lay.details != "" {
		out = append(out, ',')
		out = appendCursor(out, "detailsCursor", lay.details)
	}
	endLine := r.line
	if len(piece) > 0 {
		endLine += int64(newlines(piece[:len(piece)-1], r.form))
	}
	out = append(out, `,"metadata":{"startLine":`...)
	out = strconv.AppendInt(out, r.line, 10)
	out = append(out, `,"endLine":`...)
	out = strconv.AppendInt(out, endLine, 10)
	out = append(out, `,"totalLines":`...)
	out = strconv.AppendInt(out, r.lines, 10)
	out = append(out, `,"bytesInChunk":`...)
	out = strconv.AppendInt(out, int64(len(piece)), 10)
	out = append(out, `,"offset":`...)
	out = strconv.AppendInt(out, int64(span.Start), 10)
	if lay.path != "" {
		out = append(out, `,"path":`...)
		out = rawjson.AppendQuoted(out, lay.path)
	}
	if lay.outline != nil {
		out = append(out, `,"part":`...)
		out = strconv.AppendInt(out, r.start-1, 10) // the string's opening quote
	}
	if encoding != "" {
		out = append(out, `,"encoding":"`...)
		out = append(out, encoding...)
		out = append(out, '"')
	}
	if r.form == chunk.FormJSONString {
		out = append(out, `,"form":"json-string"`...)
	}
	if r.form == chunk.FormJSONString && (r.index == 0 || next == "") && s.isRootString(r) {
		// White space around a JSON string at the root.
		if lead := s.around(0, r.start); r.index == 0 && string(lead) != `"` {
			out = append(out, `,"lead":`...)
			out = rawjson.AppendQuoted(out, string(lead))
		}
		if tail := s.around(r.end, s.snapLen()); next == "" && string(tail) != `"` {
			out = append(out, `,"tail":`...)
			out = rawjson.AppendQuoted(out, string(tail))
		}
	}
	out = append(out, "}}"...)
	res, err := s.finish(out, telemetry.StrategyChunking)
	if err != nil {
		return res, err
	}
	res.Next = next
	if lay.parts {
		res.PartCursor = cmpOr(parts, next)
	}
	res.Record.OptimizationMetadata = map[string]any{"chunkIndex": r.index, "totalChunks": total}
	what := "chunk"
	if lay.path != "" {
		what = lay.path + " chunk"
	}
	res.Guidance = fmt.Sprintf("Showing %s %d of %d (lines %s-%s of %s; %s tokens; budget %s).", what, r.index+1, total,
		thousands(int(r.line)), thousands(int(endLine)), thousands(int(r.lines)), thousands(res.Record.TokensAfter), thousands(s.rl.budget.Threshold))
	res.Guidance += s.strandedNote()
	return res, nil
}

// strandedNote says, when a next cursor could not be issued, that the
// rest cannot be continued now.
func (s *shaper) strandedNote() string {
	if !s.stranded {
		return ""
	}
	if s.req.Unrepeatable {
		// Repeating it would repeat what it changed: no such advice.
		return " The rest cannot be continued (the snapshot store has no room for it)."
	}
	return " The rest cannot be continued now (the snapshot store has no room for it): repeat the request later."
}

// isRootString reports whether the JSON string body r continues is the
// whole response, a JSON string with white space around it. From a window
// it reads what lies before and after the string, as far as the first byte
// that is not white space.
func (s *shaper) isRootString(r ref) bool {
	if s.src == nil {
		return r.start == int64(rawjson.Space(s.data, 0))+1 && rawjson.Space(s.data, int(r.end)+1) == len(s.data)
	}
	for n := int64(256); ; n *= 16 {
		head := s.around(0, min(r.start, n))
		at := int64(rawjson.Space(head, 0))
		if at < int64(len(head)) {
			if at != r.start-1 {
				return false
			}
			break
		}
		if int64(len(head)) == r.start {
			return false // white space up to the string's body: no opening quote
		}
	}
	for n := int64(256); ; n *= 16 {
		tail := s.around(r.end, min(s.size, r.end+n))
		if len(tail) == 0 || tail[0] != '"' {
			return false
		}
		if at := rawjson.Space(tail, 1); at < len(tail) {
			return false
		}
		if r.end+int64(len(tail)) == s.size {
			return true
		}
	}
}

// around returns the bytes [lo, hi) of the snapshot, reading them when
// s.data is a window that does not hold them; the window is left as it
// was, so slices of it stay what they were.
func (s *shaper) around(lo, hi int64) []byte {
	if s.src == nil {
		return s.data[lo:hi]
	}
	data, base := s.data, s.base
	defer func() { s.data, s.base = data, base }()
	s.load(lo, hi)
	return s.data[lo-s.base : hi-s.base]
}

// lineCount is the number of lines of a text (see chunk.Metadata).
func lineCount(text []byte, form chunk.Form) int {
	n, last := lineFeeds(text, form)
	if len(text) == 0 || !last {
		n++
	}
	return n
}

// newlines counts the line feeds of a text: bytes, or escapes of a JSON
// string body.
func newlines(text []byte, form chunk.Form) int {
	n, _ := lineFeeds(text, form)
	return n
}

// lineFeeds counts the line feeds of a text, and tells whether it ends
// with one.
func lineFeeds(text []byte, form chunk.Form) (n int, last bool) {
	if form != chunk.FormJSONString {
		return bytes.Count(text, []byte{'\n'}), len(text) > 0 && text[len(text)-1] == '\n'
	}
	for i := 0; i < len(text); i++ {
		last = false
		if text[i] != '\\' || i+1 >= len(text) {
			continue
		}
		switch text[i+1] {
		case 'n':
			n, last = n+1, true
		case 'u':
			if i+5 < len(text) && string(text[i+2:i+5]) == "000" && (text[i+5] == 'a' || text[i+5] == 'A') {
				n, last = n+1, true
			}
			i += 4
		}
		i++
	}
	return n, last
}
