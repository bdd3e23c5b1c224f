package ctxfit

import (
	"fmt"
	"strings"

	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/summary"
	"github.com/ctxfit/ctxfit/telemetry"
)

// The first response to a JSON value over budget, by shape:
//
//   - an array: its first page;
//   - an object whose bulk (half its bytes or more) is one array, at the
//     top level or one level down (or Endpoint.ArrayPath): the first page of
//     that array, beside an outline of the object with the array held back;
//   - an object whose bulk is one string: its first chunk, beside the
//     outline;
//   - a record (8 to 64 members): a summary with a drill-down;
//   - any other object (wide, or with several large values): its members in
//     pages, large values held back as parts;
//   - a string: its body in chunks; a huge number: its bytes in chunks.
//
// An outline is the object as it is in the data, white space included,
// with the values it holds back replaced by placeholders.

// Limits of the layouts.
const (
	recordMinMembers = 8  // a record has at least this many members
	recordMembers    = 64 // and at most this many
	outlineShare     = 3  // an outline takes at most a third of the page budget
	outlineHolding   = 4  // and holds back values over a quarter of that
)

// serveRoot serves the first response for the whole data, which is over
// the threshold.
func (s *shaper) serveRoot(kind bodyKind) (Result, error) {
	if kind == kindText {
		return s.serveText(ref{kind: contChunk, end: int64(len(s.data)), form: chunk.FormEscaped}, layout{})
	}
	start, end := rawjson.Bounds(s.data) // kindOf found it valid
	switch rawjson.KindOf(s.data[start]) {
	case rawjson.Array:
		return s.serveSeq(ref{kind: contPage, end: int64(len(s.data)), pos: int64(rawjson.Space(s.data, start+1))}, layout{})
	case rawjson.Object:
		return s.serveObject(start, end)
	case rawjson.String:
		return s.serveText(ref{kind: contChunk, start: int64(start + 1), end: int64(end - 1), pos: int64(start + 1), form: chunk.FormJSONString}, layout{})
	}
	return s.serveText(ref{kind: contChunk, end: int64(len(s.data)), form: chunk.FormEscaped}, layout{})
}

// serveValue serves the first response for the value data[start:end], a
// part a placeholder named.
func (s *shaper) serveValue(start, end int) (Result, error) {
	switch rawjson.KindOf(s.data[start]) {
	case rawjson.Array:
		return s.serveSeq(ref{kind: contPage, start: int64(start), end: int64(end), pos: int64(rawjson.Space(s.data, start+1))}, layout{})
	case rawjson.Object:
		return s.serveSeq(ref{kind: contMembers, start: int64(start), end: int64(end), pos: int64(rawjson.Space(s.data, start+1))}, layout{})
	case rawjson.String:
		return s.serveText(ref{kind: contChunk, start: int64(start + 1), end: int64(end - 1), pos: int64(start + 1), form: chunk.FormJSONString}, layout{})
	}
	return s.serveText(ref{kind: contChunk, start: int64(start), end: int64(end), pos: int64(start), form: chunk.FormEscaped}, layout{})
}

// serveObject picks the layout of an object at the root.
func (s *shaper) serveObject(start, end int) (Result, error) {
	members := s.members(start)
	if s.rl.pagination {
		if target, path := s.dominantArray(start, members); target != nil {
			if lay, ok := s.outlineAround(start, end, *target, path); ok {
				return s.serveSeq(ref{kind: contPage, start: int64(target.Value), end: int64(target.End),
					pos: int64(rawjson.Space(s.data, target.Value+1))}, lay)
			}
		}
	}
	if s.rl.chunking {
		if m, ok := dominant(members, end-start, rawjson.String, s.data); ok {
			if lay, ok := s.outlineAround(start, end, m, s.keyOf(m)); ok {
				return s.serveText(ref{kind: contChunk, start: int64(m.Value + 1), end: int64(m.End - 1),
					pos: int64(m.Value + 1), form: chunk.FormJSONString}, lay)
			}
		}
	}
	if s.rl.summarize && isRecord(members) {
		if res, ok, err := s.summarize(); ok || err != nil {
			return res, err
		}
	}
	return s.serveSeq(ref{kind: contMembers, end: int64(len(s.data)), pos: int64(rawjson.Space(s.data, start+1))}, layout{})
}

// members reads the members of the object at start.
func (s *shaper) members(start int) []rawjson.Item {
	it, _ := rawjson.Open(s.data, start)
	var ms []rawjson.Item
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		ms = append(ms, m)
	}
	return ms
}

func (s *shaper) keyOf(m rawjson.Item) string {
	return string(rawjson.Unescape(s.data[m.Start+1 : m.KeyEnd-1]))
}

// dominant returns the member of kind k that holds at least half of size
// bytes.
func dominant(ms []rawjson.Item, size int, k rawjson.Kind, data []byte) (rawjson.Item, bool) {
	for _, m := range ms {
		if 2*(m.End-m.Value) >= size && rawjson.KindOf(data[m.Value]) == k {
			return m, true
		}
	}
	return rawjson.Item{}, false
}

// dominantArray returns the array to page in an object: the configured
// ArrayPath when it names one, else the array that holds at least half of
// the object's bytes, at the top level or one level down; and its path.
func (s *shaper) dominantArray(start int, ms []rawjson.Item) (*rawjson.Item, string) {
	if p := s.rl.arrayPath; p != "" {
		cur := ms
		var found rawjson.Item
		for i, name := range strings.Split(p, ".") {
			ok := false
			for _, m := range cur {
				if s.keyOf(m) == name {
					found, ok = m, true
				}
			}
			if !ok {
				return nil, ""
			}
			if i < strings.Count(p, ".") {
				if rawjson.KindOf(s.data[found.Value]) != rawjson.Object {
					return nil, ""
				}
				cur = s.members(found.Value)
			}
		}
		if rawjson.KindOf(s.data[found.Value]) == rawjson.Array {
			return &found, p
		}
		return nil, ""
	}
	size := 0
	if len(ms) > 0 {
		size = ms[len(ms)-1].End - start
	}
	if m, ok := dominant(ms, size, rawjson.Array, s.data); ok {
		return &m, s.keyOf(m)
	}
	if m, ok := dominant(ms, size, rawjson.Object, s.data); ok {
		if inner, ok := dominant(s.members(m.Value), size, rawjson.Array, s.data); ok {
			return &inner, s.keyOf(m) + "." + s.keyOf(inner)
		}
	}
	return nil, ""
}

// isRecord reports whether an object is a record to summarize: it has
// the fields of a record (8 to 64 members), not the few members of a
// container of lists nor the many of a map.
func isRecord(ms []rawjson.Item) bool {
	return recordMinMembers <= len(ms) && len(ms) <= recordMembers
}

// outlineAround builds the outline of the object data[start:end] with the
// member value target held back (and anything else over the holding
// limit), recursing into the objects on the way to target. It fails when
// the outline takes more than its share of the page budget.
func (s *shaper) outlineAround(start, end int, target rawjson.Item, path string) (layout, bool) {
	share := s.pageBudget(160) / outlineShare
	o := outliner{s: s, target: target.Value, hold: max(share/outlineHolding, 24)}
	// The outline of the root keeps the white space around it.
	out := append([]byte(nil), s.data[:start]...)
	out = o.object(out, start, end)
	out = append(out, s.data[end:]...)
	if s.count(out, share) > share {
		return layout{}, false
	}
	return layout{outline: out, parts: o.parts, path: path}, true
}

// outliner writes an outline.
type outliner struct {
	s      *shaper
	target int // the value held back for the page or chunk beside
	hold   int
	parts  bool
}

func (o *outliner) object(dst []byte, start, end int) []byte {
	data := o.s.data
	it, _ := rawjson.Open(data, start)
	prev := start + 1
	dst = append(dst, data[start:prev]...)
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		dst = append(dst, data[prev:m.Value]...)
		prev = m.End
		switch {
		case m.Value == o.target:
			dst = o.s.appendPlaceholder(dst, m.Value, m.End)
		case m.Value < o.target && o.target < m.End && data[m.Value] == '{':
			dst = o.object(dst, m.Value, m.End)
		case o.s.holdable(m.Value, m.End) && o.s.count(data[m.Value:m.End], o.hold) > o.hold:
			dst = o.s.appendPlaceholder(dst, m.Value, m.End)
			o.parts = true
		default:
			dst = append(dst, data[m.Value:m.End]...)
		}
	}
	return append(dst, data[prev:end]...)
}

// summarize serves a summary of the object at the root; ok is false when
// the summarizer had nothing to leave out.
func (s *shaper) summarize() (Result, bool, error) {
	shape := s.rl.shape
	if shape.Endpoint == "" {
		shape.Endpoint = s.req.Path
	}
	sum, err := s.rl.summarizer.SummarizeContext(s.ctx, s.data, shape)
	if err != nil && s.ctx.Err() != nil {
		return Result{}, true, errTimeout
	}
	if err != nil || !sum.Summarized {
		return Result{}, false, nil // the member pages serve it
	}
	res, err := s.finish(sum.Response, telemetry.StrategySummary)
	if err == errOverCap {
		return Result{}, false, nil
	}
	if err != nil {
		return res, true, err
	}
	if res.Details, err = s.nextCursor(ref{kind: contDetails, end: int64(len(s.data))}); err != nil {
		return Result{}, true, err
	}
	about := ""
	if s.rec.TokensBeforeEstimated {
		about = "about "
	}
	res.Guidance = fmt.Sprintf("Showing a summary (%s of %s%s tokens; budget %s).", thousands(res.Record.TokensAfter),
		about, thousands(s.rec.TokensBefore), thousands(s.rl.budget.Threshold))
	if d := sum.Summary.Meta.DetailsAvailable; d != nil {
		if f := d.Parameters["fields"]; f != summary.FieldsAll {
			res.Guidance += fmt.Sprintf(" For the left-out fields request %s with fields=%s (or fields=all; dotted paths such as a.b work too).", d.Endpoint, f)
		} else {
			res.Guidance += fmt.Sprintf(" %s fields were left out: request %s with fields=all, or name the fields (dotted paths such as a.b work too).",
				thousands(sum.Summary.Meta.OmittedFieldCount), d.Endpoint)
		}
	}
	res.Guidance += s.strandedNote()
	return res, true, nil
}
