package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxValue bounds the value an error quotes, in bytes.
const maxValue = 80

var printer = message.NewPrinter(language.English)

// schemas are a tool's compiled schemas; nil: not checked.
type schemas struct {
	input, output *jsonschema.Schema
}

// compile compiles op's input schema (with formats asserted: a date-time,
// a uuid or an email the API would refuse is the model's to correct) and
// its output schema, logging the one that does not compile (it is then
// not checked).
func compile(op *Operation, logger *slog.Logger) schemas {
	var s schemas
	var err error
	if s.input, err = compileSchema(op.Tool.Name, op.input, true); err != nil {
		logger.Warn("gateway: the input schema does not compile; the tool's arguments are not validated",
			"tool", op.Tool.Name, "err", err)
	}
	if op.outputs != nil {
		if s.output, err = compileSchema(op.Tool.Name+":output", op.outputs, false); err != nil {
			logger.Warn("gateway: the output schema does not compile; the answers are not checked against it",
				"tool", op.Tool.Name, "err", err)
		}
	}
	return s
}

// compileSchema compiles a schema for validation.
func compileSchema(name string, schema map[string]any, formats bool) (*jsonschema.Schema, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if formats {
		c.AssertFormat()
	}
	url := "urn:ctxfit:gateway:" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// validateArgs checks raw (a tool call's arguments; empty means {}) against
// sch and returns nil, or the [Error] of the first violation.
func validateArgs(sch *jsonschema.Schema, raw json.RawMessage) *Error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		e := argumentError("", string(raw), "a JSON object of arguments",
			"the arguments are not valid JSON", "Send the arguments as one JSON object, as the input schema describes.")
		return &e
	}
	if sch == nil {
		return nil
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		e := argumentError("", string(raw), "arguments that match the input schema", err.Error(), "Check the arguments against the tool's input schema.")
		return &e
	}
	leaf, branch := deepest(ve)
	e := describe(leaf, inst)
	if branch != "" {
		keyword, n, _ := strings.Cut(branch, "/")
		e.Message += fmt.Sprintf(" (the value matches none of the alternatives of %s; the nearest, which this names, is %s number %s from 0)", keyword, keyword, n)
	}
	return &e
}

// deepest returns the most specific violation: at each level the cause
// that reaches deepest into the arguments, and among those the one with
// the fewest violations, so that of the branches of an anyOf or oneOf the
// one the caller meant (that got furthest, with least wrong) is followed,
// not the first. branch is that branch, "oneOf/1" say; "" when none was
// chosen among several.
func deepest(ve *jsonschema.ValidationError) (leaf *jsonschema.ValidationError, branch string) {
	for len(ve.Causes) > 0 {
		next := ve.Causes[0]
		nd, nn := reach(next)
		for _, c := range ve.Causes[1:] {
			if d, n := reach(c); d > nd || d == nd && n < nn {
				next, nd, nn = c, d, n
			}
		}
		switch ve.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			if len(ve.Causes) > 1 {
				branch = branchOf(next.SchemaURL)
			}
		}
		ve = next
	}
	return ve, branch
}

// reach returns how deep into the instance the violations under ve go, and
// how many there are.
func reach(ve *jsonschema.ValidationError) (depth, n int) {
	if len(ve.Causes) == 0 {
		return len(ve.InstanceLocation), 1
	}
	for _, c := range ve.Causes {
		d, k := reach(c)
		depth, n = max(depth, d), n+k
	}
	return depth, n
}

// branchOf returns the last "anyOf/N" or "oneOf/N" of a schema location.
func branchOf(schemaURL string) string {
	for _, kw := range []string{"/oneOf/", "/anyOf/"} {
		if i := strings.LastIndex(schemaURL, kw); i >= 0 {
			rest := schemaURL[i+len(kw):]
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				rest = rest[:j]
			}
			return kw[1:] + rest
		}
	}
	return ""
}

// describe turns one violation into an [Error]: the argument at fault (a
// JSON pointer below the arguments, e.g. "body/guests/0/name"), its value,
// what it should be and what to do.
func describe(ve *jsonschema.ValidationError, inst any) Error {
	loc := slices.Clone(ve.InstanceLocation)
	value := at(inst, loc)
	what := ve.ErrorKind.LocalizedString(printer)
	var expected, suggestion string
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		loc = append(loc, k.Missing[0])
		value = nil
		expected = "a value (the argument is required)"
		suggestion = fmt.Sprintf("Add %q to the arguments; see the input schema for its type.", strings.Join(loc, "/"))
		what = fmt.Sprintf("missing required argument %q", strings.Join(loc, "/"))
	case *kind.AdditionalProperties:
		loc = append(loc, k.Properties[0])
		value = at(inst, loc)
		expected = "no such argument"
		suggestion = fmt.Sprintf("Remove %q: the input schema does not have it (check the spelling of the argument names).", strings.Join(loc, "/"))
		what = fmt.Sprintf("unknown argument %q", strings.Join(loc, "/"))
	case *kind.Type:
		expected = "a value of type " + strings.Join(k.Want, " or ")
		suggestion = fmt.Sprintf("Send %s, not %s.", expected, k.Got)
	case *kind.Enum:
		vals := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			b, _ := json.Marshal(w)
			vals = append(vals, string(b))
		}
		expected = "one of " + strings.Join(vals, ", ")
		suggestion = "Use one of the allowed values exactly as written."
	case *kind.Const:
		b, _ := json.Marshal(k.Want)
		expected = "exactly " + string(b)
		suggestion = "Use the value the schema fixes."
	case *kind.Pattern:
		expected = "a string that matches the pattern " + k.Want
		suggestion = "Send a value of the form the pattern describes (see the parameter's description for an example)."
	case *kind.MinLength:
		expected = fmt.Sprintf("a string of at least %d characters", k.Want)
		suggestion = "Send a longer value."
	case *kind.MaxLength:
		expected = fmt.Sprintf("a string of at most %d characters", k.Want)
		suggestion = "Send a shorter value."
	case *kind.Minimum:
		expected, suggestion = bound("of at least", k.Want, "larger")
	case *kind.Maximum:
		expected, suggestion = bound("of at most", k.Want, "smaller")
	case *kind.ExclusiveMinimum:
		expected, suggestion = bound("greater than", k.Want, "larger")
	case *kind.ExclusiveMaximum:
		expected, suggestion = bound("less than", k.Want, "smaller")
	case *kind.MinItems:
		expected = fmt.Sprintf("an array of at least %d items", k.Want)
		suggestion = "Send more items."
	case *kind.MaxItems:
		expected = fmt.Sprintf("an array of at most %d items", k.Want)
		suggestion = "Send fewer items, in several calls if need be."
	case *kind.Format:
		expected = "a value of format " + k.Want
		suggestion = "Send the value in the format " + k.Want + "."
	default:
		expected = "a value that satisfies the input schema"
		suggestion = "Correct the argument so that it satisfies the input schema, then call the tool again."
	}
	return argumentError(strings.Join(loc, "/"), quote(value), expected, what, suggestion)
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
