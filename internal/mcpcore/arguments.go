package mcpcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// argument is one argument of one of ctxfit's own tools, as its errors
// describe it.
type argument struct {
	name string
	// expected says what the argument holds ("should be ...").
	expected string
	// suggestion says what to pass.
	suggestion string
}

// ownArguments are the arguments of one of ctxfit's own tools.
type ownArguments struct {
	tool  string
	usage string // the arguments as JSON with placeholders
	args  []argument
}

// arg returns the argument called name (a bare one when the tool has none
// of that name).
func (o ownArguments) arg(name string) argument {
	for _, a := range o.args {
		if a.name == name {
			return a
		}
	}
	return argument{name: name}
}

// missing returns the error of the argument name, absent or empty.
func (o ownArguments) missing(name string) *Error {
	a := o.arg(name)
	e := ArgumentError(name, fmt.Sprintf("%s needs the argument %q: %s", o.tool, name, o.usage), a.expected, a.suggestion)
	return &e
}

// invalid returns the error of the argument name, present but wrong.
func (o ownArguments) invalid(name, message string) *Error {
	a := o.arg(name)
	e := ArgumentError(name, o.tool+": "+message, a.expected, a.suggestion)
	return &e
}

// decode decodes args into v as [DecodeArguments] does and returns the
// error that names the argument at fault: an unknown one, one of the
// wrong JSON type, or "arguments" when they are not a JSON object.
func (o ownArguments) decode(args json.RawMessage, v any) *Error {
	err := DecodeArguments(args, v)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return o.invalid(typeErr.Field, fmt.Sprintf("the argument %q is a JSON %s, not %s", typeErr.Field, typeErr.Value, jsonType(typeErr.Type)))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		known := make([]string, len(o.args))
		for i, a := range o.args {
			known[i] = strconv.Quote(a.name)
		}
		e := ArgumentError(name, fmt.Sprintf("%s takes no argument %q; it takes %s", o.tool, name, o.usage),
			"left out: the tool's arguments are "+strings.Join(known, ", "), fmt.Sprintf("Leave %q out.", name))
		return &e
	}
	what := "are not a JSON object"
	if t := bytes.TrimSpace(args); len(t) > 0 && t[0] == '{' {
		what = "are not valid JSON"
	}
	e := ArgumentError("arguments", fmt.Sprintf("%s: the arguments %s; it needs %s", o.tool, what, o.usage),
		"a JSON object of the tool's arguments", "Pass the arguments as one JSON object, as the tool's inputSchema describes them.")
	return &e
}

// jsonType names the JSON type a Go type decodes from.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "the JSON its inputSchema describes"
}

func (n Names) nextArguments() ownArguments {
	return ownArguments{tool: n.next(), usage: `{"cursor": "<nextCursor>"} (and "part" to open a held-back value)`, args: []argument{
		{"cursor", "the nextCursor string of a shaped result", "Pass the nextCursor of the previous result, unchanged."},
		{"part", `the "ctxfit:part" number of a placeholder, an integer of 1 or more`, "Copy the number from the placeholder, or leave part out to continue."},
	}}
}

func (n Names) detailsArguments() ownArguments {
	return ownArguments{tool: n.details(), usage: `{"cursor": "<the summary's details cursor>", "fields": "..."}`, args: []argument{
		{"cursor", "the details cursor of a summarized result", "Copy the call from the summary's guidance line."},
		{"fields", `"all" or a comma-separated list of fields`, `Pass "all", or the fields you want such as "id,name".`},
	}}
}

func (n Names) searchArguments() ownArguments {
	return ownArguments{tool: n.search(), usage: `{"cursor": "<any cursor of the result>", "pattern": "<RE2 or literal>"}; optional "literal", "ignoreCase", "path", "context"`, args: []argument{
		{"cursor", "a cursor of a shaped result (nextCursor, partCursor or a details cursor)", "Pass a cursor of the result you want to search, unchanged."},
		{"pattern", "what to find: an RE2 regular expression, or a literal string with literal set", "Pass what to find in the result."},
		{"literal", "true or false", "Pass true to match the pattern as it is, or leave literal out."},
		{"ignoreCase", "true or false", "Pass true to match without regard to case, or leave ignoreCase out."},
		{"path", "a dotted path such as guest.name", "Pass the field to match in each item, or leave path out."},
		{"context", "an integer from 0 to 5", "Pass how many lines to show around a match, or leave context out."},
	}}
}

func (n Names) queryArguments() ownArguments {
	return ownArguments{tool: n.query(), usage: `{"cursor": "<any cursor of the result>", "expression": "<jq>"}`, args: []argument{
		{"cursor", "a cursor of a shaped JSON result", "Pass a cursor of the result you want to query, unchanged."},
		{"expression", "a jq expression", "Pass a jq expression such as .items | length."},
	}}
}
