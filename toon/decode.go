package toon

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/internal/rawjson"
)

// Decode appends the JSON form of the TOON document src to dst and returns
// the extended buffer: compact JSON with keys in document order, strings
// escaped as ctxfit's rawjson escapes them, numbers in the canonical form
// Encode writes (exact: 1.5000 gives 1.5, -1E+03 gives -1000, -0 gives 0,
// 1e400 gives 1e+400; never rounded to a float64). Tokens read as numbers
// are exactly the JSON numbers; others such as 05 or +1 are strings.
//
// It reads spec v3 TOON in strict mode (§14): declared lengths and row
// widths must match, indentation must be a multiple of Options.Indent
// spaces with no tabs, blank lines may not fall inside an array, keys may
// not repeat, escapes are only \\ \" \n \r \t and \uXXXX (no surrogates).
// Dotted keys are literal keys (no path expansion). A line may end in CRLF.
// What does not conform is a [*SyntaxError] with its line number; dst is
// then returned without additions. Options.Indent is the only option it
// uses; invalid options are an error all the same.
//
// Decode is safe for concurrent use; it never keeps src.
func Decode(dst, src []byte, opts *Options) ([]byte, error) {
	o, err := opts.resolved()
	if err != nil {
		return dst, err
	}
	d := decoder{src: src, dst: dst, indent: o.Indent}
	base := len(dst)
	if err := d.document(); err != nil {
		return dst[:base], err
	}
	return d.dst, nil
}

// line is one line of the document that is not blank.
type line struct {
	num         int // 1-based
	start, end  int // the content: src[start:end], after the indentation
	depth       int
	blankBefore bool // a blank line precedes it
}

type decoder struct {
	src    []byte
	dst    []byte
	indent int
	lines  []line
	next   int      // index of the next line to read
	arrays int      // arrays whose items or rows are being read
	nest   int      // containers open
	buf    []byte   // scratch for the texts of quoted strings
	parts  [][]byte // scratch for split1
}

func (d *decoder) errorf(num int, format string, args ...any) error {
	return &SyntaxError{Line: num, Msg: fmt.Sprintf(format, args...)}
}

// split cuts src into lines, checking the indentation of each.
func (d *decoder) split() error {
	blank := false
	for num, i := 1, 0; i < len(d.src); num++ {
		end := bytes.IndexByte(d.src[i:], '\n')
		next := i + end + 1
		if end < 0 {
			end, next = len(d.src), len(d.src)
		} else {
			end += i
		}
		if end > i && d.src[end-1] == '\r' {
			end--
		}
		s := i
		for s < end && d.src[s] == ' ' {
			s++
		}
		content := d.src[s:end]
		if len(bytes.Trim(content, " \t")) == 0 {
			blank = true
			i = next
			continue
		}
		if content[0] == '\t' {
			return d.errorf(num, "a tab in the indentation (indent with spaces only)")
		}
		if (s-i)%d.indent != 0 {
			return d.errorf(num, "an indentation of %d spaces is not a multiple of %d", s-i, d.indent)
		}
		d.lines = append(d.lines, line{num: num, start: s, end: end, depth: (s - i) / d.indent, blankBefore: blank})
		blank = false
		i = next
	}
	return nil
}

// peek returns the next line, if any.
func (d *decoder) peek() (line, bool) {
	if d.next < len(d.lines) {
		return d.lines[d.next], true
	}
	return line{}, false
}

// take consumes the next line and returns its content.
func (d *decoder) take() (line, []byte, error) {
	ln := d.lines[d.next]
	d.next++
	if ln.blankBefore && d.arrays > 0 {
		return ln, nil, d.errorf(ln.num, "a blank line inside an array")
	}
	return ln, d.src[ln.start:ln.end], nil
}

func (d *decoder) open(num int) error {
	d.nest++
	if d.nest > rawjson.MaxDepth {
		return d.errorf(num, "nesting deeper than %d levels", rawjson.MaxDepth)
	}
	return nil
}

func (d *decoder) document() error {
	if !utf8.Valid(d.src) {
		num := 1 + bytes.Count(d.src[:firstInvalid(d.src)], []byte{'\n'})
		return d.errorf(num, "not valid UTF-8")
	}
	if err := d.split(); err != nil {
		return err
	}
	first, ok := d.peek()
	if !ok {
		d.dst = append(d.dst, '{', '}')
		return nil
	}
	if first.depth != 0 {
		return d.errorf(first.num, "the first line is indented")
	}
	content := d.src[first.start:first.end]
	switch {
	case string(bytes.TrimRight(content, " ")) == "[]":
		d.next++
		d.dst = append(d.dst, '[', ']')
	case content[0] == '[' && unquoted(content, ':', 0) >= 0:
		d.next++
		h, err := d.header(content, 0, first.num)
		if err != nil {
			return err
		}
		if err := d.array(h, 0, first.num); err != nil {
			return err
		}
	case len(d.lines) == 1 && !isFieldLine(content):
		d.next++
		if err := d.value(trimSpaces(content), first.num); err != nil {
			return err
		}
	default:
		if err := d.open(first.num); err != nil {
			return err
		}
		d.dst = append(d.dst, '{')
		if err := d.fields(0, &keySet{}, 0); err != nil {
			return err
		}
		d.dst = append(d.dst, '}')
	}
	if ln, ok := d.peek(); ok {
		return d.errorf(ln.num, "unexpected line at depth %d after the document's end", ln.depth)
	}
	return nil
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, w := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && w == 1 {
			return i
		}
		i += w
	}
	return len(b)
}

// isFieldLine reports whether content starts with a key and its colon or
// array header: a quoted key followed by ':' or '[', or an unquoted
// colon.
func isFieldLine(content []byte) bool {
	if content[0] == '"' {
		end, _, _, _ := quotedEnd(nil, content)
		return end > 0 && end < len(content) && (content[end] == ':' || content[end] == '[')
	}
	return unquoted(content, ':', 0) >= 0
}

// unquoted returns the index of the first c at or after from in s that is
// not inside a quoted string, or -1.
func unquoted(s []byte, c byte, from int) int {
	in := false
	for i := from; i < len(s); i++ {
		switch {
		case in && s[i] == '\\':
			i++
		case s[i] == '"':
			in = !in
		case !in && s[i] == c:
			return i
		}
	}
	return -1
}

func trimSpaces(s []byte) []byte { return bytes.Trim(s, " ") }

// fields reads the fields of an object at depth into dst, after n fields
// already written, until a line at a lesser depth.
func (d *decoder) fields(depth int, keys *keySet, n int) error {
	for {
		ln, ok := d.peek()
		if !ok || ln.depth < depth {
			break
		}
		if ln.depth > depth {
			return d.errorf(ln.num, "unexpected indentation: depth %d where the object's fields are at depth %d", ln.depth, depth)
		}
		ln, content, err := d.take()
		if err != nil {
			return err
		}
		if content[0] == '-' && (len(content) == 1 || content[1] == ' ') {
			return d.errorf(ln.num, "a list item where an object field was expected")
		}
		if n > 0 {
			d.dst = append(d.dst, ',')
		}
		if err := d.field(content, depth, keys, ln.num); err != nil {
			return err
		}
		n++
	}
	return nil
}

// field reads one field, "key: value", "key:" (an object below, at
// depth+1) or "key[N...]..." (an array), whose line holds content.
func (d *decoder) field(content []byte, depth int, keys *keySet, num int) error {
	var key []byte
	var i int
	if content[0] == '"' {
		end, text, buf, msg := quotedEnd(d.buf[:0], content)
		d.buf = buf
		if end < 0 {
			return d.errorf(num, "in a quoted key: %s", msg)
		}
		if end == len(content) || (content[end] != ':' && content[end] != '[') {
			return d.errorf(num, "missing colon after the key")
		}
		key, i = bytes.Clone(text), end
	} else {
		i = bytes.IndexAny(content, ":[")
		if i < 0 {
			return d.errorf(num, "missing colon after the key %q", content)
		}
		key = trimSpaces(content[:i])
		if content[i] == '[' && !isUnquotedKey(content[:i]) {
			return d.errorf(num, "the key %q before an array header must be quoted", content[:i])
		}
		if len(key) == 0 {
			return d.errorf(num, "an empty key must be quoted")
		}
	}
	if keys.add(key) {
		return d.errorf(num, "the key %q is repeated", key)
	}
	d.dst = append(d.dst, '"')
	d.dst, _ = rawjson.Escape(d.dst, key)
	d.dst = append(d.dst, '"', ':')
	if content[i] == '[' {
		h, err := d.header(content, i, num)
		if err != nil {
			return err
		}
		return d.array(h, depth, num)
	}
	rest := trimSpaces(content[i+1:])
	switch {
	case len(rest) == 0:
		if err := d.open(num); err != nil {
			return err
		}
		d.dst = append(d.dst, '{')
		if ln, ok := d.peek(); ok && ln.depth > depth {
			if ln.depth != depth+1 {
				return d.errorf(ln.num, "unexpected indentation: depth %d where the object's fields are at depth %d", ln.depth, depth+1)
			}
			if err := d.fields(depth+1, &keySet{}, 0); err != nil {
				return err
			}
		}
		d.dst = append(d.dst, '}')
		d.nest--
		return nil
	case string(rest) == "[]":
		d.dst = append(d.dst, '[', ']')
		return nil
	}
	return d.value(rest, num)
}

// header is a parsed array header.
type header struct {
	n      int
	delim  byte
	fields [][]byte // nil without a field list
	rest   []byte   // after the colon, trimmed: inline values
}

// header parses the array header whose bracket is at content[i].
func (d *decoder) header(content []byte, i, num int) (header, error) {
	h := header{delim: ','}
	j := bytes.IndexByte(content[i:], ']')
	if j < 0 {
		return h, d.errorf(num, "an array header without ']'")
	}
	seg := content[i+1 : i+j]
	i += j + 1
	if len(seg) > 0 && (seg[len(seg)-1] == '\t' || seg[len(seg)-1] == '|') {
		h.delim = seg[len(seg)-1]
		seg = seg[:len(seg)-1]
	}
	n, err := strconv.Atoi(string(seg))
	if err != nil || n < 0 || len(seg) == 0 || !isDigit(seg[0]) || (seg[0] == '0' && len(seg) > 1) {
		return h, d.errorf(num, "the array length [%s] is not a non-negative integer without leading zeros", seg)
	}
	h.n = n
	if i < len(content) && content[i] == '{' {
		end := unquoted(content, '}', i+1)
		if end < 0 {
			return h, d.errorf(num, "a field list without '}'")
		}
		list := content[i+1 : end]
		for _, other := range []byte{',', '\t', '|'} {
			if other != h.delim && unquoted(list, other, 0) >= 0 {
				return h, d.errorf(num, "the field list is split by %q where the header declares %q", other, h.delim)
			}
		}
		var keys keySet
		for _, f := range d.split1(list, h.delim) {
			f = trimSpaces(f)
			if len(f) > 0 && f[0] == '"' {
				e, text, buf, msg := quotedEnd(d.buf[:0], f)
				d.buf = buf
				if e < 0 {
					return h, d.errorf(num, "in a quoted field name: %s", msg)
				}
				if e != len(f) {
					return h, d.errorf(num, "characters after a quoted field name")
				}
				f = bytes.Clone(text)
			} else if len(f) == 0 {
				return h, d.errorf(num, "an empty field name must be quoted")
			}
			if keys.add(f) {
				return h, d.errorf(num, "the field %q is repeated", f)
			}
			h.fields = append(h.fields, f)
		}
		i = end + 1
	}
	if i == len(content) || content[i] != ':' {
		return h, d.errorf(num, "an array header must end with ':' right after its brackets or fields")
	}
	h.rest = trimSpaces(content[i+1:])
	return h, nil
}

// split1 splits s at each unquoted delim. The result is valid until the
// next call: every caller is done with it before it splits again.
func (d *decoder) split1(s []byte, delim byte) [][]byte {
	out := d.parts[:0]
	for {
		i := unquoted(s, delim, 0)
		if i < 0 {
			d.parts = append(out, s)
			return d.parts
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// array reads the array a header at depth opens: inline values, rows of a
// table at depth+1, or list items at depth+1.
func (d *decoder) array(h header, depth, num int) error {
	if err := d.open(num); err != nil {
		return err
	}
	defer func() { d.nest-- }()
	d.dst = append(d.dst, '[')
	defer func() { d.dst = append(d.dst, ']') }()
	switch {
	case len(h.rest) > 0:
		if h.fields != nil {
			return d.errorf(num, "values after a header with a field list")
		}
		vals := d.split1(h.rest, h.delim)
		if len(vals) != h.n {
			return d.errorf(num, "the array declares %d values and has %d", h.n, len(vals))
		}
		for i, v := range vals {
			if i > 0 {
				d.dst = append(d.dst, ',')
			}
			if err := d.value(trimSpaces(v), num); err != nil {
				return err
			}
		}
		return nil
	case h.fields != nil:
		return d.rows(h, depth+1, num)
	}
	d.arrays++
	count := 0
	for {
		ln, ok := d.peek()
		if !ok || ln.depth != depth+1 {
			break
		}
		c := d.src[ln.start:ln.end]
		if c[0] != '-' || (len(c) > 1 && c[1] != ' ') {
			break
		}
		ln, c, err := d.take()
		if err != nil {
			return err
		}
		if count > 0 {
			d.dst = append(d.dst, ',')
		}
		if err := d.item(c, depth+1, ln.num); err != nil {
			return err
		}
		count++
	}
	d.arrays--
	if count != h.n {
		return d.errorf(num, "the array declares %d items and has %d", h.n, count)
	}
	return nil
}

// rows reads the rows of a table at depth.
func (d *decoder) rows(h header, depth, num int) error {
	d.arrays++
	count := 0
	for {
		ln, ok := d.peek()
		if !ok || ln.depth != depth || !isRow(d.src[ln.start:ln.end], h.delim) {
			break
		}
		ln, c, err := d.take()
		if err != nil {
			return err
		}
		cells := d.split1(c, h.delim)
		if len(cells) != len(h.fields) {
			return d.errorf(ln.num, "the row has %d values for %d fields", len(cells), len(h.fields))
		}
		if err := d.open(ln.num); err != nil {
			return err
		}
		if count > 0 {
			d.dst = append(d.dst, ',')
		}
		d.dst = append(d.dst, '{')
		for i, cell := range cells {
			if i > 0 {
				d.dst = append(d.dst, ',')
			}
			d.dst = append(d.dst, '"')
			d.dst, _ = rawjson.Escape(d.dst, h.fields[i])
			d.dst = append(d.dst, '"', ':')
			if err := d.value(trimSpaces(cell), ln.num); err != nil {
				return err
			}
		}
		d.dst = append(d.dst, '}')
		d.nest--
		count++
	}
	d.arrays--
	if count != h.n {
		return d.errorf(num, "the table declares %d rows and has %d", h.n, count)
	}
	return nil
}

// isRow reports whether a line at a table's row depth is a row: its first
// unquoted delimiter comes before its first unquoted colon, or it has no
// unquoted colon (spec §9.3). Otherwise it is a key-value line.
func isRow(c []byte, delim byte) bool {
	colon := unquoted(c, ':', 0)
	if colon < 0 {
		return true
	}
	dl := unquoted(c, delim, 0)
	return dl >= 0 && dl < colon
}

// item reads a list item at depth whose line holds c ("- ..." or "-").
func (d *decoder) item(c []byte, depth, num int) error {
	if len(c) == 1 {
		if err := d.open(num); err != nil {
			return err
		}
		d.nest--
		d.dst = append(d.dst, '{', '}')
		return nil
	}
	rest := trimSpaces(c[2:])
	switch {
	case len(rest) == 0:
		return d.errorf(num, "an empty list item: write - alone for an empty object, or \"\" for an empty string")
	case rest[0] == '[' && unquoted(rest, ':', 0) >= 0:
		h, err := d.header(rest, 0, num)
		if err != nil {
			return err
		}
		return d.array(h, depth, num)
	case isFieldLine(rest):
		// The first field shares the hyphen's line; it sits at depth+1
		// (what it holds at depth+2), the other fields at depth+1.
		if err := d.open(num); err != nil {
			return err
		}
		d.dst = append(d.dst, '{')
		var keys keySet
		if err := d.field(rest, depth+1, &keys, num); err != nil {
			return err
		}
		if err := d.fields(depth+1, &keys, 1); err != nil {
			return err
		}
		d.dst = append(d.dst, '}')
		d.nest--
		return nil
	}
	return d.value(rest, num)
}

// value writes the primitive token tok (trimmed) as JSON: a quoted string,
// true, false, null, a number, or else an unquoted string.
func (d *decoder) value(tok []byte, num int) error {
	switch {
	case len(tok) == 0:
		d.dst = append(d.dst, '"', '"')
	case tok[0] == '"':
		end, text, buf, msg := quotedEnd(d.buf[:0], tok)
		d.buf = buf
		if end < 0 {
			return d.errorf(num, "%s", msg)
		}
		if end != len(tok) {
			return d.errorf(num, "characters after a quoted string: %q", tok[end:])
		}
		d.dst = append(d.dst, '"')
		d.dst, _ = rawjson.Escape(d.dst, text)
		d.dst = append(d.dst, '"')
	case string(tok) == "true" || string(tok) == "false" || string(tok) == "null":
		d.dst = append(d.dst, tok...)
	case isNumber(tok):
		dst, ok := appendNumber(d.dst, tok)
		if !ok {
			dst = append(d.dst, tok...) // an exponent beyond maxExponent: as written
		}
		d.dst = dst
	default:
		d.dst = append(d.dst, '"')
		d.dst, _ = rawjson.Escape(d.dst, tok)
		d.dst = append(d.dst, '"')
	}
	return nil
}
