package summary

import (
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

// Result is a response after context management: the gateway data model's
// ContextManagedResponse.
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
	Summary *RawSummaryResponse
	// TokensBefore is the exact token count of the input.
	TokensBefore int
	// TokensAfter is the exact token count of Response.
	TokensAfter int
	// ReductionPercent is 100 * (TokensBefore - TokensAfter) / TokensBefore;
	// 0 when the response passed through.
	ReductionPercent float64
}

// Summarize returns data unchanged when it holds at most the threshold of
// tokens, and a summary of it otherwise.
//
// Pass-through: data is counted (stopping at the threshold) and returned as
// it is, the same slice, without being parsed.
//
// Summary: TopN rules cut their arrays first. Then, when shape.Fields is
// set, the summary holds exactly those paths (see [Project]); otherwise
// fields are selected automatically from the object: scalars at the top
// level and one level down in objects, small lists of scalars and arrays
// cut by a TopN rule, ranked by kind (identifiers; names and titles; status
// and state; dates; amounts, prices, totals and currency; counts; other
// short scalars; longer text), top-level fields before nested ones, ties in
// input order. Identity fields (id, uuid, key, slug, and names ending in
// Id, _id, Uuid, Key, Slug) are always kept; the other fields are added in
// rank order while the marshalled summary, meta included, stays within
// [Options.SummaryTokens] by exact count. A string longer than
// [Options.TextLimit] characters is cut at a word boundary and ends with a
// marker naming the characters left out and the parameter that fetches
// them:
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
// Errors: [ErrInvalidJSON]; [ErrNotObject] for automatic selection on
// anything but an object; the errors of [Project]; [ErrInvalidOptions] for
// a bad TopN rule; [*TooLargeError] when the summary is over the hard cap.
func (s *Summarizer) Summarize(data []byte, shape Shape) (*Result, error) {
	if n := budget.CountUpTo(s.counter, string(data), s.budget.Threshold); n <= s.budget.Threshold {
		return &Result{Response: data, TokensBefore: n, TokensAfter: n}, nil
	}
	for _, r := range shape.TopN {
		if err := r.validate(); err != nil {
			return nil, err
		}
	}
	root, err := parse(data)
	if err != nil {
		return nil, err
	}
	before := s.counter.Count(string(data))
	omitted := map[string]int{}
	reduced := map[*node]bool{}
	for _, r := range shape.TopN {
		root = applyTopN(root, strings.Split(r.Path, "."), r, omitted, reduced)
	}
	for k, v := range omitted {
		if v == 0 {
			delete(omitted, k)
		}
	}
	if len(omitted) == 0 {
		omitted = nil
	}

	var out []byte
	var resp RawSummaryResponse
	if shape.Fields != nil {
		out, resp, err = s.projected(root, shape, omitted, reduced)
	} else {
		out, resp, err = s.auto(root, shape, omitted, reduced)
	}
	if err != nil {
		return nil, err
	}
	after := s.counter.Count(string(out))
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

// SummarizeValue is [Summarizer.Summarize] for a Go value, marshalled with
// encoding/json first.
func SummarizeValue[T any](s *Summarizer, v T, shape Shape) (*Result, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("summary: marshal the value to summarize: %w", err)
	}
	return s.Summarize(data, shape)
}

// projected summarizes root with the configured paths.
func (s *Summarizer) projected(root *node, shape Shape, omitted map[string]int, reduced map[*node]bool) ([]byte, RawSummaryResponse, error) {
	sum, paths, err := projectNode(root, shape.Fields)
	if err != nil {
		return nil, RawSummaryResponse{}, err
	}
	// A section is whole when a path names it and no TopN rule cut it.
	var partial []string
	if root.kind == kindObject {
		whole := map[string]bool{}
		for _, p := range paths {
			if !strings.Contains(p, ".") {
				whole[p] = true
			}
		}
		for i, k := range root.keys {
			if !whole[k] || containsReduced(root.vals[i], reduced) {
				partial = append(partial, k)
			}
		}
	} else {
		partial = []string{FieldsAll}
	}
	meta := s.meta(root, shape, paths, partial, omitted)
	out := marshalRaw(nil, sum, &meta)
	return out, RawSummaryResponse{Summary: appendJSON(nil, sum), Meta: meta}, nil
}

func containsReduced(n *node, reduced map[*node]bool) bool {
	if len(reduced) == 0 {
		return false
	}
	if reduced[n] {
		return true
	}
	for _, v := range n.vals {
		if containsReduced(v, reduced) {
			return true
		}
	}
	return false
}

// auto summarizes root by automatic selection.
func (s *Summarizer) auto(root *node, shape Shape, omitted map[string]int, reduced map[*node]bool) ([]byte, RawSummaryResponse, error) {
	if root.kind != kindObject {
		return nil, RawSummaryResponse{}, fmt.Errorf("%w: automatic selection needs an object, got a JSON %s; configure Shape.Fields, or paginate arrays with package pagination", ErrNotObject, kindName(root.kind))
	}
	cs := candidates(root, s.textLimit, reduced)
	chosen := make([]bool, len(cs))
	var rank []int
	for i, c := range cs {
		if c.identity {
			chosen[i] = true
		} else {
			rank = append(rank, i)
		}
	}
	slices.SortStableFunc(rank, func(a, b int) int { return cs[b].score - cs[a].score })

	render := func() ([]byte, RawSummaryResponse) {
		sum, paths, partialIdx := build(root, cs, chosen)
		partial := make([]string, len(partialIdx))
		for i, j := range partialIdx {
			partial[i] = root.keys[j]
		}
		meta := s.meta(root, shape, paths, partial, omitted)
		return marshalRaw(nil, sum, &meta), RawSummaryResponse{Summary: appendJSON(nil, sum), Meta: meta}
	}
	for _, i := range rank {
		chosen[i] = true
		out, _ := render()
		if budget.CountUpTo(s.counter, string(out), s.summaryTokens) > s.summaryTokens {
			chosen[i] = false
		}
	}
	out, resp := render()
	return out, resp, nil
}

// meta builds the meta of a summary; partial lists the top-level sections
// left out or cut.
func (s *Summarizer) meta(root *node, shape Shape, paths, partial []string, omitted map[string]int) Meta {
	m := Meta{Kind: KindFull, TotalFields: len(topKeys(root)), ProjectedFields: paths, OmittedItems: omitted}
	if m.ProjectedFields == nil {
		m.ProjectedFields = []string{}
	}
	if len(partial) > 0 || len(omitted) > 0 {
		fields := strings.Join(partial, ",")
		if fields == "" {
			fields = FieldsAll
		}
		m.Kind = KindPreview
		m.DetailsAvailable = &Details{
			Endpoint:   fillEndpoint(shape.Endpoint, root),
			Parameters: map[string]string{"fields": fields},
		}
	}
	return m
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
			b.WriteString(url.PathEscape(v.lit))
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
