package summary

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/ctxfit/ctxfit/budget"
)

// DefaultTextLimit is the number of characters (runes) automatic selection
// keeps of a long text field when [Options.TextLimit] is zero.
const DefaultTextLimit = 200

// Options configure a [Summarizer]. The zero value (or a nil *Options)
// gives the defaults listed with each field.
type Options struct {
	// Counter counts the tokens of responses and summaries. Nil means
	// budget.Exact("o200k_base"). It must be safe for concurrent use.
	Counter budget.Counter
	// Budget: a response of at most Budget.Threshold tokens passes through
	// unchanged; a summary may not exceed Budget.HardCap. The zero Budget
	// means [budget.Default] (4,000 and 12,000 tokens); any other value must
	// pass [budget.Budget.Validate].
	Budget budget.Budget
	// SummaryTokens is the budget of an automatically selected summary:
	// fields are added while the marshalled summary, meta included, stays
	// within it. Zero means Budget.Threshold / 4, which cuts any response
	// above the threshold by at least 75% unless its identity fields alone
	// are larger. Must be at most Budget.HardCap.
	SummaryTokens int
	// TextLimit is the number of characters (runes) automatic selection
	// keeps of a long string before it cuts it at a word boundary and adds
	// a marker (see [Summarizer.Summarize]). Zero means [DefaultTextLimit];
	// must be >= 0.
	TextLimit int
}

// Shape says how to summarize one kind of object, for example the response
// of GET /api/v1/bookings/{id}.
//
// The zero Shape selects fields automatically and gives no endpoint. A
// Shape is a plain value; its slices must not be modified while a call that
// uses it runs.
type Shape struct {
	// Endpoint is the template of the drill-down endpoint, e.g.
	// "/api/v1/bookings/{id}". Each {name} is replaced by the value of the
	// top-level scalar field name of the object, path-escaped; a
	// placeholder that names no such field is left as written.
	Endpoint string
	// Fields are the [Project] paths of the summary. Nil means automatic
	// selection (see [Summarizer.Summarize]).
	Fields []string
	// TopN rules cut arrays to their best elements before the projection
	// or selection; a cut array counts as a primary field in automatic
	// selection.
	TopN []TopN
}

// Summarizer turns responses above a token threshold into summaries with a
// drill-down link, and lets smaller ones pass through.
//
// A Summarizer is immutable after [New] and safe for concurrent use by
// multiple goroutines. The zero value is not usable; create one with New.
type Summarizer struct {
	counter       budget.Counter
	budget        budget.Budget
	summaryTokens int
	textLimit     int
}

// New returns a Summarizer. opts is copied; nil means the defaults. It fails
// with an error wrapping [ErrInvalidOptions] that names the field when an
// option is out of range.
func New(opts *Options) (*Summarizer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Counter == nil {
		c, err := budget.Exact(budget.O200KBase)
		if err != nil {
			return nil, fmt.Errorf("summary: default counter: %w", err)
		}
		o.Counter = c
	}
	if o.Budget == (budget.Budget{}) {
		o.Budget = budget.Default()
	} else if err := o.Budget.Validate(); err != nil {
		return nil, fmt.Errorf("%w: Options.Budget: %w", ErrInvalidOptions, err)
	}
	if o.SummaryTokens == 0 {
		o.SummaryTokens = max(o.Budget.Threshold/4, 1)
	}
	if o.SummaryTokens < 0 || o.SummaryTokens > o.Budget.HardCap {
		return nil, fmt.Errorf("%w: Options.SummaryTokens %d must be from 1 to the hard cap %d (or 0 for threshold/4)",
			ErrInvalidOptions, o.SummaryTokens, o.Budget.HardCap)
	}
	if o.TextLimit == 0 {
		o.TextLimit = DefaultTextLimit
	}
	if o.TextLimit < 0 {
		return nil, fmt.Errorf("%w: Options.TextLimit %d must be >= 0 (0 for %d)", ErrInvalidOptions, o.TextLimit, DefaultTextLimit)
	}
	return &Summarizer{counter: o.Counter, budget: o.Budget, summaryTokens: o.SummaryTokens, textLimit: o.TextLimit}, nil
}

// Budget returns the budget the Summarizer works with.
func (s *Summarizer) Budget() budget.Budget { return s.budget }

// Result is a response after context management.
//
// The zero value is an empty pass-through. A Result is a plain value, safe
// for concurrent reads.
type Result struct {
	// Response is what to send: the input itself (the same slice) when it
	// passed through, else the marshalled Summary.
	Response []byte
	// Summarized reports whether the response was summarized.
	Summarized bool
	// Summary is the summary; nil when the response passed through.
	Summary *RawResponse
	// TokensBefore is the exact token count of the input.
	TokensBefore int
	// TokensAfter is the exact token count of Response.
	TokensAfter int
	// ReductionPercent is 100 * (TokensBefore - TokensAfter) / TokensBefore;
	// 0 when the response passed through.
	ReductionPercent float64
}

// Summarize is [Summarizer.SummarizeContext] with [context.Background]:
// it always runs to the end.
func (s *Summarizer) Summarize(data []byte, shape Shape) (*Result, error) {
	return s.SummarizeContext(context.Background(), data, shape)
}

// SummarizeContext returns data unchanged when it holds at most the
// threshold of tokens, and a summary of it otherwise.
//
// Pass-through: data is counted (stopping at the threshold) and returned as
// it is, the same slice, without being parsed.
//
// Summary: TopN rules cut their arrays first. Then, when shape.Fields is
// set, the summary holds exactly those paths (see [Project]); otherwise
// fields are selected automatically from the object: scalars at the top
// level and one level down in objects, small lists of scalars and arrays
// cut by a TopN rule, ranked by kind (identifiers; names, titles, types and
// kinds; status and state; dates; amounts, prices, totals and currency;
// counts; other short scalars; longer text), top-level fields before nested
// ones, ties in input order. Identity fields (id, uuid, key, slug, and
// names ending in Id, _id, Uuid, Key, Slug) are always kept; the other
// fields are added in rank order, each one that fits (until a thousand in
// a row do not), while the marshalled summary, meta included, stays within
// [Options.SummaryTokens] by exact count. A string longer than [Options.TextLimit] characters is cut at a
// word boundary and ends with a marker naming the characters left out and
// the parameter that fetches them:
//
//	"A bright apartment with a view of the river… [1,234 more characters; fields=description]"
//
// The summary keeps the nesting and the key order of data. Its meta gives
// the number of top-level fields, the projected paths, the elements each
// TopN rule left out, and the drill-down link: shape.Endpoint filled with
// the object's fields, and the fields parameter listing the top-level
// sections the summary left out or cut ([ServeDetails] serves it; "all"
// fetches everything). When nothing was left out the kind is "full" and
// there is no link.
//
// The names of the sections left out take at most a tenth of the
// threshold (by exact count): when the whole list is longer, the fields
// parameter is "all", meta.omittedFields lists as many of the names as fit,
// in input order, and meta.omittedFieldCount says how many sections were
// left out or cut in all (see [Meta]).
//
// The work is linear in the size of data, apart from sorting the candidate
// fields, and a bounded number of exact counts of the summary. It looks
// at ctx before it starts, every thousand or so values it parses or
// fields it weighs, and every 64 KiB it counts, and stops with an error
// that wraps ctx.Err() once ctx has ended: within milliseconds (what it
// cannot cut is copying the input and writing the summary out).
//
// Errors: [ErrInvalidJSON]; [ErrNotObject] for automatic selection on
// anything but an object; the errors of [Project]; [ErrInvalidOptions] for
// a bad TopN rule; [*TooLargeError] when the summary is over the hard cap;
// the context's error.
func (s *Summarizer) SummarizeContext(ctx context.Context, data []byte, shape Shape) (*Result, error) {
	st := newStopper(ctx)
	if err := st.check(); err != nil {
		return nil, err
	}
	text := string(data)
	if n := budget.CountUpTo(s.counter, text, s.budget.Threshold); n <= s.budget.Threshold {
		return &Result{Response: data, TokensBefore: n, TokensAfter: n}, nil
	}
	for _, r := range shape.TopN {
		if err := r.validate(); err != nil {
			return nil, err
		}
	}
	root, err := parseForSummary(ctx, data, shape)
	if err != nil {
		return nil, err
	}
	before, err := s.count(st, text)
	if err != nil {
		return nil, err
	}
	j := &job{s: s, st: st, shape: shape, reduced: map[*node]bool{}, cutSections: map[string]bool{}}
	omitted := map[string]int{}
	for _, r := range shape.TopN {
		segs := strings.Split(r.Path, ".")
		had := len(j.reduced)
		if root, err = applyTopN(st, root, segs, r, omitted, j.reduced); err != nil {
			return nil, err
		}
		if len(j.reduced) > had {
			j.cutSections[segs[0]] = true
		}
	}
	for k, v := range omitted {
		if v == 0 {
			delete(omitted, k)
		}
	}
	if len(omitted) > 0 {
		j.omitted = omitted
	}
	j.root = root

	var out []byte
	var resp RawResponse
	if shape.Fields != nil {
		out, resp, err = j.projected()
	} else {
		out, resp, err = j.auto()
	}
	if err != nil {
		return nil, err
	}
	after, err := s.count(st, string(out))
	if err != nil {
		return nil, err
	}
	if after > s.budget.HardCap {
		return nil, &TooLargeError{Tokens: after, HardCap: s.budget.HardCap}
	}
	return &Result{
		Response:         out,
		Summarized:       true,
		Summary:          &resp,
		TokensBefore:     before,
		TokensAfter:      after,
		ReductionPercent: 100 * float64(before-after) / float64(before),
	}, nil
}

// summaryLevels is the nesting that automatic selection looks at: the
// top-level fields, the fields of top-level objects, and the elements of
// the lists among them.
const summaryLevels = 3

// parseForSummary parses data, building only what a summary of the shape
// reads: the levels automatic selection looks at (or, with configured
// fields, the top-level fields), and the paths of the configured fields and
// of the TopN rules whole.
func parseForSummary(ctx context.Context, data []byte, shape Shape) (*node, error) {
	t := &pathTrie{}
	for _, r := range shape.TopN {
		t.add(strings.Split(r.Path, "."), r.Path)
	}
	levels := summaryLevels
	if shape.Fields != nil {
		fields, _, err := compilePaths(shape.Fields)
		if err != nil {
			// Invalid JSON is reported first, as when the paths are valid.
			if _, jerr := parseShallow(ctx, data); jerr != nil {
				return nil, jerr
			}
			return nil, err
		}
		t.merge(fields)
		levels = 1
	}
	p := parser{data: data, stop: newStopper(ctx)}
	return p.run(guide{mode: prefix, t: t, levels: levels})
}

// SummarizeValue is [Summarizer.Summarize] for a Go value, marshalled with
// encoding/json first.
func SummarizeValue[T any](s *Summarizer, v T, shape Shape) (*Result, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("summary: marshal the value to summarize: %w", err)
	}
	return s.Summarize(data, shape)
}

// job is the state of one summary.
type job struct {
	s           *Summarizer
	st          *stopper
	root        *node
	shape       Shape
	omitted     map[string]int    // elements left out per TopN path; nil when none
	reduced     map[*node]bool    // the arrays TopN rules cut
	cutSections map[string]bool   // top-level fields holding an array a TopN rule cut
	nameCost    map[string][2]int // estimated tokens of a left-out name, in a list and in an array
	filled      *string           // the drill-down endpoint, once filled
}

// projected summarizes the root with the configured paths.
func (j *job) projected() ([]byte, RawResponse, error) {
	sum, paths, err := projectNode(j.st, j.root, j.shape.Fields)
	if err != nil {
		return nil, RawResponse{}, err
	}
	// A section is whole when a path names it and no TopN rule cut it.
	var partial []string
	if j.root.kind == kindObject {
		whole := map[string]bool{}
		for _, p := range paths {
			if !strings.Contains(p, ".") {
				whole[p] = true
			}
		}
		for _, k := range j.root.keys {
			if !whole[k] || j.cutSections[k] {
				partial = append(partial, k)
			}
		}
	} else {
		partial = []string{FieldsAll}
	}
	meta, err := j.meta(paths, sliceList(partial))
	if err != nil {
		return nil, RawResponse{}, err
	}
	out := marshalRaw(nil, sum, &meta)
	return out, RawResponse{Summary: appendJSON(nil, sum), Meta: meta}, nil
}

// auto summarizes the root by automatic selection (see fit).
func (j *job) auto() ([]byte, RawResponse, error) {
	if j.root.kind != kindObject {
		return nil, RawResponse{}, fmt.Errorf("%w: automatic selection needs an object, got a JSON %s; configure Shape.Fields, or paginate arrays with package pagination", ErrNotObject, kindName(j.root.kind))
	}
	cs, err := candidates(j.st, j.root, j.s.textLimit, j.reduced)
	if err != nil {
		return nil, RawResponse{}, err
	}
	f := newFitter(j, cs)
	chosen, err := f.fit()
	if err != nil {
		return nil, RawResponse{}, err
	}
	out, sum, meta, err := f.render(chosen)
	if err != nil {
		return nil, RawResponse{}, err
	}
	return out, RawResponse{Summary: appendJSON(nil, sum), Meta: meta}, nil
}

// nameList is a list of top-level field names in input order, read one at
// a time so that a long list is never built whole.
type nameList struct {
	n  int                // the number of names
	at func(i int) string // the i-th name, in order; called with i rising
}

func sliceList(s []string) nameList {
	return nameList{n: len(s), at: func(i int) string { return s[i] }}
}

// meta builds the meta of a summary: paths are the projected paths, partial
// the top-level sections left out or cut.
func (j *job) meta(paths []string, partial nameList) (Meta, error) {
	m := Meta{Kind: KindFull, TotalFields: j.totalFields(), ProjectedFields: paths, OmittedItems: j.omitted}
	if m.ProjectedFields == nil {
		m.ProjectedFields = []string{}
	}
	if partial.n == 0 && len(j.omitted) == 0 {
		return m, nil
	}
	fields := FieldsAll
	if partial.n > 0 {
		list, listed, err := j.boundedList(partial)
		if err != nil {
			return Meta{}, err
		}
		if list != "" {
			fields = list
		} else {
			m.OmittedFields = listed
			m.OmittedFieldCount = partial.n
		}
	}
	m.Kind = KindPreview
	m.DetailsAvailable = &Details{
		Endpoint:   fillEndpoint(j.shape.Endpoint, j.root),
		Parameters: map[string]string{"fields": fields},
	}
	return m, nil
}

// endpoint returns the drill-down endpoint, filled once per summary.
func (j *job) endpoint() string {
	if j.filled == nil {
		e := fillEndpoint(j.shape.Endpoint, j.root)
		j.filled = &e
	}
	return *j.filled
}

// totalFields is the number of top-level fields of the root.
func (j *job) totalFields() int {
	if j.root.kind == kindObject {
		return len(j.root.keys)
	}
	return len(topKeys(j.root))
}

// listShare is the part of the threshold that the names of the sections a
// summary left out may take: a tenth.
const listShare = 10

// boundedList returns how a summary names the sections in names. When the
// whole comma-separated list, as a JSON string, takes at most
// threshold/listShare tokens by exact count, it is list. Otherwise list is
// "" and listed holds a prefix of names whose JSON array takes at most that
// many tokens, by exact count: the longest one, unless the estimates
// below were more than a quarter over.
//
// Each name's cost is estimated once per summary (by the exact count of
// the name with its separators), and the sums of the costs choose a first
// prefix; exact counts of the list then move it (a handful of them, or a
// binary search). Only the names whose estimated cost fits, with a margin,
// are ever read, so the work does not grow with the number of names.
func (j *job) boundedList(names nameList) (list string, listed []string, err error) {
	s := j.s
	limit := s.budget.Threshold / listShare
	margin := limit/4 + 8
	if j.nameCost == nil {
		j.nameCost = map[string][2]int{}
	}
	// Read names while their estimated cost stays within the limit and its
	// margin, in either form.
	var read []string
	arrSums := []int{1} // estimated tokens of the array of the first i names
	strSum := 1
	var buf []byte
	for len(read) < names.n && (strSum <= limit+margin || arrSums[len(arrSums)-1] <= limit+margin) {
		name := names.at(len(read))
		cost, ok := j.nameCost[name]
		if !ok {
			buf = append(append(buf[:0], name...), ',')
			cost[0] = s.counter.Count(string(buf))
			buf = appendString(buf[:0], name)
			buf = append(buf, ',')
			cost[1] = s.counter.Count(string(buf))
			j.nameCost[name] = cost
		}
		read = append(read, name)
		strSum += cost[0]
		arrSums = append(arrSums, arrSums[len(arrSums)-1]+cost[1])
	}
	if len(read) == names.n && strSum <= limit+margin {
		all := strings.Join(read, ",")
		t, err := s.countUpTo(j.st, string(appendString(buf[:0], all)), limit)
		if err != nil {
			return "", nil, err
		}
		if t <= limit {
			return all, nil, nil
		}
	}
	// The whole list is too long: a prefix of the array that fits. Start
	// from the estimates, then move by the exact counts.
	count := func(n int) (int, error) {
		buf = appendStrings(buf[:0], read[:n])
		return s.countUpTo(j.st, string(buf), limit)
	}
	// longest returns the longest prefix from lo (fits) to hi (does not).
	longest := func(lo, hi int) (int, error) {
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			t, err := count(mid)
			if err != nil {
				return 0, err
			}
			if t <= limit {
				lo = mid
			} else {
				hi = mid
			}
		}
		return lo, nil
	}
	k, _ := slices.BinarySearch(arrSums, limit+1) // arrSums[k-1] <= limit
	k = max(k-1, 0)
	t, err := count(k)
	if err != nil {
		return "", nil, err
	}
	if t > limit {
		if k, err = longest(0, k); err != nil {
			return "", nil, err
		}
	}
	for range 4 {
		if t > limit || k == len(read) {
			break
		}
		// Grow by what the room left holds at the cost per name so far.
		perName := max(float64(t-1)/float64(max(k, 1)), 1)
		next := min(k+max(int(float64(limit-t)/perName), 1), len(read))
		tn, err := count(next)
		if err != nil {
			return "", nil, err
		}
		if tn > limit {
			if k, err = longest(k, next); err != nil {
				return "", nil, err
			}
			break
		}
		k, t = next, tn
	}
	if k == 0 {
		return "", nil, nil
	}
	return "", slices.Clone(read[:k]), nil
}

// appendStrings appends the JSON array of ss.
func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// fillEndpoint replaces each {name} of template by the path-escaped value
// of the top-level scalar field name of root.
func fillEndpoint(template string, root *node) string {
	var b strings.Builder
	rest := template
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(rest[:i])
		name := rest[i+1 : i+j]
		if v := root.get(name); v != nil && (v.kind == kindString || v.kind == kindNumber) {
			b.WriteString(url.PathEscape(v.text()))
		} else {
			b.WriteString(rest[i : i+j+1])
		}
		rest = rest[i+j+1:]
	}
	b.WriteString(rest)
	return b.String()
}

func kindName(k kind) string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}
