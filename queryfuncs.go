package ctxfit

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/itchyny/gojq"
)

// A query's functions run in Go code that gojq calls between the steps
// where it checks the query's context: one that runs long in a single
// call keeps a query past its time limit, and past its client leaving.
// gojq's regular expression functions (match, capture, scan, splits,
// split/2, sub, gsub) take time quadratic in the string, and so do
// indices, index and rindex (in the needle times the haystack), and
// contains and inside over arrays (in the items of one times the other's):
// a query over a list of a few thousand items ran for minutes. ctxfit
// replaces them with its own, which give jq's results (the same matches,
// offsets in codepoints, and errors) and stop when the context ends.
//
// The regular expression functions (test too) find the matches one at a
// time, count codepoints as they go, build each result once, and check the
// context between matches and as a search reads (every 4,096 runes). A
// search reads the string as runes (search): what all the searches of one
// call read is bounded by readsPerByte times the string's length, whatever
// the pattern (an empty match at every position reads about 4 runes); a
// pattern that must read to the end to know where each match ends (a*b|a
// over a run of a's, quadratic in Go's FindAll) is an error past that
// bound, which says so. indices, index and rindex
// find the occurrences with Knuth-Morris-Pratt, in linear time. contains
// and inside over two arrays or two objects are written in jq, so that
// gojq checks the context between the comparisons; over anything else they
// are gojq's.

// jqDefs shadow gojq's definitions of the functions above (builtin.jq
// in gojq, or its Go functions) with ones that call the functions below;
// a query's own definitions shadow them in turn. _ctxfit_contains is
// gojq's contains, named before contains is defined again.
const jqDefs = `
def match($re; $flags): _ctxfit_match($re; $flags)[];
def match($re): if $re | type == "array" then match($re[0]; $re[1]) else match($re; null) end;
def test($re; $flags): _ctxfit_test($re; $flags);
def test($re): if $re | type == "array" then test($re[0]; $re[1]) else test($re; null) end;
def capture($re; $flags): match($re; $flags) | .captures | _captures;
def capture($re): if $re | type == "array" then capture($re[0]; $re[1]) else capture($re; null) end;
def scan($re; $flags): match($re; $flags + "g") | if .captures == [] then .string else [.captures[].string] end;
def scan($re): scan($re; null);
def splits($re; $flags): _ctxfit_splits($re; $flags + "g")[];
def splits($re): splits($re; null);
def split($re; $flags): [splits($re; $flags)];
def sub($re; str; $flags): . as $s |
  [match($re; $flags) | [.offset, .length, [.captures | _captures | str | _ctxfit_held]]] | _ctxfit_sub($s)[];
def sub($re; str): sub($re; str; null);
def gsub($re; str): sub($re; str; "g");
def gsub($re; str; $flags): sub($re; str; $flags + "g");
def indices($i): _ctxfit_indices($i);
def index($i): _ctxfit_index($i);
def rindex($i): _ctxfit_rindex($i);
def _ctxfit_contains($b): contains($b);
def contains($b):
  if type == "array" and ($b | type) == "array" then
    . as $a | all($b[]; . as $y | any($a[]; try contains($y) catch false))
  elif type == "object" and ($b | type) == "object" then
    . as $a | length >= ($b | length) and
      all($b | keys[]; . as $k | ($a | has($k)) and (try ($a[$k] | contains($b[$k])) catch false))
  else
    _ctxfit_contains($b)
  end;
def inside($a): . as $b | $a | contains($b);
.`

// boundedFuncNames are words in the names of the functions jqDefs
// defines again.
var boundedFuncNames = []string{"match", "test", "capture", "scan", "split", "sub", "index", "indices", "contains", "inside"}

// withBoundedFunctions adds ctxfit's own functions and operators to q,
// the query expr, and returns the compiler options they need; they check
// ctx as they go, and bound what a step builds, and what the query builds
// in all, by limit bytes (queryValueLimit). Only the definitions a query
// names are added: compiling them costs more than compiling a small query.
func withBoundedFunctions(ctx context.Context, q *gojq.Query, expr string, limit int) []gojq.CompilerOption {
	var defs []*gojq.FuncDef
	if rewriteOps(q, !strings.Contains(expr, "def map")) || namesAny(expr, opFuncNames) {
		defs = append(defs, parseDefs(jqOpDefs).FuncDefs...)
	}
	if namesAny(expr, boundedFuncNames) {
		defs = append(defs, parseDefs(jqDefs).FuncDefs...)
	}
	if namesAny(expr, heldFuncNames) {
		defs = append(defs, parseDefs(jqHeldDefs).FuncDefs...)
	}
	q.FuncDefs = append(defs, q.FuncDefs...)
	x := &jqFuncs{ctx: ctx, cache: map[[2]string]*jqMatcher{}, limit: limit}
	return []gojq.CompilerOption{
		gojq.WithFunction("_ctxfit_match", 2, 2, x.match),
		gojq.WithFunction("_ctxfit_splits", 2, 2, x.splits),
		gojq.WithFunction("_ctxfit_test", 2, 2, x.test),
		gojq.WithFunction("_ctxfit_sub", 1, 1, x.sub),
		gojq.WithFunction("_ctxfit_indices", 1, 1, x.occurrences("indices")),
		gojq.WithFunction("_ctxfit_index", 1, 1, x.occurrences("index")),
		gojq.WithFunction("_ctxfit_rindex", 1, 1, x.occurrences("rindex")),
		gojq.WithFunction("_ctxfit_add", 2, 2, x.arithmetic('+')),
		gojq.WithFunction("_ctxfit_subtract", 2, 2, x.arithmetic('-')),
		gojq.WithFunction("_ctxfit_multiply", 2, 2, x.arithmetic('*')),
		gojq.WithFunction("_ctxfit_sum", 0, 0, x.sum),
		gojq.WithFunction("_ctxfit_joined", 1, 1, x.joined),
		gojq.WithFunction("_ctxfit_written", 0, 0, x.written),
		gojq.WithFunction("_ctxfit_compared", 2, 2, x.compared),
		gojq.WithFunction("_ctxfit_exploded", 0, 0, x.exploded),
		gojq.WithFunction("_ctxfit_held", 0, 0, x.held),
		gojq.WithFunction("_ctxfit_path", 1, 1, x.path),
		gojq.WithFunction("_ctxfit_sized", 0, 0, x.sized),
		gojq.WithFunction("_ctxfit_split", 1, 1, x.split),
		gojq.WithFunction("_ctxfit_imploded", 0, 0, x.imploded),
		gojq.WithFunction("_ctxfit_parsed", 0, 0, x.parsed),
		gojq.WithFunction("_ctxfit_mark", 0, 0, x.mark),
		gojq.WithFunction("_ctxfit_released", 1, 1, x.released),
	}
}

// namesAny reports whether expr holds any of the words.
func namesAny(expr string, words []string) bool {
	for _, w := range words {
		if strings.Contains(expr, w) {
			return true
		}
	}
	return false
}

// parseDefs parses definitions of ctxfit's (a constant: it parses).
func parseDefs(src string) *gojq.Query {
	defs, err := gojq.Parse(src)
	if err != nil {
		panic("ctxfit: query definitions: " + err.Error())
	}
	return defs
}

// jqFuncs holds the regular expressions a query compiled, the query's
// context and what it has built. A query runs on one goroutine: it is not
// safe for concurrent use, and a compiled query runs once (runQuery
// compiles each request's).
type jqFuncs struct {
	ctx   context.Context
	cache map[[2]string]*jqMatcher
	limit int // bytes of JSON of a value one step builds: queryValueLimit
	built int // bytes the query's steps have built so far: hold
	reads int // runes its regular expression searches have read
}

// maxRegexCache bounds the regular expressions a query keeps compiled.
const maxRegexCache = 64

// jqMatcher is a compiled regular expression of a query. Go's regexp
// finds a match from a position of a string only as FindAll goes; after
// it, the matcher uses at, which sees the rune before the position (for
// \b, ^ and the like), and probe, gojq's test for an empty match right
// after a match (jq reports it, Go's regexp does not).
type jqMatcher struct {
	re     *regexp.Regexp
	at     *regexp.Regexp // (?s:.)(re): re after one rune, nil when re needs no context
	probe  *regexp.Regexp // \A(?s:.)(?:re), nil when it does not compile
	names  []string
	prefix string // a literal that begins every match ("" when none)
	whole  bool   // every match is prefix itself, without captures
}

// compile compiles re with the flags gojq reads (g, i, and m, which it
// takes as (?s)), or says what is wrong, in gojq's words.
func (x *jqFuncs) compile(re, flags string) (*jqMatcher, error) {
	key := [2]string{re, flags}
	if m, ok := x.cache[key]; ok {
		return m, nil
	}
	if strings.ContainsFunc(flags, func(r rune) bool { return r != 'g' && r != 'i' && r != 'm' }) {
		return nil, fmt.Errorf("unsupported regular expression flag: %q", flags)
	}
	if strings.ContainsRune(flags, 'i') {
		re = "(?i)" + re
	}
	if strings.ContainsRune(flags, 'm') {
		re = "(?s)" + re
	}
	r, err := regexp.Compile(re)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %s", re, err)
	}
	m := &jqMatcher{re: r, names: r.SubexpNames()}
	m.prefix, m.whole = r.LiteralPrefix()
	m.whole = m.whole && m.prefix != "" && r.NumSubexp() == 0
	if needsContext(re) {
		m.at, _ = regexp.Compile(`(?s:.)(` + re + `)`)
	}
	if !m.whole { // a literal matches no empty string
		m.probe, _ = regexp.Compile(`\A(?s:.)(?:` + re + `)`)
	}
	if len(x.cache) >= maxRegexCache {
		clear(x.cache)
	}
	x.cache[key] = m
	return m, nil
}

// needsContext reports whether re has an assertion that looks before the
// position it is at (^, \A, \b, \B): only then does matching s[pos:]
// differ from matching s from pos. It says true when in doubt.
func needsContext(re string) bool {
	t, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(*syntax.Regexp) bool
	walk = func(t *syntax.Regexp) bool {
		switch t.Op {
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return true
		}
		for _, s := range t.Sub {
			if walk(s) {
				return true
			}
		}
		return false
	}
	return walk(t)
}

// A search of a regular expression in a string reads it through a
// runeReader, not as a string: Go's regexp then runs its NFA, whose work
// is the runes it reads, where over a string it may run its backtracker,
// which clears a table as long as the rest of the string for every search
// (a pattern that matches the empty string, searched from each position,
// took time quadratic in strings up to the backtracker's size, about
// 80,000 bytes for a small pattern). The reader
// counts what every search of a call reads against a bound linear in the
// string (readsPerByte), so that a pattern that reads the rest of the
// string again for each match (a*b|a over a run of a's) is an error
// rather than quadratic time, and checks the context as it reads, so that
// one long search stops when the query's context ends.

// Bounds of the runes the searches of one call of a regular expression
// function read: readsPerByte for each byte of the string, and minReads.
// An empty match at every position reads about 4 runes each.
const (
	readsPerByte = 16
	minReads     = 4096
)

// search is one call's searches of a regular expression m in a string s:
// what they read, against a bound, and the context they stop with.
type search struct {
	ctx        context.Context
	x          *jqFuncs // what the reads add to
	m          *jqMatcher
	s          string
	reads, max int
	err        error // why a search stopped reading: the context's or the bound's error
	r          runeReader
}

// search returns the searches of m in s, which stop with x's context.
func (x *jqFuncs) search(m *jqMatcher, s string) *search {
	sr := &search{ctx: x.ctx, x: x, m: m, s: s, max: readsPerByte*len(s) + minReads}
	sr.r.sr = sr
	return sr
}

// runeReader reads the string of a search from a byte offset, as Go's
// regexp decodes a string (an invalid byte is utf8.RuneError of width 1),
// counting what it reads; at the bound or when the context ends it reads
// nothing more, and the search's err says why.
type runeReader struct {
	sr *search
	i  int
}

func (r *runeReader) ReadRune() (rune, int, error) {
	sr := r.sr
	if sr.err != nil || r.i >= len(sr.s) {
		return 0, 0, io.EOF
	}
	sr.x.reads++
	if sr.reads++; sr.reads > sr.max {
		sr.err = fmt.Errorf("the regular expression %q reads the string again and again (%d characters read over a string of %d bytes): "+
			"a pattern whose first alternative runs on past where the match ends (such as a*b|a over a run of a's) takes time quadratic in the string; "+
			"rewrite it (for example anchor it, or split the string first)", shorten(sr.m.re.String(), 100), sr.reads, len(sr.s))
		return 0, 0, io.EOF
	}
	if sr.reads%4096 == 0 {
		if err := sr.ctx.Err(); err != nil {
			sr.err = err
			return 0, 0, io.EOF
		}
	}
	c := sr.s[r.i]
	if c < utf8.RuneSelf {
		r.i++
		return rune(c), 1, nil
	}
	c2, w := utf8.DecodeRuneInString(sr.s[r.i:])
	r.i += w
	return c2, w, nil
}

// run returns re's leftmost match in the string from the byte offset
// from, as FindStringSubmatchIndex does (offsets in the string), or nil.
func (sr *search) run(re *regexp.Regexp, from int) []int {
	sr.r.i = from
	x := re.FindReaderSubmatchIndex(&sr.r)
	if sr.err != nil {
		return nil
	}
	for i := range x {
		if x[i] >= 0 {
			x[i] += from
		}
	}
	return x
}

// test reports whether m matches the string, reading it once.
func (sr *search) test() bool {
	from := 0
	if sr.m.prefix != "" {
		i := strings.Index(sr.s, sr.m.prefix)
		if i < 0 || sr.m.whole {
			return i >= 0
		}
		// A match begins with a rune, not an assertion that looks
		// before it: the search may start there.
		from = i
	}
	sr.r.i = from
	return sr.m.re.MatchReader(&sr.r) && sr.err == nil
}

// find returns the leftmost match of m in s that starts at pos or after,
// as FindStringSubmatchIndex does (with the offsets in s), or nil; nil
// too when it stops reading (sr.err says why).
func (sr *search) find(pos int) []int {
	m, s := sr.m, sr.s
	if pos > len(s) {
		return nil
	}
	if m.prefix != "" {
		// Every match begins with the prefix: from its next occurrence.
		i := strings.Index(s[pos:], m.prefix)
		if i < 0 {
			return nil
		}
		if pos += i; m.whole {
			return []int{pos, pos + len(m.prefix)}
		}
	}
	if pos == 0 || m.at == nil {
		return sr.run(m.re, pos)
	}
	_, w := utf8.DecodeLastRuneInString(s[:pos])
	y := sr.run(m.at, pos-w)
	if y == nil {
		return nil
	}
	return y[2:]
}

// emptyAt is gojq's emptyMatchAt: the empty match of m at offset, right
// after a match that ends there, or nil.
func (sr *search) emptyAt(offset int) []int {
	m, s := sr.m, sr.s
	if m.probe == nil || offset == 0 {
		return nil
	}
	_, w := utf8.DecodeLastRuneInString(s[:offset])
	x := sr.run(m.probe, offset-w)
	if x == nil || x[1] != offset {
		return nil
	}
	x[0] = offset
	return x
}

// each calls f with the matches of m in s in order, the first only
// unless all, as gojq finds them: Go's successive non-overlapping
// matches (an empty match right after a match left out), and jq's empty
// match right after a non-empty one. It stops with the context's error
// when it ends, with the bound's when the searches read too much, or with
// f's.
func (sr *search) each(all bool, f func([]int) error) error {
	s := sr.s
	var held []int // a non-empty match, held until the next says whether an empty one follows it
	flush := func(next []int) error {
		if held == nil {
			return nil
		}
		x := held
		held = nil
		if err := f(x); err != nil {
			return err
		}
		if next != nil && next[0] == x[1] {
			return nil
		}
		if y := sr.emptyAt(x[1]); y != nil {
			return f(y)
		}
		return sr.err
	}
	prevEnd := -1
	for pos := 0; pos <= len(s); {
		if err := sr.ctx.Err(); err != nil {
			return err
		}
		x := sr.find(pos)
		if x == nil {
			if sr.err != nil {
				return sr.err
			}
			break
		}
		accept := true
		if x[1] == pos { // an empty match: step over a rune
			accept = x[0] != prevEnd
			if pos < len(s) {
				_, w := utf8.DecodeRuneInString(s[pos:])
				pos += w
			} else {
				pos++
			}
		} else {
			pos = x[1]
		}
		prevEnd = x[1]
		if !accept {
			continue
		}
		if !all {
			return f(x)
		}
		if err := flush(x); err != nil {
			return err
		}
		if x[0] == x[1] {
			if err := f(x); err != nil {
				return err
			}
			continue
		}
		held = x
	}
	return flush(nil)
}

// runes counts codepoints at increasing byte offsets of a string from
// where it last counted, so that counting at every match is linear.
type runes struct {
	s         string
	at, count int // byte offset, codepoints before it
}

// to returns the codepoints before the byte offset i, counting from the
// last offset when i is not before it, else from the start.
func (r *runes) to(i int) int {
	if i < r.at {
		r.at, r.count = 0, 0
	}
	r.count += utf8.RuneCountInString(r.s[r.at:i])
	r.at = i
	return r.count
}

// byteAt returns the byte offset of the codepoint n, a codepoint offset
// not before the last one asked for (else counted from the start); past
// the end it is the string's length.
func (r *runes) byteAt(n int) int {
	if n < r.count {
		r.at, r.count = 0, 0
	}
	for r.count < n && r.at < len(r.s) {
		_, w := utf8.DecodeRuneInString(r.s[r.at:])
		r.at += w
		r.count++
	}
	return r.at
}

// operands returns the string, the compiled pattern and whether the g
// flag is set, of a call of the regular expression function name (match
// or test), or gojq's error for it.
func (x *jqFuncs) operands(name string, v any, args []any) (string, *jqMatcher, bool, error) {
	re, fs := args[0], args[1]
	var flags string
	if fs != nil {
		var ok bool
		if flags, ok = fs.(string); !ok {
			return "", nil, false, matchTypeError(name, v, re, fs)
		}
	}
	s, ok := v.(string)
	if !ok {
		return "", nil, false, matchTypeError(name, v, re, fs)
	}
	restr, ok := re.(string)
	if !ok {
		return "", nil, false, matchTypeError(name, v, re, fs)
	}
	m, err := x.compile(restr, flags)
	if err != nil {
		return "", nil, false, err
	}
	return s, m, strings.ContainsRune(flags, 'g'), nil
}

// matchTypeError is gojq's error for match or test (name) over a value
// it cannot match.
func matchTypeError(name string, v, re, fs any) error {
	return fmt.Errorf("%s(%s; %s) cannot be applied to: %s", name, gojq.Preview(re), gojq.Preview(fs), typePreview(v))
}

// test is _ctxfit_test($re; $flags): whether the string matches, as
// gojq's _match($re; $flags; true) answers, reading the string once.
func (x *jqFuncs) test(v any, args []any) any {
	s, m, _, err := x.operands("test", v, args)
	if err != nil {
		return err
	}
	sr := x.search(m, s)
	ok := sr.test()
	if sr.err != nil {
		return sr.err
	}
	return ok
}

// typePreview is how gojq's errors show a value: its type and a preview.
func typePreview(v any) string {
	if v == nil {
		return "null"
	}
	return gojq.TypeOf(v) + " (" + gojq.Preview(v) + ")"
}

// match is _ctxfit_match($re; $flags): the array of match objects gojq's
// _match($re; $flags; false) returns.
func (x *jqFuncs) match(v any, args []any) any {
	s, m, all, err := x.operands("match", v, args)
	if err != nil {
		return err
	}
	res := []any{}
	r := runes{s: s}
	err = x.search(m, s).each(all, func(ix []int) error {
		start := r.to(ix[0])
		// The captures lie within the match: counted from its start.
		captures := make([]any, len(ix)/2-1)
		for j := 1; j < len(ix)/2; j++ {
			var name any
			if n := m.names[j]; n != "" {
				name = n
			}
			if ix[j*2] < 0 {
				captures[j-1] = map[string]any{"name": name, "offset": -1, "length": 0, "string": nil}
				continue
			}
			off := start + utf8.RuneCountInString(s[ix[0]:ix[j*2]])
			captures[j-1] = map[string]any{
				"name":   name,
				"offset": off,
				"length": utf8.RuneCountInString(s[ix[j*2]:ix[j*2+1]]),
				"string": s[ix[j*2]:ix[j*2+1]],
			}
		}
		if err := x.hold(arrayItemBytes * (5 + 4*len(captures))); err != nil {
			return err
		}
		res = append(res, map[string]any{
			"offset":   start,
			"length":   utf8.RuneCountInString(s[ix[0]:ix[1]]),
			"string":   s[ix[0]:ix[1]],
			"captures": captures,
		})
		return nil
	})
	if err != nil {
		return err
	}
	return res
}

// splits is _ctxfit_splits($re; $flags): the pieces of the string between
// the matches, as gojq's splits gives them.
func (x *jqFuncs) splits(v any, args []any) any {
	s, m, all, err := x.operands("match", v, args)
	if err != nil {
		return err
	}
	res := []any{}
	next := 0
	err = x.search(m, s).each(all, func(ix []int) error {
		if err := x.hold(arrayItemBytes); err != nil {
			return err
		}
		res = append(res, s[next:max(next, ix[0])])
		next = ix[1]
		return nil
	})
	if err != nil {
		return err
	}
	return append(res, s[min(next, len(s)):])
}

// sub is _ctxfit_sub($s): the results of sub over the string $s, from the
// array of its matches, each [offset, length, [the replacement's
// outputs]], as gojq's reduce builds them: the i-th result joins, for
// every match, the text before it and the i-th output for it, then the
// text after the last match; without any, $s itself.
func (x *jqFuncs) sub(v any, args []any) any {
	s, ok := args[0].(string)
	ms, ok2 := v.([]any)
	if !ok || !ok2 {
		return fmt.Errorf("ctxfit: _ctxfit_sub needs the matches of sub and its string")
	}
	var outs []*strings.Builder
	r := runes{s: s}
	next := 0 // a byte offset
	for k, mv := range ms {
		if k%256 == 0 {
			if err := x.ctx.Err(); err != nil {
				return err
			}
		}
		m, _ := mv.([]any)
		if len(m) != 3 {
			return fmt.Errorf("ctxfit: _ctxfit_sub needs the matches of sub and its string")
		}
		offset, _ := gojq.ToInt(m[0])
		length, _ := gojq.ToInt(m[1])
		reps, _ := m[2].([]any)
		start := r.byteAt(offset)
		piece := s[min(next, start):start]
		for i, rep := range reps {
			var add string
			switch rep := rep.(type) {
			case string:
				add = rep
			case nil:
			default:
				return fmt.Errorf("cannot add: %s and %s", typePreview(piece), typePreview(rep))
			}
			if i == len(outs) {
				outs = append(outs, &strings.Builder{})
			}
			if err := x.hold(len(piece) + len(add)); err != nil {
				return err
			}
			outs[i].WriteString(piece)
			outs[i].WriteString(add)
		}
		next = r.byteAt(offset + length)
	}
	if len(outs) == 0 {
		return []any{s}
	}
	res := make([]any, len(outs))
	for i, b := range outs {
		b.WriteString(s[min(next, len(s)):])
		res[i] = b.String()
	}
	return res
}

// occurrences is indices, index or rindex, as name says: where the
// argument occurs in a string (in codepoints) or an array (a value that is
// not an array, as a one-item array), overlaps included; gojq's results
// and errors, in linear time (Knuth-Morris-Pratt), stopping when the
// query's context ends.
func (x *jqFuncs) occurrences(name string) func(any, []any) any {
	return func(v any, args []any) any {
		var at []int
		var err error
		switch v := v.(type) {
		case nil:
			return nil
		case []any:
			xs, ok := args[0].([]any)
			if !ok {
				xs = []any{args[0]}
			}
			at, err = occurrences(x.ctx, len(v), len(xs), func(i, j int) bool { return gojq.Compare(v[i], xs[j]) == 0 },
				func(i, j int) bool { return gojq.Compare(xs[i], xs[j]) == 0 })
		case string:
			w, ok := args[0].(string)
			if !ok {
				return fmt.Errorf("%s(%s) cannot be applied to: %s", name, gojq.Preview(args[0]), typePreview(v))
			}
			vs, ws := []rune(v), []rune(w)
			at, err = occurrences(x.ctx, len(vs), len(ws), func(i, j int) bool { return vs[i] == ws[j] },
				func(i, j int) bool { return ws[i] == ws[j] })
		default:
			return fmt.Errorf("%s(%s) cannot be applied to: %s", name, gojq.Preview(args[0]), typePreview(v))
		}
		switch {
		case err != nil:
			return err
		case name == "indices":
			if err := x.hold(arrayItemBytes * len(at)); err != nil {
				return err
			}
			res := make([]any, len(at))
			for i, a := range at {
				res[i] = a
			}
			return res
		case len(at) == 0:
			return nil
		case name == "index":
			return at[0]
		}
		return at[len(at)-1]
	}
}

// occurrences returns where a needle of m items occurs in a haystack of n,
// overlaps included, none for an empty needle: eq(i, j) tells whether the
// haystack's item i is the needle's item j, self(i, j) whether the
// needle's items i and j are equal. Knuth-Morris-Pratt: at most 2m
// comparisons of self and 2n of eq. It stops with ctx's error when ctx
// ends.
func occurrences(ctx context.Context, n, m int, eq, self func(i, j int) bool) ([]int, error) {
	if m == 0 || m > n {
		return nil, nil
	}
	steps := 0
	alive := func() error {
		if steps++; steps%1024 == 0 {
			return ctx.Err()
		}
		return nil
	}
	// fail[j] is the length of the longest proper prefix of the needle's
	// first j+1 items that is also their suffix.
	fail := make([]int, m)
	for j, k := 1, 0; j < m; j++ {
		for k > 0 && !self(j, k) {
			k = fail[k-1]
			if err := alive(); err != nil {
				return nil, err
			}
		}
		if self(j, k) {
			k++
		}
		fail[j] = k
		if err := alive(); err != nil {
			return nil, err
		}
	}
	var at []int
	for i, k := 0, 0; i < n; i++ {
		for k > 0 && !eq(i, k) {
			k = fail[k-1]
			if err := alive(); err != nil {
				return nil, err
			}
		}
		if eq(i, k) {
			k++
		}
		if k == m {
			at = append(at, i-m+1)
			k = fail[k-1]
		}
		if err := alive(); err != nil {
			return nil, err
		}
	}
	return at, nil
}

// A jq operator is one step of gojq, however large its operands: "x" *
// 1000000000 built a string of a gigabyte in 19 seconds, and a reduce that
// squared an integer (big integers: gojq's results are exact) or doubled
// a string ran past the query's time limit in a few steps. ctxfit
// rewrites a query's +, - and * (and +=, -=, *=) into calls of jqOpDefs,
// which check their operands in Go, then apply gojq's operator: the same
// results, in the same order, for every value within the bounds below.
// Past them an operator is an error that says so (try catches it, as it
// catches gojq's own). add and join, which concatenate in one step, are
// checked the same way, and so are tojson and tostring, which write a
// value out in one step (an array that holds itself twice, doubled
// thirty times, is small in memory and a gigabyte of JSON); a - b over
// two arrays compares every item of one with every item of the other,
// and ctxfit's does so checking the context.

// Bounds of one step of a query.
const (
	// minQueryValue bounds a value one step builds, in bytes of its JSON
	// (of memory for an array: arrayItemBytes an item): this much, or four
	// times the data's size when larger.
	minQueryValue = 64 << 20
	// maxQueryIntBits bounds an integer a step builds (about 78,900
	// decimal digits).
	maxQueryIntBits = 1 << 18
)

// arrayItemBytes is what an item of an array counts for in a value's
// size: the memory it takes, more than its JSON's at least 2 bytes.
const arrayItemBytes = 16

// queryValueLimit is the bound of the JSON of a value a query over data
// of n bytes builds in one step.
func queryValueLimit(n int) int { return max(minQueryValue, 4*n) }

// jqOpDefs shadow gojq's operators and the functions above. A binary
// operator in a definition's body is gojq's own (the query is rewritten,
// not these); _ctxfit_add0 and the like are gojq's functions, named
// before they are defined again.
const jqOpDefs = `
def _add(l; r): r as $r | l as $l | _ctxfit_add($l; $r) | $l + $r;
def _subtract(l; r): r as $r | l as $l | _ctxfit_subtract($l; $r) | if . == null then $l - $r else . end;
def _multiply(l; r): r as $r | l as $l | _ctxfit_multiply($l; $r) | $l * $r;
def _ctxfit_add0: add;
def _ctxfit_join0($x): join($x);
def _ctxfit_tojson0: tojson;
def _ctxfit_tostring0: tostring;
def add: _ctxfit_sum | _ctxfit_add0;
def add(f): [f | _ctxfit_held] | add;
def join($x): _ctxfit_joined($x) | _ctxfit_join0($x);
def tojson: _ctxfit_written | _ctxfit_tojson0;
def tostring: _ctxfit_written | _ctxfit_tostring0;
def _eq(l; r): r as $r | l as $l | _ctxfit_compared($l; $r) | $l == $r;
def _ne(l; r): r as $r | l as $l | _ctxfit_compared($l; $r) | $l != $r;
def _lt(l; r): r as $r | l as $l | _ctxfit_compared($l; $r) | $l < $r;
def _le(l; r): r as $r | l as $l | _ctxfit_compared($l; $r) | $l <= $r;
def _gt(l; r): r as $r | l as $l | _ctxfit_compared($l; $r) | $l > $r;
def _ge(l; r): r as $r | l as $l | _ctxfit_compared($l; $r) | $l >= $r;
def _ctxfit_explode0: explode;
def explode: _ctxfit_exploded | _ctxfit_explode0;
def _ctxfit_sort0: sort;
def _ctxfit_unique0: unique;
def _ctxfit_min0: min;
def _ctxfit_max0: max;
def sort: _ctxfit_written | _ctxfit_sort0;
def unique: _ctxfit_written | _ctxfit_unique0;
def min: _ctxfit_written | _ctxfit_min0;
def max: _ctxfit_written | _ctxfit_max0;
def _ctxfit_setpath0($p; $v): setpath($p; $v);
def setpath($p; $v): . as $r | _ctxfit_setpath0($p | _ctxfit_path($r); $v);
def pick(f): . as $v | reduce path(f) as $p (null; setpath($p; $v | getpath($p)));
def fromstream(f):
  foreach f as $pv (
    null;
    if .e then null end |
    $pv as [$p, $v] |
    if $pv | length == 2 then
      setpath(["v"] + $p; $v) |
      setpath(["e"]; $p | length == 0)
    else
      setpath(["e"]; $p | length == 1)
    end;
    if .e then .v else empty end
  );
.`

// opFuncNames are words in a query that call what jqOpDefs defines
// without an operator the rewrite sees: the update-assignments
// (+= and the like call _add by name), add, join, tojson, tostring.
var opFuncNames = []string{"=", "add", "join", "tojson", "tostring", "sort", "unique", "min", "max", "explode", "setpath", "pick", "fromstream"}

// jqHeldDefs shadow gojq's functions that collect what a function they
// are given makes, or build a value from their input in one step, with
// ones that count it (hold): gojq's own definitions collect in a scope a
// query's rewrite does not reach.
const jqHeldDefs = `
def map(f): _ctxfit_mark as $__ctxfit_mark | [.[] | f | _ctxfit_held] | _ctxfit_released($__ctxfit_mark);
def min_by(f): _min_by(map([f | _ctxfit_held]));
def max_by(f): _max_by(map([f | _ctxfit_held]));
def sort_by(f): _sort_by(map([f | _ctxfit_held]));
def group_by(f): _group_by(map([f | _ctxfit_held]));
def unique_by(f): _unique_by(map([f | _ctxfit_held]));
def with_entries(f): to_entries | map(f) | from_entries;
def walk(f):
  def _walk:
    if type == "array" then
      map(_walk)
    elif type == "object" then
      map_values(_walk)
    end | f;
  _walk;
def combinations(n): [limit(n; repeat(.)) | _ctxfit_held] | combinations;
def del(f): delpaths([path(f) | _ctxfit_held]);
def JOIN($idx; idx_expr): [.[] | [., $idx[idx_expr]] | _ctxfit_held];
def _ctxfit_split0($s): split($s);
def split($s): _ctxfit_split($s) | _ctxfit_split0($s);
def _ctxfit_implode0: implode;
def implode: _ctxfit_imploded | _ctxfit_implode0;
def _ctxfit_downcase0: ascii_downcase;
def ascii_downcase: _ctxfit_sized | _ctxfit_downcase0;
def _ctxfit_upcase0: ascii_upcase;
def ascii_upcase: _ctxfit_sized | _ctxfit_upcase0;
def _ctxfit_fromjson0: fromjson;
def fromjson: _ctxfit_parsed | _ctxfit_fromjson0;
def INDEX(stream; idx_expr): [stream | {(idx_expr | tostring): .} | _ctxfit_held] | add // {};
def INDEX(idx_expr): INDEX(.[]; idx_expr);
.`

// heldFuncNames are words in the names of the functions jqHeldDefs
// defines again.
var heldFuncNames = []string{"map", "_by", "entries", "walk", "combinations", "del", "JOIN", "split", "implode", "ascii_", "fromjson", "INDEX"}

// rewriteOps turns every +, - and * of q into a call of jqOpDefs'
// _add, _subtract or _multiply, with the same operands; gojq compiles
// both into a call with the operands as arguments, evaluated in the same
// order. It reports whether it rewrote any.
func rewriteOps(q *gojq.Query, ownMap bool) bool {
	found := false
	var query func(*gojq.Query)
	var term func(*gojq.Term)
	queries := func(qs ...*gojq.Query) {
		for _, q := range qs {
			query(q)
		}
	}
	str := func(s *gojq.String) {
		if s == nil {
			return
		}
		for _, q := range s.Queries {
			if q.Term != nil && q.Term.Str != nil {
				continue // a literal part of the string (gojq's parse)
			}
			// "\(q)" writes q's value out in one step: bounded first.
			query(q)
			found = true
			inner := *q
			*q = gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeQuery, Query: &gojq.Query{
				Left: &inner, Op: gojq.OpPipe, Right: &gojq.Query{Term: written()}}}}
		}
	}
	index := func(i *gojq.Index) {
		if i != nil {
			str(i.Str)
			queries(i.Start, i.End)
		}
	}
	var patterns func([]*gojq.Pattern)
	patterns = func(ps []*gojq.Pattern) {
		for _, p := range ps {
			if p == nil {
				continue
			}
			patterns(p.Array)
			for _, o := range p.Object {
				str(o.KeyString)
				query(o.KeyQuery)
				patterns([]*gojq.Pattern{o.Val})
			}
		}
	}
	query = func(q *gojq.Query) {
		if q == nil {
			return
		}
		for _, fd := range q.FuncDefs {
			query(fd.Body)
		}
		term(q.Term)
		queries(q.Left, q.Right)
		patterns(q.Patterns)
		switch q.Op {
		case gojq.OpAssign, gojq.OpModify, gojq.OpUpdateAdd, gojq.OpUpdateSub, gojq.OpUpdateMul, gojq.OpUpdateDiv,
			gojq.OpUpdateMod, gojq.OpUpdateAlt:
			// The paths an update sets are checked before gojq sets them:
			// .[200000000] = 1 made an array of 200 million items. A path
			// of names and small literal indices (.a.b[0] = 1) sets little
			// and keeps gojq's fast path for it; what collects its results
			// counts them (held).
			if !smallConstPath(q.Left) {
				found = true
				q.Left = checkedPaths(q.Left)
			}
		}
		name := map[gojq.Operator]string{gojq.OpAdd: "_add", gojq.OpSub: "_subtract", gojq.OpMul: "_multiply",
			gojq.OpEq: "_eq", gojq.OpNe: "_ne", gojq.OpLt: "_lt", gojq.OpLe: "_le", gojq.OpGt: "_gt", gojq.OpGe: "_ge"}[q.Op]
		if compares := q.Op >= gojq.OpEq && q.Op <= gojq.OpLe; compares && (scalarLiteral(q.Left) || scalarLiteral(q.Right)) {
			name = "" // a comparison with a literal number, string or constant walks nothing
		}
		if name != "" && q.Term == nil {
			found = true
			args := []*gojq.Query{q.Left, q.Right}
			*q = gojq.Query{Meta: q.Meta, Imports: q.Imports, FuncDefs: q.FuncDefs,
				Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: name, Args: args}}}
		}
	}
	term = func(t *gojq.Term) {
		if t == nil {
			return
		}
		if ownMap && t.Type == gojq.TermTypeFunc && t.Func.Name == "map" && len(t.Func.Args) == 1 {
			// map(f) is [.[] | f] (gojq's definition): collected as
			// the query's arrays are, below.
			*t = gojq.Term{Type: gojq.TermTypeArray, SuffixList: t.SuffixList, Array: &gojq.Array{Query: &gojq.Query{
				Left: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeIdentity, SuffixList: []*gojq.Suffix{{Iter: true}}}},
				Op:   gojq.OpPipe, Right: t.Func.Args[0]}}}
		}
		if t.Type == gojq.TermTypeFormat && t.Str == nil && len(t.SuffixList) == 0 {
			// @json, @text, @csv, @html, @uri, @sh, @base64... write their
			// input out in one step: bounded first.
			found = true
			format := *t
			*t = gojq.Term{Type: gojq.TermTypeQuery, Query: &gojq.Query{
				Left: &gojq.Query{Term: written()}, Op: gojq.OpPipe, Right: &gojq.Query{Term: &format}}}
			return
		}
		index(t.Index)
		if t.Func != nil {
			queries(t.Func.Args...)
		}
		if t.Object != nil {
			for _, kv := range t.Object.KeyVals {
				str(kv.KeyString)
				queries(kv.KeyQuery, kv.Val)
			}
		}
		if t.Array != nil && t.Array.Query != nil {
			// What an array collects is counted, so that [range(1e9)]
			// stops at the query's bound; once collected, what the
			// collecting built and the array does not hold is given back
			// (released).
			q := t.Array.Query
			each := q.Op == gojq.OpPipe && q.Left != nil && q.Right != nil && len(q.FuncDefs) == 0 && len(q.Patterns) == 0 &&
				!buildsOnlyItsOutput(q.Right) // before its operators are rewritten
			query(q)
			var c *gojq.Query
			if each {
				// [a | b]: what b builds for each output of a, given
				// back once b is done with it.
				c = parseDefs(`_ctxfit_mark as $__ctxfit_mark | [_ctxfit_a | (_ctxfit_mark as $__ctxfit_item | ` +
					`[_ctxfit_b | _ctxfit_held] | _ctxfit_released($__ctxfit_item) | .[]) as $__ctxfit_item | $__ctxfit_item] | ` +
					`_ctxfit_released($__ctxfit_mark)`)
				splice(c, "_ctxfit_a", q.Left)
				splice(c, "_ctxfit_b", q.Right)
			} else {
				c = parseDefs(`_ctxfit_mark as $__ctxfit_mark | [_ctxfit_a | _ctxfit_held] | _ctxfit_released($__ctxfit_mark)`)
				splice(c, "_ctxfit_a", q)
			}
			*t = gojq.Term{Type: gojq.TermTypeQuery, Query: c, SuffixList: t.SuffixList}
			for _, s := range t.SuffixList {
				index(s.Index)
			}
			return
		}
		if t.Unary != nil {
			term(t.Unary.Term)
		}
		str(t.Str)
		if t.If != nil {
			queries(t.If.Cond, t.If.Then, t.If.Else)
			for _, e := range t.If.Elif {
				queries(e.Cond, e.Then)
			}
		}
		if t.Try != nil {
			queries(t.Try.Body, t.Try.Catch)
		}
		if t.Reduce != nil {
			queries(t.Reduce.Query, t.Reduce.Start, t.Reduce.Update)
			patterns(t.Reduce.Patterns)
		}
		if t.Foreach != nil {
			queries(t.Foreach.Query, t.Foreach.Start, t.Foreach.Update, t.Foreach.Extract)
			patterns(t.Foreach.Patterns)
		}
		if t.Label != nil {
			query(t.Label.Body)
		}
		query(t.Query)
		for _, s := range t.SuffixList {
			index(s.Index)
		}
	}
	query(q)
	return found
}

// buildsOnlyItsOutput reports whether q surely builds nothing but the
// values it outputs (an object of paths, an arithmetic of paths and
// literals, comparisons, select...): then a collection of its outputs
// holds all it built, and has nothing to give back for each.
func buildsOnlyItsOutput(q *gojq.Query) bool { return builds(q, true) }

// builds reports whether q surely builds nothing, or (output) nothing but
// the values it outputs.
func builds(q *gojq.Query, output bool) bool {
	if q == nil {
		return true
	}
	if len(q.FuncDefs) > 0 || len(q.Patterns) > 0 {
		return false
	}
	switch q.Op {
	case 0:
	case gojq.OpPipe: // what the left builds, the right may drop
		return builds(q.Left, false) && builds(q.Right, output)
	case gojq.OpComma, gojq.OpAlt:
		return builds(q.Left, output) && builds(q.Right, output)
	case gojq.OpAnd, gojq.OpOr, gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpLe, gojq.OpGt, gojq.OpGe:
		return builds(q.Left, false) && builds(q.Right, false)
	case gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod:
		// A number and another value make a number, or an error; else
		// the operator builds its output (a string, an array).
		number := (q.Op == gojq.OpAdd || q.Op == gojq.OpSub) && (numberLiteral(q.Left) || numberLiteral(q.Right))
		return (output || number) && builds(q.Left, false) && builds(q.Right, false)
	default:
		return false
	}
	t := q.Term
	if t == nil {
		return true
	}
	for _, s := range t.SuffixList {
		if s.Index != nil && (s.Index.Str != nil || !builds(s.Index.Start, false) || !builds(s.Index.End, false)) {
			return false
		}
	}
	if len(t.SuffixList) > 0 {
		output = false // what the term makes, its suffixes index
	}
	switch t.Type {
	case gojq.TermTypeIdentity, gojq.TermTypeRecurse, gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
		return true
	case gojq.TermTypeIndex:
		return t.Index.Str == nil && builds(t.Index.Start, false) && builds(t.Index.End, false)
	case gojq.TermTypeString:
		return t.Str != nil && len(t.Str.Queries) == 0
	case gojq.TermTypeQuery:
		return builds(t.Query, output)
	case gojq.TermTypeFunc:
		switch t.Func.Name {
		case "select", "not", "length", "type", "empty", "has", "values", "nulls", "strings", "numbers", "objects", "arrays", "scalars", "booleans":
			for _, a := range t.Func.Args {
				if !builds(a, false) {
					return false
				}
			}
			return true
		}
	case gojq.TermTypeObject:
		if !output {
			return false
		}
		for _, kv := range t.Object.KeyVals {
			if kv.KeyString != nil && len(kv.KeyString.Queries) > 0 || !builds(kv.KeyQuery, false) || !builds(kv.Val, true) {
				return false
			}
		}
		return true
	}
	return false
}

// numberLiteral reports whether q is a literal number.
func numberLiteral(q *gojq.Query) bool {
	return q != nil && q.Left == nil && q.Term != nil && q.Term.Type == gojq.TermTypeNumber && len(q.Term.SuffixList) == 0
}

// splice puts with where q calls the function name (of ctxfit's
// templates: pipes, bindings, arrays, arguments), and reports whether
// it found it.
func splice(q *gojq.Query, name string, with *gojq.Query) bool {
	if q == nil {
		return false
	}
	if t := q.Term; t != nil {
		if t.Type == gojq.TermTypeFunc && t.Func.Name == name {
			q.Term = &gojq.Term{Type: gojq.TermTypeQuery, Query: with}
			return true
		}
		if t.Func != nil {
			for _, a := range t.Func.Args {
				if splice(a, name, with) {
					return true
				}
			}
		}
		if t.Array != nil && splice(t.Array.Query, name, with) || splice(t.Query, name, with) {
			return true
		}
	}
	return splice(q.Left, name, with) || splice(q.Right, name, with)
}

// maxConstIndex is the largest literal index of a path an update sets
// unchecked (smallConstPath).
const maxConstIndex = 1024

// smallConstPath reports whether q is a path of names, literal strings
// and literal indices up to maxConstIndex, such as .a."b"[0].
func smallConstPath(q *gojq.Query) bool {
	if q == nil || q.Left != nil || q.Right != nil || q.Term == nil || len(q.FuncDefs) > 0 {
		return false
	}
	small := func(i *gojq.Index) bool {
		switch {
		case i == nil || i.IsSlice:
			return false
		case i.Name != "":
			return true
		case i.Str != nil:
			return len(i.Str.Queries) == 0
		case i.Start != nil && i.End == nil:
			n := i.Start
			if n.Left != nil || n.Term == nil || n.Term.Type != gojq.TermTypeNumber || len(n.Term.SuffixList) > 0 {
				return false
			}
			f, err := strconv.ParseFloat(n.Term.Number, 64)
			return err == nil && f >= 0 && f <= maxConstIndex
		}
		return false
	}
	t := q.Term
	switch t.Type {
	case gojq.TermTypeIndex:
		if !small(t.Index) {
			return false
		}
	case gojq.TermTypeIdentity:
	case gojq.TermTypeQuery:
		if !smallConstPath(t.Query) {
			return false
		}
	default:
		return false
	}
	for _, sf := range t.SuffixList {
		if sf.Iter || sf.Optional || !small(sf.Index) {
			return false
		}
	}
	return true
}

// checkedPaths returns a path expression with the paths of l, each
// checked by _ctxfit_path against the value it updates before gojq sets it.
func checkedPaths(l *gojq.Query) *gojq.Query {
	q := parseDefs(`. as $__ctxfit_root | getpath(path(_ctxfit_lhs) | _ctxfit_path($__ctxfit_root))`)
	var put func(*gojq.Query) bool
	put = func(q *gojq.Query) bool {
		switch {
		case q == nil:
			return false
		case q.Term != nil && q.Term.Type == gojq.TermTypeFunc && q.Term.Func.Name == "_ctxfit_lhs":
			q.Term = &gojq.Term{Type: gojq.TermTypeQuery, Query: l}
			return true
		case q.Term != nil && q.Term.Type == gojq.TermTypeFunc:
			for _, a := range q.Term.Func.Args {
				if put(a) {
					return true
				}
			}
		}
		return put(q.Left) || put(q.Right)
	}
	put(q)
	return q
}

// scalarLiteral reports whether q is a literal number, string (without
// interpolation), null, true or false.
func scalarLiteral(q *gojq.Query) bool {
	if q == nil || q.Term == nil || q.Left != nil || len(q.Term.SuffixList) > 0 {
		return false
	}
	switch t := q.Term; t.Type {
	case gojq.TermTypeNumber, gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse:
		return true
	case gojq.TermTypeString:
		return t.Str != nil && len(t.Str.Queries) == 0
	}
	return false
}

// written is a call of _ctxfit_written, which bounds the JSON of its
// input.
func written() *gojq.Term {
	return &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "_ctxfit_written"}}
}

// compared is _ctxfit_compared($l; $r): an error when comparing $l with
// $r would walk more than the query's bound (gojq compares in one step,
// visiting a value held many times each time), else null. Two scalars
// cost nothing to check.
func (x *jqFuncs) compared(_ any, args []any) any {
	for _, v := range args {
		switch v.(type) {
		case []any, map[string]any:
			if n, err := jsonAtLeast(x.ctx, v, x.limit); err != nil {
				return err
			} else if n > x.limit {
				return x.tooLarge(n)
			}
		}
	}
	return nil
}

// exploded is _ctxfit_exploded: its input, or an error when explode would
// make an array of its codepoints over the query's bound (16 bytes an
// item, as + counts arrays; a byte is at most one codepoint).
func (x *jqFuncs) exploded(v any, _ []any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	n := arrayItemBytes * len(s)
	if n > x.limit {
		if n = arrayItemBytes * utf8.RuneCountInString(s); n > x.limit {
			return x.tooLarge(n)
		}
	}
	if err := x.hold(n); err != nil {
		return err
	}
	return v
}

// hold counts n bytes more that the query's steps have built, and is an
// error once they are over the query's bound: values a query collects (in
// [...], map, sort_by, ...), the strings and arrays its steps build, and
// what its updates add are held until it ends, and however small each
// step, [range(1e9)] or [limit(1e9; repeat(1))] would hold gigabytes
// before the time limit. It bounds what a query builds in all, so what
// it holds at once; a collection gives back what it built and does not
// hold (released), and nothing else does.
func (x *jqFuncs) hold(n int) error {
	x.built += n
	if x.built > x.limit {
		return fmt.Errorf("the query builds more than its limit of %d bytes in all (arrays count %d bytes an item); "+
			"collect fewer values: select or limit before [...], map, range, repeat or recurse, and update fewer paths",
			x.limit, arrayItemBytes)
	}
	return nil
}

// mark is _ctxfit_mark: what the query has built so far, where a
// collection starts (released).
func (x *jqFuncs) mark(any, []any) any { return x.built }

// released is _ctxfit_released($mark): its input, an array a collection
// made, after giving back what the collection built (counted from $mark)
// beyond what the array holds. A query is pure: once a collection's
// generator is done, what it built and still lives is reachable from
// the array it made, so the count stays over what the query holds.
// [.[] | tojson | length] holds numbers, not the JSON texts it wrote; a
// value the array holds many times counts each time (the walk stops once
// it reaches what was built). The count gives back nothing elsewhere: an
// array a later step consumes (map(.a) | add) may still be held by a
// variable or a generator waiting to go on, which the functions do not
// see.
func (x *jqFuncs) released(v any, args []any) any {
	m, ok := args[0].(int)
	if !ok || x.built <= m {
		return v
	}
	if kept := x.keptSize(v, x.built-m); kept < x.built-m {
		x.built = m + kept
	}
	return v
}

// keptSize returns the bytes hold counts for v as a collection holds it
// (arrayItemBytes an item or entry, and a string's or key's bytes), or a
// number not under limit as soon as it reaches limit, or when the context
// ends.
func (x *jqFuncs) keptSize(v any, limit int) int {
	n, steps := 0, 0
	var walk func(any)
	walk = func(v any) {
		if steps++; steps%4096 == 0 && x.ctx.Err() != nil {
			n = limit
		}
		switch v := v.(type) {
		case string:
			n += len(v)
		case []any:
			n += arrayItemBytes * len(v)
			for _, w := range v {
				if n >= limit {
					return
				}
				walk(w)
			}
		case map[string]any:
			n += arrayItemBytes * len(v)
			for k, w := range v {
				if n >= limit {
					return
				}
				n += len(k)
				walk(w)
			}
		case *big.Int:
			n += v.BitLen() / 8
		}
	}
	walk(v)
	return n
}

// held is _ctxfit_held: its input, which an array collects, counted by
// hold (an item, and an array's items or an object's entries: an array
// an update filled up to a small literal index counts here), or hold's
// error.
func (x *jqFuncs) held(v any, _ []any) any {
	n := arrayItemBytes
	switch v := v.(type) {
	case map[string]any:
		n += arrayItemBytes * len(v)
	case []any:
		n += arrayItemBytes * len(v)
	}
	if err := x.hold(n); err != nil {
		return err
	}
	return v
}

// path is _ctxfit_path($root): its input, a path an update sets in $root,
// or an error when it would make an array past the query's bound (gojq
// fills an array up to an index it sets with nulls: .[200000000] = 1 made
// 200 million items), or when what it adds to $root is past hold's count.
func (x *jqFuncs) path(v any, args []any) any {
	p, ok := v.([]any)
	if !ok {
		return v // gojq says what is wrong
	}
	cur := args[0]
	for _, k := range p {
		switch k := k.(type) {
		case string:
			m, _ := cur.(map[string]any)
			w, ok := m[k]
			if !ok {
				if err := x.hold(arrayItemBytes + len(k)); err != nil {
					return err
				}
			}
			cur = w
		case int, float64, *big.Int:
			f, _ := gojq.ToFloat64(k)
			if f < 0 {
				return v // gojq's error, or an item from the end
			}
			if size := arrayItemBytes * (f + 1); size > float64(x.limit) {
				return fmt.Errorf("the query sets item %.0f of an array, which would fill it with %.0f items, more than its limit of %d bytes "+
					"(%d an item); to key values by number, use an object (.[\"%.0f\"] = ...), or append with . + [...]",
					f, f+1, x.limit, arrayItemBytes, f)
			}
			i := int(f)
			a, _ := cur.([]any)
			if i >= len(a) {
				if err := x.hold(arrayItemBytes * (i + 1 - len(a))); err != nil {
					return err
				}
				cur = nil
			} else {
				cur = a[i]
			}
		default: // a slice: it sets items the array has, or appends what it is given
			cur = nil
		}
	}
	return v
}

// sized is _ctxfit_sized: its input, a string a step copies
// (ascii_downcase, ascii_upcase), counted by hold.
func (x *jqFuncs) sized(v any, _ []any) any {
	if s, ok := v.(string); ok {
		if err := x.hold(len(s)); err != nil {
			return err
		}
	}
	return v
}

// split is _ctxfit_split($sep): its input, or an error when split($sep)
// would make an array of pieces past the query's bound (one a codepoint
// for an empty separator), counted by hold.
func (x *jqFuncs) split(v any, args []any) any {
	s, ok := v.(string)
	sep, ok2 := args[0].(string)
	if !ok || !ok2 {
		return v // gojq says what is wrong
	}
	var pieces int
	if sep == "" {
		pieces = utf8.RuneCountInString(s)
	} else {
		pieces = strings.Count(s, sep) + 1
	}
	n := arrayItemBytes * pieces
	if n > x.limit {
		return x.tooLarge(n)
	}
	if err := x.hold(n); err != nil {
		return err
	}
	return v
}

// imploded is _ctxfit_imploded: its input, an array of codepoints implode
// writes as a string of at most 4 bytes each, counted by hold.
func (x *jqFuncs) imploded(v any, _ []any) any {
	if a, ok := v.([]any); ok {
		if err := x.hold(4 * len(a)); err != nil {
			return err
		}
	}
	return v
}

// parsed is _ctxfit_parsed: its input, a JSON text fromjson parses,
// counted by hold before it is parsed as what the values it holds take in
// memory (arrayItemBytes for each value or entry a comma, a colon or an
// opening bracket starts, besides the text's own bytes): "[0,0,0]" is 2
// bytes an item as text and about 24 in memory, and would pass the bound
// in one step. An error when that is over the query's bound.
func (x *jqFuncs) parsed(v any, _ []any) any {
	s, ok := v.(string)
	if !ok {
		return v // gojq says what is wrong
	}
	n, in, esc := len(s)+arrayItemBytes, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case in:
			esc, in = c == '\\', c != '"'
		case c == '"':
			in = true
		case c == ',' || c == ':' || c == '[' || c == '{':
			n += arrayItemBytes
		}
	}
	if n > x.limit {
		return x.tooLarge(n)
	}
	if err := x.hold(n); err != nil {
		return err
	}
	return v
}

// tooLarge is the error of a step that would build a value of at least n
// bytes (its JSON, or 16 bytes an item for an array), over the query's
// bound.
func (x *jqFuncs) tooLarge(n int) error {
	return fmt.Errorf("the query builds a value of %d bytes or more, more than its limit of %d; select less before you join, add, repeat or write out values", n, x.limit)
}

// arithmetic is _ctxfit_add($l; $r), _ctxfit_subtract or
// _ctxfit_multiply, as op says: null, after which gojq's operator runs,
// or an error when its result would break a bound. For a - b over arrays
// it computes the difference itself, checking the context, and answers
// it: its input is then that difference.
func (x *jqFuncs) arithmetic(op byte) func(any, []any) any {
	return func(_ any, args []any) any {
		l, r := args[0], args[1]
		switch op {
		case '+':
			n := 0
			switch l := l.(type) {
			case string:
				if r, ok := r.(string); ok {
					n = len(l) + len(r) + 2
				}
			case []any:
				if r, ok := r.([]any); ok {
					n = arrayItemBytes * (len(l) + len(r))
				}
			}
			if n > x.limit {
				return x.tooLarge(n)
			}
			if err := x.hold(n); err != nil {
				return err
			}
		case '-':
			a, ok := l.([]any)
			b, ok2 := r.([]any)
			if ok && ok2 && len(b) > 0 {
				d, err := x.difference(a, b)
				if err != nil {
					return err
				}
				return d
			}
		case '*':
			if s, n, ok := repeated(l, r); ok {
				size := float64(len(s))*min(n, math.MaxInt32) + 2
				if size > float64(x.limit) {
					return x.tooLarge(int(min(size, math.MaxInt64/2)))
				}
				if err := x.hold(int(size)); err != nil {
					return err
				}
			}
			if bl, br := intBits(l), intBits(r); bl > 0 && br > 0 && bl+br > maxQueryIntBits {
				return fmt.Errorf("the query builds an integer of about %d digits, more than %d; compute with smaller numbers",
					int(float64(bl+br)*math.Log10(2)), int(maxQueryIntBits*math.Log10(2)))
			}
		}
		return nil
	}
}

// repeated returns the string and the count of gojq's string repetition
// s * n (or n * s).
func repeated(l, r any) (string, float64, bool) {
	if s, ok := l.(string); ok {
		n, ok := gojq.ToFloat64(r)
		return s, n, ok
	}
	if s, ok := r.(string); ok {
		n, ok := gojq.ToFloat64(l)
		return s, n, ok
	}
	return "", 0, false
}

// intBits is the length in bits of an integer of gojq, or 0 for any other
// value.
func intBits(v any) int {
	switch v := v.(type) {
	case int:
		if v < 0 {
			v = -(v + 1)
		}
		return bits.Len(uint(v)) + 1
	case *big.Int:
		return v.BitLen()
	}
	return 0
}

// difference is a - b as gojq computes it: the items of a equal to no item
// of b, in order. It stops with the context's error when it ends.
func (x *jqFuncs) difference(a, b []any) ([]any, error) {
	d := make([]any, 0, len(a))
	steps := 0
next:
	for _, v := range a {
		for _, w := range b {
			if steps++; steps%1024 == 0 {
				if err := x.ctx.Err(); err != nil {
					return nil, err
				}
			}
			if gojq.Compare(v, w) == 0 {
				continue next
			}
		}
		d = append(d, v)
	}
	return d, nil
}

// sum is _ctxfit_sum: its input, or an error when add would concatenate
// strings or arrays into more than the bound.
func (x *jqFuncs) sum(v any, _ []any) any {
	n := 0
	each(v, func(w any) {
		switch w := w.(type) {
		case string:
			n += len(w)
		case []any:
			n += arrayItemBytes * len(w)
		}
	})
	if n > x.limit {
		return x.tooLarge(n)
	}
	if err := x.hold(n); err != nil {
		return err
	}
	return v
}

// joined is _ctxfit_joined($x): its input, or an error when join($x)
// would build a string longer than the bound.
func (x *jqFuncs) joined(v any, args []any) any {
	sep, _ := args[0].(string)
	n := 0
	each(v, func(w any) {
		n += len(sep) + 1
		if s, ok := w.(string); ok {
			n += len(s)
		}
	})
	if n > x.limit {
		return x.tooLarge(n)
	}
	if err := x.hold(n); err != nil {
		return err
	}
	return v
}

// each calls f with the items of an array or the values of an object.
func each(v any, f func(any)) {
	switch v := v.(type) {
	case []any:
		for _, w := range v {
			f(w)
		}
	case map[string]any:
		for _, w := range v {
			f(w)
		}
	}
}

// written is _ctxfit_written: its input, or an error when its JSON is
// longer than the bound.
func (x *jqFuncs) written(v any, _ []any) any {
	n, err := jsonAtLeast(x.ctx, v, x.limit)
	switch {
	case err != nil:
		return err
	case n > x.limit:
		return x.tooLarge(n)
	}
	if err := x.hold(n); err != nil {
		return err
	}
	return v
}

// jsonAtLeast returns a lower bound of the length of v's JSON: the length
// itself for strings, numbers and literals without escapes, or as soon as
// it passes limit, a bound over limit. It visits at most about limit
// values (a value held many times is visited each time, as it is
// written), and stops with ctx's error when ctx ends.
func jsonAtLeast(ctx context.Context, v any, limit int) (int, error) {
	n, steps := 0, 0
	var walk func(any) error
	walk = func(v any) error {
		if steps++; steps%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		switch v := v.(type) {
		case string:
			n += len(v) + 2
		case []any:
			n += 1 + len(v)
			for _, w := range v {
				if n > limit {
					return nil
				}
				if err := walk(w); err != nil {
					return err
				}
			}
		case map[string]any:
			n += 1 + len(v)
			for k, w := range v {
				if n > limit {
					return nil
				}
				n += len(k) + 3
				if err := walk(w); err != nil {
					return err
				}
			}
		case *big.Int:
			n += v.BitLen() * 3 / 10
		default:
			n++
		}
		return nil
	}
	err := walk(v)
	return n, err
}
