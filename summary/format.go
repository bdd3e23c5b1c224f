package summary

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/budget"
)

// DefaultFormatTimeout is the time limit of a format when
// [FormatOptions.Timeout] is zero.
const DefaultFormatTimeout = 100 * time.Millisecond

// Format turns the JSON response of one operation into compact text.
//
// The template is a [text/template] template executed on the response
// after projection on Fields; the response's fields are reached as
// {{.name}}, nested ones as {{.source.name}}, lists with {{range}}, and
// their length with {{len .nodes}}. Numbers print as written in the
// response. The arguments of the call ([Formatter.RenderArgs]) are
// {{.args}}: {{.args.query}} (unless the response itself has a field
// "args", which wins). Fields are optional unless listed in Required: a
// field the response lacks, or holds null, prints as empty, {{len}} of it
// is 0, and {{or .field "default"}} gives a default; a Required field the
// response lacks makes the output fall back to the JSON, with an error
// that names it. Besides the functions of text/template, a template may call
//
//	{{relTime .created_at}}    "2h ago", "3d ago", "1mo ago", "in 5m", "just now"
//	{{last8 .uuid}}            the last 8 characters: "55440000"
//	{{truncate 80 .content}}   at most 80 characters, cut at a word boundary, "..." added
//	{{inc $i}}                 $i + 1, to number the elements of a range
//
// and the functions of Transforms. For example, a search_nodes format is
//
//	Found {{len .nodes}} entities:
//	{{range $i, $n := .nodes}}{{inc $i}}. {{$n.name}} [{{$n.entity_type}}] - {{truncate 80 $n.summary}}
//	{{end}}
//
// The zero value is not valid. A Format is a plain value, copied by
// [NewFormatter].
type Format struct {
	// ID identifies the format: letters, digits and underscores.
	ID string
	// Template is the text/template source; it must hold at least one
	// action ({{...}}).
	Template string
	// Fields are the [Project] paths the template may use; at least one.
	// The template sees only them, so that a format never shows more than
	// it declares.
	Fields []string
	// Required are the paths of Fields the output cannot do without: a
	// response in which one matches nothing falls back to the JSON, with
	// an error naming it. Through arrays ("nodes.name") a path is present
	// when at least one element has it, or when the array is empty (a
	// search that found nothing renders its empty range rather than
	// falling back). Nil means every field is optional.
	Required []string
	// Transforms are extra template functions by name, as in
	// [template.FuncMap]: each must be a function returning one value, or a
	// value and an error. A transform that returns an error, or panics,
	// makes the output fall back to the JSON.
	Transforms map[string]any
	// MaxLength is the largest number of characters (runes) of the output;
	// longer text is cut at a word boundary and ends with "…". Zero means no
	// limit; must be >= 0.
	MaxLength int
	// FieldTransforms rewrite values before the template sees them, keyed by a [Project] path of the
	// projected response ("nodes.created_at" reaches the field in every
	// element of nodes) and naming a built-in transform:
	//
	//	relativeTime     an RFC 3339 timestamp or a date as "2h ago", "in 5m"
	//	truncateUuid     the last 8 characters after "...": "...55440000"
	//	truncateText:N   at most N characters, cut at a word boundary, "..." added
	//
	// A path the response lacks is skipped; a transform that fails (a value
	// that is not a time) makes the output fall back to the JSON. Nil means
	// none.
	FieldTransforms map[string]string
}

// Names of the built-in field transforms ([Format.FieldTransforms]).
const (
	TransformRelativeTime = "relativeTime"
	TransformTruncateUUID = "truncateUuid"
	TransformTruncateText = "truncateText" // with ":N", the largest number of characters
)

// FormatOptions configure a [Formatter]. The zero value (or a nil
// *FormatOptions) gives the defaults listed with each field.
type FormatOptions struct {
	// Counter counts the tokens of the raw and compact outputs. Nil means
	// budget.Exact("o200k_base"). It must be safe for concurrent use.
	Counter budget.Counter
	// Timeout is the time limit of one use of a format. Zero means
	// [DefaultFormatTimeout] (100 ms); must be >= 0.
	Timeout time.Duration
	// Now is the clock of relTime and of [Metrics.Timestamp]. Nil means
	// time.Now.
	Now func() time.Time
}

// Formatter renders responses with the [Format] of their operation, and
// falls back to the JSON when a format fails or is too slow.
//
// A Formatter is immutable after [NewFormatter] and safe for concurrent use
// by multiple goroutines. The zero value is not usable.
type Formatter struct {
	formats map[string]*compiledFormat
	counter budget.Counter
	timeout time.Duration
	now     func() time.Time
}

type compiledFormat struct {
	f          Format
	tmpl       *template.Template
	transforms []fieldTransform
}

var formatID = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// NewFormatter returns a Formatter with formats by operation name (e.g.
// "search_nodes"). formats and opts are copied; nil opts means the
// defaults. It fails with a [*FormatError] (wrapping [ErrInvalidFormat])
// naming the format and the rule it breaks, or an error wrapping
// [ErrInvalidOptions].
func NewFormatter(formats map[string]Format, opts *FormatOptions) (*Formatter, error) {
	var o FormatOptions
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
	if o.Timeout == 0 {
		o.Timeout = DefaultFormatTimeout
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("%w: FormatOptions.Timeout %v must be >= 0 (0 for %v)", ErrInvalidOptions, o.Timeout, DefaultFormatTimeout)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	f := &Formatter{formats: make(map[string]*compiledFormat, len(formats)), counter: o.Counter, timeout: o.Timeout, now: o.Now}
	for op, format := range formats {
		c, err := f.compile(format)
		if err != nil {
			return nil, err
		}
		f.formats[op] = c
	}
	return f, nil
}

func (f *Formatter) compile(format Format) (c *compiledFormat, err error) {
	fail := func(reason string, args ...any) (*compiledFormat, error) {
		return nil, &FormatError{ID: format.ID, Reason: fmt.Sprintf(reason, args...)}
	}
	switch {
	case !formatID.MatchString(format.ID):
		return fail("the ID must be letters, digits and underscores")
	case !strings.Contains(format.Template, "{{"):
		return fail("the template must hold at least one placeholder such as {{.name}}")
	case len(format.Fields) == 0:
		return fail("Fields must list at least one field the template uses")
	case format.MaxLength < 0:
		return fail("MaxLength %d must be >= 0 (0 for no limit)", format.MaxLength)
	}
	if _, _, err := compilePaths(format.Fields); err != nil {
		return fail("%v", err)
	}
	for _, r := range format.Required {
		if !slices.Contains(format.Fields, r) {
			return fail("the required field %q is not one of Fields %q: list it there too", r, format.Fields)
		}
	}
	transforms := make([]fieldTransform, 0, len(format.FieldTransforms))
	for path, name := range format.FieldTransforms {
		t, err := f.fieldTransform(path, name)
		if err != nil {
			return fail("%v", err)
		}
		transforms = append(transforms, t)
	}
	funcs := template.FuncMap{
		"relTime":  func(v any) (string, error) { return relativeTime(v, f.now()) },
		"last8":    func(v any) string { s := fmt.Sprint(v); return s[max(len(s)-8, 0):] },
		"truncate": truncateFunc,
		"inc":      func(i int) int { return i + 1 },
		"len":      lenOf,
	}
	for name, fn := range format.Transforms {
		funcs[name] = fn
	}
	defer func() {
		if r := recover(); r != nil { // template.Funcs panics on a bad function
			c, err = fail("transform: %v", r)
		}
	}()
	tmpl, err := template.New(format.ID).Funcs(funcs).Option("missingkey=default").Parse(format.Template)
	if err != nil {
		return fail("the template does not parse: %v", err)
	}
	format.Fields = append([]string(nil), format.Fields...)
	format.Required = append([]string(nil), format.Required...)
	return &compiledFormat{f: format, tmpl: tmpl, transforms: transforms}, nil
}

// Metrics measure one use of a format, with exact token counts: the
// MCP-wrapper data model's TokenMetrics, whose names they keep, but for
// RawTokens and CompactTokens (rawTokens, compactTokens), its
// estimatedTokensBefore and estimatedTokensAfter counted exactly rather
// than estimated as characters/4, and UsedFallback, which its
// TransformationLog has.
//
// The zero value measures nothing. Metrics is a plain value.
type Metrics struct {
	Operation    string    `json:"operation"`
	Timestamp    time.Time `json:"timestamp"`
	RawBytes     int       `json:"rawBytes"`
	CompactBytes int       `json:"compactBytes"` // equal to RawBytes on fallback
	// SavingsPercent is 100 * (RawTokens - CompactTokens) / RawTokens: 0
	// on fallback, negative when the compact text has more tokens.
	SavingsPercent   float64 `json:"savingsPercent"`
	RawTokens        int     `json:"rawTokens"`
	CompactTokens    int     `json:"compactTokens"`
	ProcessingTimeMs float64 `json:"processingTimeMs"`
	// UsedFallback reports whether the output is the raw JSON.
	UsedFallback bool `json:"usedFallback"`
}

// Output is the result of [Formatter.Format].
//
// The zero value is an empty output. Output is a plain value.
type Output struct {
	// Text is the compact text, or the raw JSON, unchanged, on fallback.
	Text string
	// Fallback is nil when Text is compact; otherwise it says why the
	// output fell back to the JSON and wraps [ErrNoFormat],
	// [ErrFormatFailed] or [ErrFormatTimeout].
	Fallback error
	// Metrics measure this use.
	Metrics Metrics
}

// Format renders raw, the JSON response of operation, with the operation's
// format. It never fails: when there is no format for operation, raw is not
// valid JSON or lacks a declared field, the template or a transform fails
// or panics, or rendering takes longer than the timeout (or ctx ends
// first), Text is raw itself and Fallback says why. Every use reports its
// [Metrics].
//
// A rendering that times out keeps running in its own goroutine until its
// transforms return; its text is discarded.
func (f *Formatter) Format(ctx context.Context, operation string, raw []byte) Output {
	start := time.Now()
	text, err := f.Render(ctx, operation, raw)
	elapsed := time.Since(start)
	m := Metrics{
		Operation:        operation,
		Timestamp:        f.now(),
		RawBytes:         len(raw),
		RawTokens:        f.counter.Count(string(raw)),
		ProcessingTimeMs: float64(elapsed.Microseconds()) / 1000,
	}
	if err != nil {
		text = string(raw)
		m.UsedFallback = true
	}
	m.CompactBytes = len(text)
	m.CompactTokens = m.RawTokens
	if err == nil {
		m.CompactTokens = f.counter.Count(text)
	}
	if m.RawTokens > 0 {
		m.SavingsPercent = 100 * float64(m.RawTokens-m.CompactTokens) / float64(m.RawTokens)
	}
	return Output{Text: text, Fallback: err, Metrics: m}
}

// ID returns the ID of operation's format, "" when it has none.
func (f *Formatter) ID(operation string) string {
	if c := f.formats[operation]; c != nil {
		return c.f.ID
	}
	return ""
}

// Render is [Formatter.Format] without the measuring and without the
// fallback: the compact text, or the error that Format's Fallback would
// hold (wrapping [ErrNoFormat], [ErrFormatFailed] or [ErrFormatTimeout]).
// It is for callers that measure raw their own way (the guard counts a
// large response only up to its hard cap).
func (f *Formatter) Render(ctx context.Context, operation string, raw []byte) (string, error) {
	return f.RenderArgs(ctx, operation, raw, nil)
}

// RenderArgs is [Formatter.Render] of the response raw to a call with the
// arguments args (a JSON object, such as an MCP tool call's arguments),
// which the template reads as {{.args}}. Nil args (or args that are not an
// object) are an empty object.
func (f *Formatter) RenderArgs(ctx context.Context, operation string, raw, args []byte) (string, error) {
	c := f.formats[operation]
	if c == nil {
		return "", fmt.Errorf("%w %q; the JSON is sent as it is: add a Format for it to compact it", ErrNoFormat, operation)
	}
	projected, missed, err := projectLenient(ctx, raw, c.f.Fields)
	if err != nil && ctx.Err() != nil {
		return "", fmt.Errorf("%w: format %q: %w; the JSON is sent as it is", ErrFormatTimeout, c.f.ID, err)
	}
	if err != nil {
		return "", fmt.Errorf("%w: format %q: %w; the JSON is sent as it is", ErrFormatFailed, c.f.ID, err)
	}
	for _, m := range missed {
		if slices.Contains(c.f.Required, m) {
			return "", fmt.Errorf("%w: format %q: the response lacks the required field %q; the JSON is sent as it is", ErrFormatFailed, c.f.ID, m)
		}
	}
	data, err := decodeNumbers(projected)
	if err != nil {
		return "", fmt.Errorf("%w: format %q: %w", ErrFormatFailed, c.f.ID, err)
	}
	if obj, ok := data.(map[string]any); ok {
		if _, taken := obj["args"]; !taken {
			a, _ := decodeNumbers(args)
			if _, ok := a.(map[string]any); !ok {
				a = map[string]any{}
			}
			obj["args"] = a
		}
	}
	// A missing intermediate object prints "<no value>" in text/template;
	// the output drops it unless the response itself holds those words.
	noValue := !bytes.Contains(raw, []byte("<no value>")) && !bytes.Contains(raw, []byte(`\u003cno value\u003e`)) &&
		!bytes.Contains(args, []byte("<no value>")) && !bytes.Contains(args, []byte(`\u003cno value\u003e`))

	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1) // buffered: a late rendering never blocks
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("panic: %v", r)}
			}
		}()
		for _, t := range c.transforms {
			if err := t.apply(data); err != nil {
				done <- result{err: err}
				return
			}
		}
		for _, p := range c.f.Fields {
			fillMissing(data, strings.Split(p, "."))
		}
		var b strings.Builder
		err := c.tmpl.Execute(&b, data)
		text := b.String()
		if noValue {
			text = strings.ReplaceAll(text, "<no value>", "")
		}
		done <- result{text, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return "", fmt.Errorf("%w: format %q: %v; the JSON is sent as it is: fix the template or transform", ErrFormatFailed, c.f.ID, r.err)
		}
		text := r.text
		if c.f.MaxLength > 0 && utf8.RuneCountInString(text) > c.f.MaxLength {
			text = cutAtWord(text, c.f.MaxLength-1) + "…"
		}
		return text, nil
	case <-ctx.Done():
		return "", fmt.Errorf("%w: format %q did not finish within %v (%v); the JSON is sent as it is: make its transforms faster or raise FormatOptions.Timeout",
			ErrFormatTimeout, c.f.ID, f.timeout, context.Cause(ctx))
	}
}

// decodeNumbers decodes JSON with numbers as json.Number, so that they
// print as written; empty input is nil.
func decodeNumbers(raw []byte) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// fillMissing sets the field at path, in every object of data it reaches
// (through arrays), to "" where the object lacks it or holds null, so that
// an optional field prints as empty; a missing object on the way is left
// missing.
func fillMissing(data any, path []string) {
	switch x := data.(type) {
	case []any:
		for _, e := range x {
			fillMissing(e, path)
		}
	case map[string]any:
		v, ok := x[path[0]]
		if len(path) == 1 {
			if !ok || v == nil {
				x[path[0]] = ""
			}
			return
		}
		if ok {
			fillMissing(v, path[1:])
		}
	}
}

// lenOf is the template function len: the built-in's, but 0 for a missing
// value or an empty string and never an error.
func lenOf(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return len(x)
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return rv.Len()
	}
	return 0
}

// truncateFunc is the template function truncate: s cut to at most n
// characters at a word boundary, with "..." added when cut.
func truncateFunc(n int, v any) string {
	s := fmt.Sprint(v)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return cutAtWord(s, max(n-3, 1)) + "..."
}

// relativeTime describes the time v (an RFC 3339 timestamp or a date) as
// seen from now: "just now", "5m ago", "2h ago", "3d ago", "1mo ago",
// "2y ago", or "in 5m" for the future; "" for nil or "".
func relativeTime(v any, now time.Time) (string, error) {
	if v == nil || v == "" {
		return "", nil // an optional field the response lacks
	}
	s := fmt.Sprint(v)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, s); err != nil {
			return "", fmt.Errorf("relTime: %q is not an RFC 3339 timestamp or a date", s)
		}
	}
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var amount string
	switch {
	case d < time.Minute:
		return "just now", nil
	case d < time.Hour:
		amount = strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 24*time.Hour:
		amount = strconv.Itoa(int(d/time.Hour)) + "h"
	case d < 30*24*time.Hour:
		amount = strconv.Itoa(int(d/(24*time.Hour))) + "d"
	case d < 365*24*time.Hour:
		amount = strconv.Itoa(int(d/(30*24*time.Hour))) + "mo"
	default:
		amount = strconv.Itoa(int(d/(365*24*time.Hour))) + "y"
	}
	if future {
		return "in " + amount, nil
	}
	return amount + " ago", nil
}
