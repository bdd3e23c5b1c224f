package toon

import (
	"bytes"
	"strconv"

	"github.com/ctxfit/ctxfit/internal/rawjson"
)

// Encode appends the TOON form of the JSON value data to dst and returns
// the extended buffer. It writes spec v3 TOON without key folding: uniform
// arrays of objects as tables (a header of field names, one delimited row
// per object), arrays of primitives inline, everything else as indented
// fields and "- " list items. Decoding the result with [Decode] gives data
// back as the same JSON value, key order included (see the package
// documentation for exactly what is kept).
//
// Input that is not JSON is refused with [ErrInvalidJSON]; JSON that TOON
// cannot carry losslessly is refused with an error wrapping
// [ErrUnsupported]. On error dst is returned without additions. Invalid
// options are an error too.
//
// Encode is safe for concurrent use; it reads data and never keeps it.
func Encode(dst, data []byte, opts *Options) ([]byte, error) {
	o, err := opts.resolved()
	if err != nil {
		return dst, err
	}
	start, end, ok := rawjson.Root(data)
	if !ok {
		return dst, ErrInvalidJSON
	}
	e := encoder{data: data, dst: dst, base: len(dst), delim: byte(o.Delimiter), indent: o.Indent, maxDepth: o.MaxDepth}
	if err := e.root(start, end); err != nil {
		return dst[:e.base], err
	}
	return e.dst, nil
}

// encoder writes one document. Positions are offsets in data, which
// rawjson has validated.
type encoder struct {
	data     []byte
	dst      []byte
	base     int // where the document starts in dst
	delim    byte
	indent   int
	maxDepth int
	depth    int    // containers entered
	buf      []byte // scratch for texts of strings with escapes
}

// position is where an array is written: its empty form and whether a
// table may be used depend on it.
type position int

const (
	atRoot  position = iota // "[]"; "[N]..." with no key
	atField                 // "key: []"; "key[N]..."
	atItem                  // "- [0]:"; "- [N]:" and never a table (spec §9.4)
)

// newline starts a line at depth, unless nothing has been written yet.
func (e *encoder) newline(depth int) {
	if len(e.dst) > e.base {
		e.dst = append(e.dst, '\n')
	}
	for range depth * e.indent {
		e.dst = append(e.dst, ' ')
	}
}

// enter counts a container opened at off, refusing one too deep.
func (e *encoder) enter(off int) error {
	e.depth++
	if e.depth > e.maxDepth {
		return unsupported(off, "nesting deeper than %d levels", e.maxDepth)
	}
	return nil
}

func (e *encoder) root(start, end int) error {
	switch e.data[start] {
	case '{':
		return e.object(start, 0, false) // {} is the empty document
	case '[':
		return e.array(start, 0, atRoot)
	}
	return e.primitive(start, end, e.delim)
}

// object writes the members of the object at start as fields at depth.
// With inline set, the first member goes on the current line (after a list
// item's "- "), the others on lines of their own.
func (e *encoder) object(start, depth int, inline bool) error {
	if err := e.enter(start); err != nil {
		return err
	}
	var keys keySet
	it, _ := rawjson.Open(e.data, start)
	for n := 0; ; n++ {
		item, ok := it.Next()
		if !ok {
			break
		}
		key, err := e.key(item)
		if err != nil {
			return err
		}
		if keys.add(key) {
			return unsupported(item.Start, "the key %s is repeated in an object", strconv.Quote(string(key)))
		}
		if n > 0 || !inline {
			e.newline(depth)
		}
		if err := e.field(key, item, depth); err != nil {
			return err
		}
	}
	e.depth--
	return nil
}

// key returns the text of a member's key.
func (e *encoder) key(item rawjson.Item) ([]byte, error) {
	key, buf, ok := jsonText(e.buf[:0], e.data[item.Start+1:item.KeyEnd-1])
	e.buf = buf
	if !ok {
		return nil, unsupported(item.Start, "a key that is not valid Unicode (invalid UTF-8 or a lone surrogate escape)")
	}
	if len(buf) > 0 {
		key = bytes.Clone(key) // e.buf is reused
	}
	return key, nil
}

// field writes one member at the current position: its key, and its value
// as a primitive after ": ", an object below at depth+1, or an array.
func (e *encoder) field(key []byte, item rawjson.Item, depth int) error {
	e.appendKey(key)
	switch e.data[item.Value] {
	case '{':
		e.dst = append(e.dst, ':')
		return e.object(item.Value, depth+1, false)
	case '[':
		return e.array(item.Value, depth, atField)
	}
	e.dst = append(e.dst, ':', ' ')
	return e.primitive(item.Value, item.End, e.delim)
}

func (e *encoder) appendKey(key []byte) {
	if isUnquotedKey(key) {
		e.dst = append(e.dst, key...)
	} else {
		e.dst = appendQuoted(e.dst, key)
	}
}

// array writes the array at start after what the current line holds (a
// key, "- ", or nothing at the root); its rows or items go at depth+1.
func (e *encoder) array(start, depth int, pos position) error {
	if err := e.enter(start); err != nil {
		return err
	}
	defer func() { e.depth-- }()
	// One pass finds the length, whether all elements are primitives, and
	// whether they make a table.
	n, prims := 0, true
	t := table{possible: pos != atItem}
	it, _ := rawjson.Open(e.data, start)
	for item, ok := it.Next(); ok; item, ok = it.Next() {
		n++
		if c := e.data[item.Start]; c == '{' || c == '[' {
			prims = false
		}
		if err := e.addRow(&t, item.Start); err != nil {
			return err
		}
	}
	switch {
	case n == 0 && pos == atItem:
		e.header(0, nil)
		return nil
	case n == 0 && pos == atField:
		e.dst = append(e.dst, ':', ' ', '[', ']')
		return nil
	case n == 0:
		e.dst = append(e.dst, '[', ']')
		return nil
	case prims:
		e.header(n, nil)
		e.dst = append(e.dst, ' ')
		it, _ := rawjson.Open(e.data, start)
		for i := 0; ; i++ {
			item, ok := it.Next()
			if !ok {
				return nil
			}
			if i > 0 {
				e.dst = append(e.dst, e.delim)
			}
			if err := e.primitive(item.Start, item.End, e.delim); err != nil {
				return err
			}
		}
	case t.possible:
		e.header(n, t.fields)
		return e.rows(start, depth+1)
	}
	e.header(n, nil)
	it, _ = rawjson.Open(e.data, start)
	for item, ok := it.Next(); ok; item, ok = it.Next() {
		e.newline(depth + 1)
		if err := e.item(item.Start, item.End, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// header writes "[N]:" or "[N]{f1,f2}:", naming the delimiter when it is
// not the comma.
func (e *encoder) header(n int, fields [][]byte) {
	e.dst = append(e.dst, '[')
	e.dst = strconv.AppendInt(e.dst, int64(n), 10)
	if e.delim != ',' {
		e.dst = append(e.dst, e.delim)
	}
	e.dst = append(e.dst, ']')
	if fields != nil {
		e.dst = append(e.dst, '{')
		for i, f := range fields {
			if i > 0 {
				e.dst = append(e.dst, e.delim)
			}
			e.appendKey(f)
		}
		e.dst = append(e.dst, '}')
	}
	e.dst = append(e.dst, ':')
}

// table tells whether the elements of an array seen so far make a table:
// every element an object with at least one member, all with the same keys
// in the same order, every value a primitive. The order must be the same
// because a table has one order for all rows: objects that list their keys
// in other orders are written as list items, which keep each one's order.
type table struct {
	possible bool
	fields   [][]byte // the keys of the first object
}

// addRow adds the element at start to t.
func (e *encoder) addRow(t *table, start int) error {
	if !t.possible {
		return nil
	}
	if e.data[start] != '{' {
		t.possible = false
		return nil
	}
	first := t.fields == nil
	var keys keySet
	m, _ := rawjson.Open(e.data, start)
	i := 0
	for item, ok := m.Next(); ok; item, ok = m.Next() {
		if c := e.data[item.Value]; c == '{' || c == '[' {
			t.possible = false
			return nil
		}
		key, err := e.key(item)
		if err != nil {
			return err
		}
		if first {
			if keys.add(key) {
				return unsupported(item.Start, "the key %s is repeated in an object", strconv.Quote(string(key)))
			}
			t.fields = append(t.fields, key)
		} else if i >= len(t.fields) || !bytes.Equal(key, t.fields[i]) {
			t.possible = false
			return nil
		}
		i++
	}
	if i == 0 || i != len(t.fields) {
		t.possible = false
	}
	return nil
}

// rows writes the objects of a table as rows at depth.
func (e *encoder) rows(start, depth int) error {
	it, _ := rawjson.Open(e.data, start)
	for el, ok := it.Next(); ok; el, ok = it.Next() {
		if err := e.enter(el.Start); err != nil {
			return err
		}
		e.newline(depth)
		m, _ := rawjson.Open(e.data, el.Start)
		for i := 0; ; i++ {
			item, ok := m.Next()
			if !ok {
				break
			}
			if i > 0 {
				e.dst = append(e.dst, e.delim)
			}
			if err := e.primitive(item.Value, item.End, e.delim); err != nil {
				return err
			}
		}
		e.depth--
	}
	return nil
}

// item writes the array element data[start:end] as a list item at depth (the
// line is started): "- " and a primitive, an array, or an object whose
// first field shares the line and whose other fields follow at depth+1.
// An empty object is a bare "-".
func (e *encoder) item(start, end, depth int) error {
	switch e.data[start] {
	case '{':
		if e.data[rawjson.Space(e.data, start+1)] == '}' {
			if err := e.enter(start); err != nil {
				return err
			}
			e.depth--
			e.dst = append(e.dst, '-')
			return nil
		}
		e.dst = append(e.dst, '-', ' ')
		return e.object(start, depth+1, true)
	case '[':
		e.dst = append(e.dst, '-', ' ')
		return e.array(start, depth, atItem)
	}
	e.dst = append(e.dst, '-', ' ')
	return e.primitive(start, end, e.delim)
}

// primitive writes the string, number, boolean or null data[start:end],
// quoting a string when delim or anything else requires it.
func (e *encoder) primitive(start, end int, delim byte) error {
	switch c := e.data[start]; {
	case c == '"':
		text, buf, ok := jsonText(e.buf[:0], e.data[start+1:end-1])
		e.buf = buf
		if !ok {
			return unsupported(start, "a string that is not valid Unicode (invalid UTF-8 or a lone surrogate escape)")
		}
		if needsQuotes(text, delim) {
			e.dst = appendQuoted(e.dst, text)
		} else {
			e.dst = append(e.dst, text...)
		}
	case c == '-' || isDigit(c):
		from := len(e.dst)
		dst, ok := appendNumber(e.dst, e.data[start:end])
		if !ok {
			return unsupported(start, "the exponent of the number %.40s is %g or more in magnitude", e.data[start:end], float64(maxExponent))
		}
		if overflows(dst[from:]) {
			return unsupported(start, "the number %.40s is beyond float64's range, where readers such as the reference TOON decoder see infinity or a string", e.data[start:end])
		}
		e.dst = dst
	case c == 't':
		e.dst = append(e.dst, "true"...)
	case c == 'f':
		e.dst = append(e.dst, "false"...)
	default:
		e.dst = append(e.dst, "null"...)
	}
	return nil
}

// keySet holds the keys of one object, to find a repeated one.
type keySet struct {
	small [8][]byte
	n     int
	large map[string]struct{}
}

// add adds k and reports whether it was there already.
func (s *keySet) add(k []byte) bool {
	if s.large != nil {
		if _, ok := s.large[string(k)]; ok {
			return true
		}
		s.large[string(k)] = struct{}{}
		return false
	}
	for _, x := range s.small[:s.n] {
		if bytes.Equal(x, k) {
			return true
		}
	}
	if s.n < len(s.small) {
		s.small[s.n] = k
		s.n++
		return false
	}
	s.large = make(map[string]struct{}, 2*len(s.small))
	for _, x := range s.small {
		s.large[string(x)] = struct{}{}
	}
	s.large[string(k)] = struct{}{}
	return false
}
