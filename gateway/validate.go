package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ctxfit/ctxfit/internal/schemaloop"
)

// maxValue bounds the value an error quotes, in bytes.
const maxValue = 80

// schemas are a tool's compiled schemas; nil: not checked.
type schemas struct {
	input, output *schema
}

// schema is one compiled schema. github.com/google/jsonschema-go (which
// the MCP SDK uses, so it costs the binary nothing, and unlike
// github.com/santhosh-tekuri/jsonschema compiles no meta-schema at package
// initialisation, which every ctxfit subcommand paid) gives the verdict;
// it reports a message only, so check walks the schema again to name the
// violation a model can correct: its instance location, its keyword and
// what is expected. check also asserts formats, which jsonschema-go does
// not.
type schema struct {
	resolved *jsonschema.Resolved
	root     map[string]any // the converted schema, self-contained (no $ref)
	// patterns are the schema's pattern and patternProperties regular
	// expressions, compiled.
	patterns map[string]*regexp.Regexp
	formats  bool // formats are asserted
	// hasFormat: the schema has a format that check asserts, so a value
	// jsonschema-go accepts is checked again.
	hasFormat bool
}

// compile compiles op's input schema (with formats asserted: a date-time,
// a uuid or an email the API would refuse is the model's to correct) and
// its output schema, logging the one that does not compile (it is then
// not checked).
func compile(op *Operation, logger *slog.Logger) schemas {
	var s schemas
	var err error
	if s.input, err = compileSchema(op.input, true); err != nil {
		logger.Warn("gateway: the input schema does not compile; the tool's arguments are not validated",
			"tool", op.Tool.Name, "err", err)
	}
	if op.outputs != nil {
		if s.output, err = compileSchema(op.outputs, false); err != nil {
			logger.Warn("gateway: the output schema does not compile; the answers are not checked against it",
				"tool", op.Tool.Name, "err", err)
		}
	}
	return s
}

// compileSchema compiles a schema (JSON Schema 2020-12, self-contained)
// for validation.
func compileSchema(root map[string]any, formats bool) (*schema, error) {
	b, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, err
	}
	resolved, err := js.Resolve(nil)
	if err != nil {
		return nil, err
	}
	// The schema as JSON decodes it, so that check meets only JSON's types
	// (the converter's maps hold []string, say).
	decoded, err := decodeInstance(b)
	if err != nil {
		return nil, err
	}
	root, _ = decoded.(map[string]any)
	// jsonschema-go recurses without end on a reference that loops without
	// reading a value, until the stack overflows (fatal, past any recover).
	if err := schemaloop.Check(root); err != nil {
		return nil, err
	}
	s := &schema{resolved: resolved, root: root, formats: formats, patterns: map[string]*regexp.Regexp{}}
	var walkErr error
	walkSchema(root, func(m map[string]any) {
		if p, ok := m["pattern"].(string); ok {
			walkErr = s.addPattern(p, walkErr)
		}
		if pp, ok := m["patternProperties"].(map[string]any); ok {
			for p := range pp {
				walkErr = s.addPattern(p, walkErr)
			}
		}
		if f, ok := m["format"].(string); ok && formats && formatCheckers[f] != nil {
			s.hasFormat = true
		}
	})
	if walkErr != nil {
		return nil, walkErr
	}
	return s, nil
}

func (s *schema) addPattern(p string, prev error) error {
	if _, ok := s.patterns[p]; ok {
		return prev
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return fmt.Errorf("pattern %q: %w", p, err)
	}
	s.patterns[p] = re
	return prev
}

// Keywords whose value is a schema, a list of schemas or a map of them, as
// check and walkSchema follow them.
var (
	subschemaKeywords     = []string{"not", "if", "then", "else", "items", "additionalProperties", "propertyNames", "contains", "unevaluatedProperties", "unevaluatedItems", "contentSchema"}
	subschemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	subschemaMapKeywords  = []string{"properties", "patternProperties", "dependentSchemas", "$defs"}
)

// walkSchema calls f with every schema object within s, s included.
func walkSchema(s map[string]any, f func(map[string]any)) {
	f(s)
	for _, k := range subschemaKeywords {
		if m, ok := s[k].(map[string]any); ok {
			walkSchema(m, f)
		}
	}
	for _, k := range subschemaListKeywords {
		list, _ := s[k].([]any)
		for _, v := range list {
			if m, ok := v.(map[string]any); ok {
				walkSchema(m, f)
			}
		}
	}
	for _, k := range subschemaMapKeywords {
		mm, _ := s[k].(map[string]any)
		for _, v := range mm {
			if m, ok := v.(map[string]any); ok {
				walkSchema(m, f)
			}
		}
	}
}

// validate checks inst (decoded with json.Decoder.UseNumber) against s and
// returns nil, or the violation to report; generic is jsonschema-go's
// message for one that check does not explain.
func (s *schema) validate(inst any) (v *violation, generic string) {
	err := s.resolved.Validate(numbersAsFloats(inst))
	if err == nil && !s.hasFormat {
		return nil, ""
	}
	vs := s.check(s.root, inst, nil)
	if len(vs) == 0 {
		if err == nil {
			return nil, ""
		}
		return nil, strings.TrimPrefix(err.Error(), "validating root: ")
	}
	return &violation{causes: vs}, ""
}

// validateArgs checks raw (a tool call's arguments; empty means {}) against
// sch and returns nil, or the [Error] of the first violation.
func validateArgs(sch *schema, raw json.RawMessage) *Error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	inst, err := decodeInstance(raw)
	if err != nil {
		e := argumentError("", string(raw), "a JSON object of arguments",
			"the arguments are not valid JSON", "Send the arguments as one JSON object, as the input schema describes.")
		return &e
	}
	if sch == nil {
		return nil
	}
	v, generic := sch.validate(inst)
	if v == nil {
		if generic == "" {
			return nil
		}
		e := argumentError("", string(raw), "arguments that match the input schema", shorten(generic, 400), "Check the arguments against the tool's input schema.")
		return &e
	}
	leaf, branch := deepest(v)
	e := describe(leaf, inst)
	if branch != "" {
		keyword, n, _ := strings.Cut(branch, "/")
		e.Message += fmt.Sprintf(" (the value matches none of the alternatives of %s; the nearest, which this names, is %s number %s from 0)", keyword, keyword, n)
	}
	return &e
}

// decodeInstance decodes a JSON value, numbers as json.Number (exact), and
// fails on trailing data.
func decodeInstance(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err == nil {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

// numbersAsFloats returns v with its json.Numbers as float64, as
// jsonschema-go types them (it takes a json.Number for a string).
func numbersAsFloats(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = numbersAsFloats(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbersAsFloats(e)
		}
		return out
	}
	return v
}

// violation is one way an instance fails a schema: a leaf (causes nil)
// says where and what; a node groups the violations of a keyword's
// subschemas (the alternatives of an anyOf or oneOf, each an alternative
// node of its own with branch set).
type violation struct {
	loc     []string // instance location
	what    string   // the violation, e.g. "got string, want integer"
	keyword string   // the schema keyword violated; "anyOf" or "oneOf" for a node of alternatives
	branch  string   // an alternative's node: "oneOf/1" say

	// leaf details, by keyword: what is expected and what to do.
	expected, suggestion string
	// argument is the name below loc the violation is about (a missing
	// required or an unknown argument), or "".
	argument string

	causes []*violation
}

// deepest returns the most specific violation: at each level the cause
// that reaches deepest into the arguments, and among those the one with
// the fewest violations, so that of the branches of an anyOf or oneOf the
// one the caller meant (that got furthest, with least wrong) is followed,
// not the first. branch is that branch, "oneOf/1" say; "" when none was
// chosen among several.
func deepest(ve *violation) (leaf *violation, branch string) {
	for len(ve.causes) > 0 {
		next := ve.causes[0]
		nd, nn := reach(next)
		for _, c := range ve.causes[1:] {
			if d, n := reach(c); d > nd || d == nd && n < nn {
				next, nd, nn = c, d, n
			}
		}
		if (ve.keyword == "anyOf" || ve.keyword == "oneOf") && len(ve.causes) > 1 {
			branch = next.branch
		}
		ve = next
	}
	return ve, branch
}

// reach returns how deep into the instance the violations under ve go, and
// how many there are.
func reach(ve *violation) (depth, n int) {
	if len(ve.causes) == 0 {
		return len(ve.loc), 1
	}
	for _, c := range ve.causes {
		d, k := reach(c)
		depth, n = max(depth, d), n+k
	}
	return depth, n
}

// describe turns one violation into an [Error]: the argument at fault (a
// JSON pointer below the arguments, e.g. "body/guests/0/name"), its value,
// what it should be and what to do.
func describe(ve *violation, inst any) Error {
	loc := slices.Clone(ve.loc)
	if ve.argument != "" {
		loc = append(loc, ve.argument)
	}
	value := at(inst, loc)
	what, expected, suggestion := ve.what, ve.expected, ve.suggestion
	switch ve.keyword {
	case "required":
		value = nil
		suggestion = fmt.Sprintf("Add %q to the arguments; see the input schema for its type.", strings.Join(loc, "/"))
		what = fmt.Sprintf("missing required argument %q", strings.Join(loc, "/"))
	case "additionalProperties":
		suggestion = fmt.Sprintf("Remove %q: the input schema does not have it (check the spelling of the argument names).", strings.Join(loc, "/"))
		what = fmt.Sprintf("unknown argument %q", strings.Join(loc, "/"))
	}
	if expected == "" {
		expected = "a value that satisfies the input schema"
		suggestion = "Correct the argument so that it satisfies the input schema, then call the tool again."
	}
	return argumentError(strings.Join(loc, "/"), quote(value), expected, what, suggestion)
}

// check returns the violations of v, at loc, against the schema s (a
// JSON Schema object, or a boolean schema). It explains what jsonschema-go
// rejects for the keywords tool schemas use: types, enum and const,
// numeric, string and array bounds, pattern, format, required and
// additional properties, and the applicators (properties,
// patternProperties, items, prefixItems, allOf, anyOf, oneOf, not,
// if/then/else).
func (s *schema) check(sv any, v any, loc []string) []*violation {
	switch x := sv.(type) {
	case bool:
		if x {
			return nil
		}
		return []*violation{{loc: loc, keyword: "false", what: "false schema", expected: "no value here"}}
	case map[string]any:
		return s.checkObject(x, v, loc)
	}
	return nil
}

func (s *schema) checkObject(sc map[string]any, v any, loc []string) []*violation {
	var out []*violation
	leaf := func(keyword, what, expected, suggestion string) {
		out = append(out, &violation{loc: loc, keyword: keyword, what: what, expected: expected, suggestion: suggestion})
	}
	if t, ok := sc["type"]; ok {
		want := typeNames(t)
		got := jsonTypeOf(v)
		if !slices.Contains(want, got) && !(got == "integer" && slices.Contains(want, "number")) {
			expected := "a value of type " + strings.Join(want, " or ")
			leaf("type", fmt.Sprintf("got %s, want %s", got, strings.Join(want, " or ")), expected, fmt.Sprintf("Send %s, not %s.", expected, got))
			return out // the rest would only repeat it
		}
	}
	if e := schemaList(sc["enum"]); e != nil && !slices.ContainsFunc(e, func(w any) bool { return equalJSON(w, v) }) {
		vals := make([]string, 0, len(e))
		for _, w := range e {
			vals = append(vals, jsonText(w))
		}
		what := "value must be one of " + strings.Join(vals, ", ")
		if len(vals) == 1 {
			what = "value must be " + vals[0]
		}
		leaf("enum", what, "one of "+strings.Join(vals, ", "), "Use one of the allowed values exactly as written.")
	}
	if c, ok := sc["const"]; ok && !equalJSON(c, v) {
		leaf("const", "value must be "+jsonText(c), "exactly "+jsonText(c), "Use the value the schema fixes.")
	}
	switch x := v.(type) {
	case json.Number:
		s.checkNumber(sc, x, leaf)
	case string:
		s.checkString(sc, x, leaf)
	case []any:
		out = append(out, s.checkArray(sc, x, loc, leaf)...)
	case map[string]any:
		out = append(out, s.checkProperties(sc, x, loc, leaf)...)
	}
	for _, sub := range schemaList(sc["allOf"]) {
		out = append(out, s.check(sub, v, loc)...)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		list := schemaList(sc[kw])
		if list == nil {
			continue
		}
		node := &violation{loc: loc, keyword: kw}
		var passed []int
		for i, sub := range list {
			if vs := s.check(sub, v, loc); len(vs) > 0 {
				node.causes = append(node.causes, &violation{loc: loc, branch: fmt.Sprintf("%s/%d", kw, i), causes: vs})
			} else {
				passed = append(passed, i)
			}
		}
		switch {
		case len(passed) == 0:
			node.what = fmt.Sprintf("'%s' failed", kw)
			out = append(out, node)
		case kw == "oneOf" && len(passed) > 1:
			leaf("oneOf", fmt.Sprintf("'oneOf' failed, subschemas %d, %d matched", passed[0], passed[1]),
				"a value that matches exactly one of the alternatives of oneOf", "Send a value that only one alternative of the input schema describes.")
		}
	}
	if not, ok := sc["not"]; ok && len(s.check(not, v, loc)) == 0 {
		leaf("not", "'not' failed", "", "")
	}
	if cond, ok := sc["if"]; ok {
		if len(s.check(cond, v, loc)) == 0 {
			if then, ok := sc["then"]; ok {
				out = append(out, s.check(then, v, loc)...)
			}
		} else if els, ok := sc["else"]; ok {
			out = append(out, s.check(els, v, loc)...)
		}
	}
	return out
}

type leafFunc func(keyword, what, expected, suggestion string)

func (s *schema) checkNumber(sc map[string]any, n json.Number, leaf leafFunc) {
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return
	}
	for _, b := range []struct {
		keyword, relation, direction string
		fails                        func(c int) bool
	}{
		{"minimum", "of at least", "larger", func(c int) bool { return c < 0 }},
		{"maximum", "of at most", "smaller", func(c int) bool { return c > 0 }},
		{"exclusiveMinimum", "greater than", "larger", func(c int) bool { return c <= 0 }},
		{"exclusiveMaximum", "less than", "smaller", func(c int) bool { return c >= 0 }},
	} {
		want, ok := ratOf(sc[b.keyword])
		if ok && b.fails(r.Cmp(want)) {
			expected, suggestion := bound(b.relation, want, b.direction)
			leaf(b.keyword, fmt.Sprintf("%s: got %s, want %s", b.keyword, n, want.FloatString(rationalDigits(want))), expected, suggestion)
		}
	}
	if m, ok := ratOf(sc["multipleOf"]); ok && m.Sign() > 0 && !new(big.Rat).Quo(r, m).IsInt() {
		ms := m.FloatString(rationalDigits(m))
		leaf("multipleOf", fmt.Sprintf("multipleOf: got %s, want %s", n, ms), "a multiple of "+ms, "Send a multiple of "+ms+".")
	}
}

func (s *schema) checkString(sc map[string]any, str string, leaf leafFunc) {
	n := utf8.RuneCountInString(str)
	if want, ok := intOf(sc["minLength"]); ok && n < want {
		leaf("minLength", fmt.Sprintf("minLength: got %d, want %d", n, want), fmt.Sprintf("a string of at least %d characters", want), "Send a longer value.")
	}
	if want, ok := intOf(sc["maxLength"]); ok && n > want {
		leaf("maxLength", fmt.Sprintf("maxLength: got %d, want %d", n, want), fmt.Sprintf("a string of at most %d characters", want), "Send a shorter value.")
	}
	if p, ok := sc["pattern"].(string); ok {
		if re := s.patterns[p]; re != nil && !re.MatchString(str) {
			leaf("pattern", fmt.Sprintf("'%s' does not match pattern '%s'", str, p), "a string that matches the pattern "+p,
				"Send a value of the form the pattern describes (see the parameter's description for an example).")
		}
	}
	if f, ok := sc["format"].(string); ok && s.formats {
		if valid := formatCheckers[f]; valid != nil {
			if err := valid(str); err != nil {
				leaf("format", fmt.Sprintf("'%s' is not valid %s: %v", str, f, err), "a value of format "+f, "Send the value in the format "+f+".")
			}
		}
	}
}

func (s *schema) checkArray(sc map[string]any, arr []any, loc []string, leaf leafFunc) []*violation {
	var out []*violation
	if want, ok := intOf(sc["minItems"]); ok && len(arr) < want {
		leaf("minItems", fmt.Sprintf("minItems: got %d, want %d", len(arr), want), fmt.Sprintf("an array of at least %d items", want), "Send more items.")
	}
	if want, ok := intOf(sc["maxItems"]); ok && len(arr) > want {
		leaf("maxItems", fmt.Sprintf("maxItems: got %d, want %d", len(arr), want), fmt.Sprintf("an array of at most %d items", want), "Send fewer items, in several calls if need be.")
	}
	if u, _ := sc["uniqueItems"].(bool); u {
	unique:
		for i := range arr {
			for j := i + 1; j < len(arr); j++ {
				if equalJSON(arr[i], arr[j]) {
					leaf("uniqueItems", fmt.Sprintf("items at %d and %d are equal", i, j), "an array of distinct items", "Remove the repeated items.")
					break unique
				}
			}
		}
	}
	prefix := schemaList(sc["prefixItems"])
	for i, item := range arr {
		var sub any
		switch {
		case i < len(prefix):
			sub = prefix[i]
		case sc["items"] != nil:
			sub = sc["items"]
		default:
			continue
		}
		out = append(out, s.check(sub, item, append(slices.Clip(loc), fmt.Sprint(i)))...)
	}
	return out
}

func (s *schema) checkProperties(sc map[string]any, obj map[string]any, loc []string, leaf leafFunc) []*violation {
	var out []*violation
	for _, name := range typeNames(sc["required"]) {
		if _, ok := obj[name]; !ok {
			out = append(out, &violation{loc: loc, keyword: "required", argument: name,
				what: fmt.Sprintf("missing property '%s'", name), expected: "a value (the argument is required)"})
		}
	}
	props, _ := sc["properties"].(map[string]any)
	patterns, _ := sc["patternProperties"].(map[string]any)
	additional, hasAdditional := sc["additionalProperties"]
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		val := obj[name]
		at := append(slices.Clip(loc), name)
		matched := false
		if sub, ok := props[name]; ok {
			matched = true
			out = append(out, s.check(sub, val, at)...)
		}
		for p, sub := range patterns {
			if re := s.patterns[p]; re != nil && re.MatchString(name) {
				matched = true
				out = append(out, s.check(sub, val, at)...)
			}
		}
		if matched || !hasAdditional {
			continue
		}
		if b, ok := additional.(bool); ok && !b {
			out = append(out, &violation{loc: loc, keyword: "additionalProperties", argument: name,
				what: fmt.Sprintf("additional properties '%s' not allowed", name), expected: "no such argument"})
			continue
		}
		out = append(out, s.check(additional, val, at)...)
	}
	return out
}

// schemaList returns a list of subschemas (or of values), or nil.
func schemaList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case []string:
		l := make([]any, len(x))
		for i, s := range x {
			l[i] = s
		}
		return l
	case []map[string]any:
		l := make([]any, len(x))
		for i, s := range x {
			l[i] = s
		}
		return l
	}
	return nil
}

// typeNames returns the strings of a type or required keyword.
func typeNames(t any) []string {
	switch x := t.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return x
	}
	return nil
}

// jsonTypeOf returns the JSON Schema type of v, "integer" for an integral
// number.
func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if r, ok := new(big.Rat).SetString(x.String()); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// ratOf returns a schema's number as a rational.
func ratOf(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case uint64:
		return new(big.Rat).SetUint64(x), true
	case json.Number:
		return new(big.Rat).SetString(x.String())
	}
	return nil, false
}

// intOf returns a schema's non-negative integer.
func intOf(v any) (int, bool) {
	r, ok := ratOf(v)
	if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() {
		return 0, false
	}
	return int(r.Num().Int64()), true
}

// equalJSON reports whether two JSON values are equal, numbers by value.
func equalJSON(a, b any) bool {
	ra, aNum := ratOf(a)
	rb, bNum := ratOf(b)
	if aNum || bNum {
		return aNum && bNum && ra.Cmp(rb) == 0
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, equalJSON)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			if yv, ok := y[k]; !ok || !equalJSON(xv, yv) {
				return false
			}
		}
		return true
	}
	return a == b
}

// jsonText returns v as JSON.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// formatCheckers are the formats asserted on input, each returning why a
// value is not of its format.
var formatCheckers = map[string]func(string) error{
	"date-time": func(s string) error {
		_, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
		return err
	},
	"date": func(s string) error {
		_, err := time.Parse(time.DateOnly, s)
		return err
	},
	"time": func(s string) error {
		_, err := time.Parse("15:04:05Z07:00", strings.ToUpper(s))
		if err != nil {
			_, err = time.Parse("15:04:05.999999999Z07:00", strings.ToUpper(s))
		}
		return err
	},
	"email": func(s string) error {
		a, err := mail.ParseAddress(s)
		if err == nil && a.Address != s {
			err = fmt.Errorf("not a bare address")
		}
		return err
	},
	"uuid": func(s string) error {
		if len(s) != 36 {
			return fmt.Errorf("want 36 characters, got %d", len(s))
		}
		for i, c := range []byte(s) {
			switch i {
			case 8, 13, 18, 23:
				if c != '-' {
					return fmt.Errorf("want a hyphen at %d", i)
				}
			default:
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
					return fmt.Errorf("%q is not a hexadecimal digit", c)
				}
			}
		}
		return nil
	},
	"ipv4": func(s string) error {
		a, err := netip.ParseAddr(s)
		if err == nil && !a.Is4() {
			err = fmt.Errorf("not an IPv4 address")
		}
		return err
	},
	"ipv6": func(s string) error {
		a, err := netip.ParseAddr(s)
		if err == nil && !a.Is6() {
			err = fmt.Errorf("not an IPv6 address")
		}
		return err
	},
	"uri": func(s string) error {
		u, err := url.Parse(s)
		if err == nil && !u.IsAbs() {
			err = fmt.Errorf("not absolute")
		}
		return err
	},
	"uri-reference": func(s string) error {
		_, err := url.Parse(s)
		return err
	},
	"regex": func(s string) error {
		_, err := regexp.Compile(s)
		return err
	},
}

// at returns the value at the JSON pointer loc within v, or nil.
func at(v any, loc []string) any {
	for _, tok := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			var i int
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// quote returns v as JSON, shortened to [maxValue] bytes; "" for nil.
func quote(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return shorten(string(b), maxValue)
}

// bound returns what a numeric bound expects and the suggestion.
func bound(relation string, want *big.Rat, direction string) (expected, suggestion string) {
	return "a number " + relation + " " + want.FloatString(rationalDigits(want)), "Send a " + direction + " number."
}

// rationalDigits is the number of decimals that shows r exactly, up to 6.
func rationalDigits(r *big.Rat) int {
	for prec := 0; prec < 6; prec++ {
		if f, _ := new(big.Rat).SetString(r.FloatString(prec)); f != nil && f.Cmp(r) == 0 {
			return prec
		}
	}
	return 6
}
