package ctxfit

import (
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
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
// The regular expression functions find the matches one at a time, count
// codepoints as they go, build each result once, and check the context
// between matches; test keeps gojq's, which matches once. One search for
// a match takes time linear in the rest of the string (RE2, as Go's regexp
// implements it); a pattern that must read to the end to know where a
// match ends (a*b|a over a run of a's) reads to the end for each match, as
// Go's FindAll does, but stops between matches. indices, index and rindex
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
def capture($re; $flags): match($re; $flags) | .captures | _captures;
def capture($re): if $re | type == "array" then capture($re[0]; $re[1]) else capture($re; null) end;
def scan($re; $flags): match($re; $flags + "g") | if .captures == [] then .string else [.captures[].string] end;
def scan($re): scan($re; null);
def splits($re; $flags): _ctxfit_splits($re; $flags + "g")[];
def splits($re): splits($re; null);
def split($re; $flags): [splits($re; $flags)];
def sub($re; str; $flags): . as $s |
  [match($re; $flags) | [.offset, .length, [.captures | _captures | str]]] | _ctxfit_sub($s)[];
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
var boundedFuncNames = []string{"match", "capture", "scan", "split", "sub", "index", "indices", "contains", "inside"}

// withBoundedFunctions adds ctxfit's own functions to q, the query expr,
// and returns the compiler options they need; they check ctx as they go.
// A query that names none of them (most) is left alone: compiling the
// definitions costs more than compiling a small query.
func withBoundedFunctions(ctx context.Context, q *gojq.Query, expr string) []gojq.CompilerOption {
	named := false
	for _, name := range boundedFuncNames {
		named = named || strings.Contains(expr, name)
	}
	if !named {
		return nil
	}
	defs, err := gojq.Parse(jqDefs)
	if err != nil {
		panic("ctxfit: jqDefs: " + err.Error())
	}
	q.FuncDefs = append(defs.FuncDefs, q.FuncDefs...)
	x := &jqFuncs{ctx: ctx, cache: map[[2]string]*jqMatcher{}}
	return []gojq.CompilerOption{
		gojq.WithFunction("_ctxfit_match", 2, 2, x.match),
		gojq.WithFunction("_ctxfit_splits", 2, 2, x.splits),
		gojq.WithFunction("_ctxfit_sub", 1, 1, x.sub),
		gojq.WithFunction("_ctxfit_indices", 1, 1, x.occurrences("indices")),
		gojq.WithFunction("_ctxfit_index", 1, 1, x.occurrences("index")),
		gojq.WithFunction("_ctxfit_rindex", 1, 1, x.occurrences("rindex")),
	}
}

// jqFuncs holds the regular expressions a query compiled, and the
// query's context. A query runs on one goroutine: it is not safe for
// concurrent use.
type jqFuncs struct {
	ctx   context.Context
	cache map[[2]string]*jqMatcher
}

// maxRegexCache bounds the regular expressions a query keeps compiled.
const maxRegexCache = 64

// jqMatcher is a compiled regular expression of a query. Go's regexp
// finds a match from a position of a string only as FindAll goes; after
// it, the matcher uses at, which sees the rune before the position (for
// \b, ^ and the like), and probe, gojq's test for an empty match right
// after a match (jq reports it, Go's regexp does not).
type jqMatcher struct {
	re    *regexp.Regexp
	at    *regexp.Regexp // (?s:.)(re): re after one rune, nil when re needs no context
	probe *regexp.Regexp // \A(?s:.)(?:re), nil when it does not compile
	names []string
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
	if needsContext(re) {
		m.at, _ = regexp.Compile(`(?s:.)(` + re + `)`)
	}
	m.probe, _ = regexp.Compile(`\A(?s:.)(?:` + re + `)`)
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

// find returns the leftmost match of m in s that starts at pos or after,
// as FindStringSubmatchIndex does (with the offsets in s), or nil.
func (m *jqMatcher) find(s string, pos int) []int {
	if pos == 0 {
		return m.re.FindStringSubmatchIndex(s)
	}
	if pos > len(s) {
		return nil
	}
	if m.at == nil {
		x := m.re.FindStringSubmatchIndex(s[pos:])
		for i := range x {
			if x[i] >= 0 {
				x[i] += pos
			}
		}
		return x
	}
	_, w := utf8.DecodeLastRuneInString(s[:pos])
	y := m.at.FindStringSubmatchIndex(s[pos-w:])
	if y == nil {
		return nil
	}
	x := y[2:]
	for i := range x {
		if x[i] >= 0 {
			x[i] += pos - w
		}
	}
	return x
}

// emptyAt is gojq's emptyMatchAt: the empty match of m at offset, right
// after a match that ends there, or nil.
func (m *jqMatcher) emptyAt(s string, offset int) []int {
	if m.probe == nil || offset == 0 {
		return nil
	}
	_, w := utf8.DecodeLastRuneInString(s[:offset])
	x := m.probe.FindStringSubmatchIndex(s[offset-w:])
	if x == nil || x[1] != w {
		return nil
	}
	y := make([]int, len(x))
	y[0], y[1] = offset, offset
	for i := 2; i < len(x); i++ {
		if x[i] < 0 {
			y[i] = -1
		} else {
			y[i] = x[i] + offset - w
		}
	}
	return y
}

// each calls f with the matches of m in s in order, the first only
// unless all, as gojq finds them: Go's successive non-overlapping
// matches (an empty match right after a match left out), and jq's empty
// match right after a non-empty one. It stops with ctx's error when ctx
// ends, or with f's.
func (m *jqMatcher) each(ctx context.Context, s string, all bool, f func([]int) error) error {
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
		if y := m.emptyAt(s, x[1]); y != nil {
			return f(y)
		}
		return nil
	}
	prevEnd := -1
	for pos := 0; pos <= len(s); {
		if err := ctx.Err(); err != nil {
			return err
		}
		x := m.find(s, pos)
		if x == nil {
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
// flag is set, of a call of a regular expression function, or gojq's
// error for match.
func (x *jqFuncs) operands(v any, args []any) (string, *jqMatcher, bool, error) {
	re, fs := args[0], args[1]
	var flags string
	if fs != nil {
		var ok bool
		if flags, ok = fs.(string); !ok {
			return "", nil, false, matchTypeError(v, re, fs)
		}
	}
	s, ok := v.(string)
	if !ok {
		return "", nil, false, matchTypeError(v, re, fs)
	}
	restr, ok := re.(string)
	if !ok {
		return "", nil, false, matchTypeError(v, re, fs)
	}
	m, err := x.compile(restr, flags)
	if err != nil {
		return "", nil, false, err
	}
	return s, m, strings.ContainsRune(flags, 'g'), nil
}

// matchTypeError is gojq's error for match over a value it cannot match.
func matchTypeError(v, re, fs any) error {
	return fmt.Errorf("match(%s; %s) cannot be applied to: %s", gojq.Preview(re), gojq.Preview(fs), typePreview(v))
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
	s, m, all, err := x.operands(v, args)
	if err != nil {
		return err
	}
	res := []any{}
	r := runes{s: s}
	err = m.each(x.ctx, s, all, func(ix []int) error {
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
	s, m, all, err := x.operands(v, args)
	if err != nil {
		return err
	}
	res := []any{}
	next := 0
	err = m.each(x.ctx, s, all, func(ix []int) error {
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
