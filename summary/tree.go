package summary

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is a decoded JSON value that remembers the order of object keys, the
// literal text of numbers and, when it was parsed, its bytes in the input.
//
// Scalars keep their text in lit: the decoded string, or "true"/"false";
// a number's literal is its raw text. Objects hold keys and vals in input
// order; arrays hold vals. raw is the value's text in the input, white
// space inside it included; nil for a node made by this package (a cut
// string, a projection).
type node struct {
	kind kind
	lit  string
	keys []string
	vals []*node
	raw  []byte
}

// get returns the value of key in the object n, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// text returns the text of a scalar: a string decoded, a number as written.
func (n *node) text() string {
	if n.kind == kindNumber {
		return string(n.raw)
	}
	return n.lit
}

// textLen is len(n.text()).
func (n *node) textLen() int {
	if n.kind == kindNumber {
		return len(n.raw)
	}
	return len(n.lit)
}

// isScalar reports whether n is neither an array nor an object.
func (n *node) isScalar() bool { return n.kind < kindArray }

// maxDepth is the deepest nesting of arrays and objects that encoding/json
// accepts (its scanner's maxNestingDepth).
const maxDepth = 10000

// checkEvery is the number of loop iterations between two looks at the
// context: small enough that work stops within a millisecond or so of a
// cancellation, large enough that the look costs nothing measurable.
const checkEvery = 1024

// stopper tells long loops when their context has ended. The zero value
// (and a nil *stopper) never stops.
type stopper struct {
	ctx  context.Context
	done <-chan struct{}
	n    int
}

func newStopper(ctx context.Context) *stopper {
	return &stopper{ctx: ctx, done: ctx.Done()}
}

// tick counts one iteration and, every checkEvery of them, returns the
// context's error when it has ended.
func (s *stopper) tick() error {
	if s == nil || s.done == nil {
		return nil
	}
	s.n++
	if s.n%checkEvery != 0 {
		return nil
	}
	return s.check()
}

// check returns the context's error when it has ended.
func (s *stopper) check() error {
	if s == nil || s.done == nil {
		return nil
	}
	select {
	case <-s.done:
		return stopped(s.ctx)
	default:
		return nil
	}
}

// stopped is the error of work stopped because ctx ended: it wraps
// ctx.Err() and says why when the context has its own cause.
func stopped(ctx context.Context) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("summary: stopped: %w (%w)", err, cause)
	}
	return fmt.Errorf("summary: stopped: %w", err)
}

// parse decodes exactly one JSON value from data. It accepts exactly what
// encoding/json accepts (nesting at most 10,000 deep, invalid UTF-8 in
// strings included); numbers are kept as written, strings are decoded as
// encoding/json decodes them. Of duplicate object keys the last value wins,
// at the position of the first, as with encoding/json. It stops with the
// context's error when ctx ends.
func parse(ctx context.Context, data []byte) (*node, error) {
	p := parser{data: data, stop: newStopper(ctx)}
	return p.run(guide{mode: buildAll})
}

// parseGuided is parse that builds only the part of the value that the
// paths of t can reach: the members of objects that t names, through
// arrays, and below each path's end the whole value (for projection). The
// rest is checked but not built, so that the members a projection does not
// take cost a scan of their bytes and no memory.
func parseGuided(ctx context.Context, data []byte, t *pathTrie) (*node, error) {
	p := parser{data: data, stop: newStopper(ctx), leaf: buildAll}
	return p.run(guide{mode: follow, t: t})
}

// parseShallow builds only the top-level members of an object, or of the
// objects in an array, each with its raw text: enough for [topKeys].
func parseShallow(ctx context.Context, data []byte) (*node, error) {
	p := parser{data: data, stop: newStopper(ctx), raw: true}
	return p.run(guide{mode: shallow})
}

// parseRaw is parseGuided for drill-downs: below a path's end it builds
// nothing (the value is written as its raw text); of duplicate object keys
// the last one wins at its own position, as a drill-down serves them; and
// it returns the raw text of the keys of each object it built.
func parseRaw(ctx context.Context, data []byte, t *pathTrie) (*node, map[*node][][]byte, error) {
	p := parser{data: data, stop: newStopper(ctx), raw: true, leaf: rawOnly}
	n, err := p.run(guide{mode: follow, t: t})
	return n, p.rawKeyTable, err
}

// Modes of a guide.
const (
	buildAll uint8 = iota // build the whole value
	rawOnly               // check the value and keep its raw text only
	follow                // build the members t names
	shallow               // build the members of objects with their raw text only, through arrays
	prefix                // build levels levels of containers, and what t names below them
)

// guide says what part of a value a parse builds.
type guide struct {
	mode   uint8
	t      *pathTrie // for follow and prefix; nil for none
	levels int       // for prefix
}

// parser is a recursive-descent JSON parser that builds nodes. It runs in
// time linear in the input: objects of more than a few keys find duplicate
// keys through a map.
type parser struct {
	data  []byte
	pos   int
	depth int
	raw   bool  // drill-down mode: last duplicate at its position, raw keys
	leaf  uint8 // the mode below the end of a followed path
	stop  *stopper
	slab  []node

	// Members of the objects and elements of the arrays being parsed,
	// copied into each node at its end, so that a node's slices have
	// exactly its length.
	keys    []string
	vals    []*node
	rawKeys [][]byte
	elems   []*node

	// rawKeyTable holds, in drill-down mode, the raw text of the keys of
	// each object built, quotes included.
	rawKeyTable map[*node][][]byte
}

// syntaxError is a parse failure at a byte offset.
type syntaxError struct {
	msg string
	at  int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.at) }

func (p *parser) run(g guide) (*node, error) {
	n, err := p.value(g)
	if err == nil {
		p.space()
		if p.pos < len(p.data) {
			err = &syntaxError{"data after the first value", p.pos}
		}
	}
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
		}
		return nil, err
	}
	return n, nil
}

func (p *parser) alloc(k kind) *node {
	if len(p.slab) == 0 {
		p.slab = make([]node, 128)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	n.kind = k
	return n
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) errAt(msg string) error {
	if p.pos >= len(p.data) {
		return &syntaxError{"unexpected end of input", p.pos}
	}
	return &syntaxError{fmt.Sprintf("%s: invalid character %q", msg, p.data[p.pos]), p.pos}
}

// kindAt returns the kind of the valid value that starts with c.
func kindAt(c byte) kind {
	switch c {
	case '{':
		return kindObject
	case '[':
		return kindArray
	case '"':
		return kindString
	case 't', 'f':
		return kindBool
	case 'n':
		return kindNull
	}
	return kindNumber
}

// value parses the value at p.pos (after white space) as g says.
func (p *parser) value(g guide) (*node, error) {
	if err := p.stop.tick(); err != nil {
		return nil, err
	}
	p.space()
	start := p.pos
	var n *node
	if g.mode == rawOnly || g.mode == prefix && g.levels == 0 && g.t == nil && p.pos < len(p.data) && (p.data[p.pos] == '{' || p.data[p.pos] == '[') {
		if err := p.skip(); err != nil {
			return nil, err
		}
		n = p.alloc(kindAt(p.data[start]))
		n.raw = p.data[start:p.pos]
		return n, nil
	}
	if p.pos >= len(p.data) {
		return nil, p.errAt("")
	}
	switch c := p.data[p.pos]; c {
	case '{':
		var err error
		if n, err = p.object(g); err != nil {
			return nil, err
		}
	case '[':
		var err error
		if n, err = p.array(g); err != nil {
			return nil, err
		}
	case '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		n = p.alloc(kindString)
		n.lit = s
	default:
		if err := p.scalar(); err != nil {
			return nil, err
		}
		n = p.alloc(kindAt(c))
		switch c {
		case 't':
			n.lit = "true"
		case 'f':
			n.lit = "false"
		}
	}
	n.raw = p.data[start:p.pos]
	return n, nil
}

// scalar scans the number or literal at p.pos.
func (p *parser) scalar() error {
	switch c := p.data[p.pos]; {
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return p.errAt("looking for the beginning of a value")
}

// skip checks the value at p.pos (after white space) and moves past it,
// building nothing.
func (p *parser) skip() error {
	if err := p.stop.tick(); err != nil {
		return err
	}
	p.space()
	if p.pos >= len(p.data) {
		return p.errAt("")
	}
	switch p.data[p.pos] {
	case '"':
		_, err := p.strBody()
		return err
	case '[':
		if err := p.enter(); err != nil {
			return err
		}
		p.pos++
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			p.depth--
			return nil
		}
		for {
			if err := p.skip(); err != nil {
				return err
			}
			if done, err := p.next(']', "after array element"); done || err != nil {
				return err
			}
		}
	case '{':
		if err := p.enter(); err != nil {
			return err
		}
		p.pos++
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			p.depth--
			return nil
		}
		for {
			if _, err := p.key(); err != nil {
				return err
			}
			if err := p.skip(); err != nil {
				return err
			}
			if done, err := p.next('}', "after object key:value pair"); done || err != nil {
				return err
			}
		}
	}
	return p.scalar()
}

// next moves past the ',' or the closing byte end that follows a member
// or an element, and reports whether it was end.
func (p *parser) next(end byte, what string) (bool, error) {
	p.space()
	if p.pos >= len(p.data) {
		return false, p.errAt("")
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case end:
		p.pos++
		p.depth--
		return true, nil
	}
	return false, p.errAt(what)
}

// key scans an object key and the ':' after it and returns the body of the
// key (between its quotes).
func (p *parser) key() ([]byte, error) {
	p.space()
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return nil, p.errAt("looking for the beginning of an object key string")
	}
	body, err := p.strBody()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos >= len(p.data) || p.data[p.pos] != ':' {
		return nil, p.errAt("after object key")
	}
	p.pos++
	return body, nil
}

func (p *parser) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.data) || p.data[p.pos] != word[i] {
			return p.errAt("in literal " + word)
		}
		p.pos++
	}
	return nil
}

// number scans a number as RFC 8259 (and encoding/json) defines it.
func (p *parser) number() error {
	d := p.data
	if d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
	case p.pos < len(d) && d[p.pos] >= '1' && d[p.pos] <= '9':
		p.digits()
	default:
		return p.errAt("in numeric literal")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return p.errAt("after decimal point in numeric literal")
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return p.errAt("in exponent of numeric literal")
		}
	}
	return nil
}

func (p *parser) digits() int {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}

// str scans the string at p.pos (its opening quote) and returns it decoded
// as encoding/json decodes it: escapes resolved, invalid UTF-8 and lone
// surrogates replaced by U+FFFD.
func (p *parser) str() (string, error) {
	body, err := p.strBody()
	if err != nil {
		return "", err
	}
	return decodeBody(body), nil
}

// decodeBody decodes the body of a valid string literal.
func decodeBody(body []byte) string {
	if !needsUnquote(body) {
		return string(body)
	}
	return unquote(body)
}

// strBody scans the string at p.pos (its opening quote), checks it, and
// returns its body, between the quotes.
func (p *parser) strBody() ([]byte, error) {
	d := p.data
	p.pos++ // '"'
	start := p.pos
	for {
		// The common bytes, in a tight loop.
		for p.pos < len(d) {
			if c := d[p.pos]; c == '"' || c == '\\' || c < 0x20 {
				break
			}
			p.pos++
		}
		if p.pos >= len(d) {
			return nil, p.errAt("")
		}
		switch c := d[p.pos]; {
		case c == '"':
			body := d[start:p.pos]
			p.pos++
			return body, nil
		case c == '\\':
			p.pos++
			if p.pos >= len(d) {
				return nil, p.errAt("")
			}
			switch d[p.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos++
			case 'u':
				p.pos++
				for range 4 {
					if p.pos >= len(d) || !isHex(d[p.pos]) {
						return nil, p.errAt("in \\u hexadecimal character escape")
					}
					p.pos++
				}
			default:
				return nil, p.errAt("in string escape code")
			}
		default: // a control character
			return nil, p.errAt("in string literal")
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// needsUnquote reports whether the body of a valid string literal has
// escapes or invalid UTF-8.
func needsUnquote(b []byte) bool {
	ascii := true
	for _, c := range b {
		if c == '\\' {
			return true
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return !ascii && !utf8.Valid(b)
}

// unquote decodes the body of a valid string literal as encoding/json
// does.
func unquote(s []byte) string {
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			switch s[r+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := getu4(s[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if rr1 := getu4(s[r:]); rr1 >= 0 {
						if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
							r += 6
							b = utf8.AppendRune(b, dec)
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr) // RuneError for an invalid byte
		}
	}
	return string(b)
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	r, err := strconv.ParseUint(string(s[2:6]), 16, 64)
	if err != nil {
		return -1
	}
	return rune(r)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return &syntaxError{fmt.Sprintf("exceeded max depth %d", maxDepth), p.pos}
	}
	return nil
}

func (p *parser) array(g guide) (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	n := p.alloc(kindArray)
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return n, nil
	}
	base := len(p.elems)
	if g.mode == prefix {
		// The elements of a nested array are only looked at as scalars
		// (a list of them is a candidate of a summary); those of a
		// top-level array make the top-level fields.
		g.levels = max(g.levels-1, 0)
		if p.depth > 1 {
			g.levels = 0
		}
	}
	for {
		v, err := p.value(g)
		if err != nil {
			return nil, err
		}
		p.elems = append(p.elems, v)
		done, err := p.next(']', "after array element")
		if err != nil {
			return nil, err
		}
		if done {
			n.vals = slices.Clone(p.elems[base:])
			clear(p.elems[base:])
			p.elems = p.elems[:base]
			return n, nil
		}
	}
}

func (p *parser) object(g guide) (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '{'
	n := p.alloc(kindObject)
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return n, nil
	}
	base := len(p.keys)
	for {
		p.space()
		kstart := p.pos
		body, err := p.key()
		if err != nil {
			return nil, err
		}
		if sub, keep := p.member(g, body); keep {
			v, err := p.value(sub)
			if err != nil {
				return nil, err
			}
			p.keys = append(p.keys, decodeBody(body))
			p.vals = append(p.vals, v)
			if p.raw {
				p.rawKeys = append(p.rawKeys, p.data[kstart:kstart+len(body)+2])
			}
		} else if err := p.skip(); err != nil {
			return nil, err
		}
		done, err := p.next('}', "after object key:value pair")
		if err != nil {
			return nil, err
		}
		if done {
			p.endObject(n, base)
			return n, nil
		}
	}
}

// indexFrom is the number of keys from which an object finds duplicate keys
// through a map rather than by comparing each key with the ones before.
const indexFrom = 16

// endObject moves the members from base on into n. Of duplicate keys the
// last value wins, at the position of the first (or, in drill-down mode,
// at its own position).
func (p *parser) endObject(n *node, base int) {
	keys, vals := p.keys[base:], p.vals[base:]
	var rawKeys [][]byte
	if p.raw {
		rawKeys = p.rawKeys[base:]
	}
	// Find duplicates: a dropped member gets a nil value.
	dropped := false
	drop := func(first, later int) {
		dropped = true
		if p.raw {
			vals[first] = nil
			return
		}
		vals[first], vals[later] = vals[later], nil
	}
	if len(keys) < indexFrom {
		for i := 1; i < len(keys); i++ {
			for j := range i {
				if vals[j] != nil && keys[j] == keys[i] {
					drop(j, i)
					break
				}
			}
		}
	} else {
		at := make(map[string]int, len(keys))
		for i, k := range keys {
			j, seen := at[k]
			if !seen {
				at[k] = i
				continue
			}
			drop(j, i)
			if p.raw {
				at[k] = i
			}
		}
	}
	if dropped {
		w := 0
		for i, v := range vals {
			if v == nil {
				continue
			}
			keys[w], vals[w] = keys[i], v
			if rawKeys != nil {
				rawKeys[w] = rawKeys[i]
			}
			w++
		}
		keys, vals = keys[:w], vals[:w]
		if rawKeys != nil {
			rawKeys = rawKeys[:w]
		}
	}
	n.keys, n.vals = slices.Clone(keys), slices.Clone(vals)
	if rawKeys != nil {
		if p.rawKeyTable == nil {
			p.rawKeyTable = map[*node][][]byte{}
		}
		p.rawKeyTable[n] = slices.Clone(rawKeys)
	}
	clear(p.keys[base:])
	clear(p.vals[base:])
	p.keys, p.vals = p.keys[:base], p.vals[:base]
	if p.raw {
		clear(p.rawKeys[base:])
		p.rawKeys = p.rawKeys[:base]
	}
}

// member returns how to parse the value of the member whose key has the
// body key, in an object parsed as g says, or false when the member is not
// built at all.
func (p *parser) member(g guide, key []byte) (guide, bool) {
	var c *pathTrie
	if g.t != nil {
		// Look the key up without decoding it when it needs no decoding.
		if needsUnquote(key) {
			c = g.t.children[unquote(key)]
		} else {
			c = g.t.children[string(key)]
		}
	}
	switch g.mode {
	case shallow:
		return guide{mode: rawOnly}, true
	case follow:
		switch {
		case c == nil:
			return guide{}, false
		case c.leaf:
			return guide{mode: p.leaf}, true
		}
		return guide{mode: follow, t: c}, true
	case prefix:
		switch {
		case c != nil && c.leaf:
			return guide{mode: buildAll}, true
		case c != nil:
			return guide{mode: prefix, t: c, levels: max(g.levels-1, 0)}, true
		case g.levels == 0:
			return guide{}, false
		}
		return guide{mode: prefix, levels: g.levels - 1}, true
	}
	return g, true
}

// appendJSON appends the compact JSON of n to dst. Numbers are written as
// they were read; strings as encoding/json writes them.
func appendJSON(dst []byte, n *node) []byte {
	switch n.kind {
	case kindNull:
		return append(dst, "null"...)
	case kindBool:
		return append(dst, n.lit...)
	case kindNumber:
		return append(dst, n.raw...)
	case kindString:
		return appendString(dst, n.lit)
	case kindArray:
		dst = append(dst, '[')
		for i, v := range n.vals {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, v)
		}
		return append(dst, ']')
	default:
		dst = append(dst, '{')
		for i, k := range n.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendJSON(dst, n.vals[i])
		}
		return append(dst, '}')
	}
}

// appendString appends s as a JSON string, byte for byte as json.Marshal
// writes it.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// topKeys returns the top-level field names of n: the keys of an object, or
// the union of the keys of the objects in an array, in order of first
// appearance.
func topKeys(n *node) []string {
	switch n.kind {
	case kindObject:
		return append([]string(nil), n.keys...)
	case kindArray:
		seen := map[string]bool{}
		var keys []string
		for _, v := range n.vals {
			if v.kind != kindObject {
				continue
			}
			for _, k := range v.keys {
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
		return keys
	}
	return nil
}
