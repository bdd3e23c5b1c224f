package toon

import (
	"errors"
	"fmt"
)

// Delimiter separates the values of inline arrays and the cells of tabular
// rows. Its value is the byte written; the zero Delimiter means Comma in
// [Options].
type Delimiter byte

// Delimiters TOON allows.
const (
	Comma Delimiter = ','  // the default; headers do not name it: items[2]{id,name}:
	Tab   Delimiter = '\t' // headers name it inside the brackets: items[2\t]{id\tname}:
	Pipe  Delimiter = '|'  // headers name it inside the brackets: items[2|]{id|name}:
)

// DefaultIndent is the number of spaces per level of nesting when
// [Options.Indent] is zero; DefaultMaxDepth is the deepest nesting [Encode]
// accepts when [Options.MaxDepth] is zero.
const (
	DefaultIndent   = 2
	DefaultMaxDepth = 64
)

// Options configure [Encode] and [Decode]. A nil *Options means the zero
// value, and the zero value means the spec's defaults. Options are read
// once per call and never kept.
type Options struct {
	// Delimiter separates inline array values and tabular cells, and is the
	// document delimiter that decides which object field values are quoted
	// (spec §11.1). Encode only: Decode reads the delimiter each header
	// declares. The zero value means Comma; Tab and Pipe are the others.
	Delimiter Delimiter

	// Indent is the number of spaces per level of nesting, for Encode and
	// Decode alike. Zero means DefaultIndent (2). Negative is an error.
	Indent int

	// MaxDepth is the deepest nesting of arrays and objects Encode accepts
	// (the root container is depth 1): each level costs Indent spaces on
	// every line below it, so deep nesting is cheaper as JSON. Deeper input
	// is refused with ErrUnsupported. Zero means DefaultMaxDepth (64);
	// negative is an error. Decode accepts what rawjson accepts, 10,000.
	MaxDepth int
}

// resolved returns the options with defaults applied, or an error for
// values out of range.
func (o *Options) resolved() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	switch r.Delimiter {
	case 0:
		r.Delimiter = Comma
	case Comma, Tab, Pipe:
	default:
		return r, fmt.Errorf("toon: delimiter %q is not one of ',' '\\t' '|'", rune(r.Delimiter))
	}
	switch {
	case r.Indent == 0:
		r.Indent = DefaultIndent
	case r.Indent < 0:
		return r, fmt.Errorf("toon: indent %d is negative; use 0 for the default of %d", r.Indent, DefaultIndent)
	}
	switch {
	case r.MaxDepth == 0:
		r.MaxDepth = DefaultMaxDepth
	case r.MaxDepth < 0:
		return r, fmt.Errorf("toon: max depth %d is negative; use 0 for the default of %d", r.MaxDepth, DefaultMaxDepth)
	}
	return r, nil
}

// ErrInvalidJSON is returned by [Encode] for input that is not one JSON
// value, as encoding/json accepts it.
var ErrInvalidJSON = errors.New("toon: the input is not valid JSON")

// ErrUnsupported is wrapped by the errors of [Encode] for valid JSON that
// TOON cannot carry losslessly (see the package documentation for the
// list). The message says what and at which byte offset of the input.
// Callers send the JSON as it is instead.
var ErrUnsupported = errors.New("toon: cannot encode losslessly")

// unsupported returns the error for the value at byte off of the input.
func unsupported(off int, format string, args ...any) error {
	return fmt.Errorf("%w: %s (at byte %d of the input); send it as JSON", ErrUnsupported, fmt.Sprintf(format, args...), off)
}

// SyntaxError is the error of [Decode] for text that is not TOON as spec v3
// strict mode defines it. It is a plain value.
type SyntaxError struct {
	Line int    // the 1-based line number where the error was found
	Msg  string // what is wrong, without the line number
}

// Error returns "toon: line N: " and the message.
func (e *SyntaxError) Error() string { return fmt.Sprintf("toon: line %d: %s", e.Line, e.Msg) }
