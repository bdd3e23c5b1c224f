package summary

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sentinel errors. Test with [errors.Is].
var (
	// ErrInvalidJSON: the input is not exactly one valid JSON value.
	ErrInvalidJSON = errors.New("summary: invalid JSON; pass exactly one JSON value, as encoding/json writes it")
	// ErrInvalidPath: a projection path is empty or has an empty segment
	// ("a..b", ".a", "a."). The error is a [*PathError].
	ErrInvalidPath = errors.New("summary: invalid projection path")
	// ErrUnknownPath: a projection path names no field of the input. The
	// error is an [*UnknownPathError] that lists the paths and the fields
	// that exist.
	ErrUnknownPath = errors.New("summary: unknown projection path")
	// ErrNotObject: the operation needs a JSON object (automatic selection,
	// drill-down) and got another value.
	ErrNotObject = errors.New("summary: not a JSON object")
	// ErrUnknownField: a drill-down fields parameter names a section the
	// object lacks, or is empty. The error is an [*UnknownFieldError].
	ErrUnknownField = errors.New("summary: unknown drill-down field")
	// ErrTooLarge: even the summary is over the budget's hard cap, for
	// example because the identity fields alone are that large. The error
	// is a [*TooLargeError].
	ErrTooLarge = errors.New("summary: summary over the hard cap")
	// ErrInvalidFormat: a [Format] breaks a validation rule or its template
	// does not parse. The error is a [*FormatError].
	ErrInvalidFormat = errors.New("summary: invalid output format")
	// ErrNoFormat: a [Formatter] has no format for the operation; the output
	// falls back to the JSON.
	ErrNoFormat = errors.New("summary: no output format for the operation")
	// ErrFormatFailed: a format's template or a transform failed; the output
	// falls back to the JSON.
	ErrFormatFailed = errors.New("summary: output format failed")
	// ErrFormatTimeout: a format ran past its time limit; the output falls
	// back to the JSON.
	ErrFormatTimeout = errors.New("summary: output format timed out")
	// ErrInvalidOptions: an [Options] or [TopN] field is out of range.
	ErrInvalidOptions = errors.New("summary: invalid options")
)

// PathError reports a malformed projection path. It wraps [ErrInvalidPath].
type PathError struct {
	Path   string // the path as given
	Reason string // what is wrong with it
}

// Error names the path and says how to write it.
func (e *PathError) Error() string {
	return fmt.Sprintf("summary: projection path %q %s; write paths as dot-separated field names such as \"price.basePrice\" or \"rooms.id\"", e.Path, e.Reason)
}

// Unwrap returns [ErrInvalidPath].
func (e *PathError) Unwrap() error { return ErrInvalidPath }

// UnknownPathError reports projection paths that name nothing in the input.
// It wraps [ErrUnknownPath].
type UnknownPathError struct {
	Paths     []string // the paths that matched nothing, in the order given
	Available []string // the top-level fields of the input, in input order
}

// Error lists the unknown paths and the fields to choose from: at most ten
// paths, each cut to 64 bytes, and a hundred fields, with the number of the
// others.
func (e *UnknownPathError) Error() string {
	return fmt.Sprintf("summary: projection path %s names no field of the input; the top-level fields are: %s; fix or remove the path",
		quoteList(e.Paths), availableList(e.Available))
}

// Unwrap returns [ErrUnknownPath].
func (e *UnknownPathError) Unwrap() error { return ErrUnknownPath }

// UnknownFieldError reports a drill-down fields parameter that names
// sections the object lacks, or names none. It wraps [ErrUnknownField].
type UnknownFieldError struct {
	Fields []string // the unknown names, in the order given; empty when the parameter is empty
	Valid  []string // the object's sections, in input order
}

// Error lists the unknown names and the valid ones: at most ten names,
// each cut to 64 bytes, and a hundred valid ones, with the number of the
// others.
func (e *UnknownFieldError) Error() string {
	if len(e.Fields) == 0 {
		return fmt.Sprintf("summary: the fields parameter is empty; send fields=all for the whole object, or a comma-separated list of: %s",
			availableList(e.Valid))
	}
	return fmt.Sprintf("summary: fields %s not found; send fields=all for the whole object, or a comma-separated list of: %s",
		quoteList(e.Fields), availableList(e.Valid))
}

// Unwrap returns [ErrUnknownField].
func (e *UnknownFieldError) Unwrap() error { return ErrUnknownField }

// TooLargeError reports a summary that is over the hard cap. It wraps
// [ErrTooLarge].
type TooLargeError struct {
	Tokens  int // exact token count of the smallest summary
	HardCap int // the budget's hard cap
}

// Error gives the numbers and the way out.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("summary: the smallest summary takes %d tokens, more than the hard cap of %d; project fewer fields or chunk the response",
		e.Tokens, e.HardCap)
}

// Unwrap returns [ErrTooLarge].
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// FormatError reports an invalid [Format]. It wraps [ErrInvalidFormat].
type FormatError struct {
	ID     string // the format's ID as given
	Reason string // the rule broken
}

// Error names the format and the rule.
func (e *FormatError) Error() string {
	return fmt.Sprintf("summary: output format %q: %s", e.ID, e.Reason)
}

// Unwrap returns [ErrInvalidFormat].
func (e *FormatError) Unwrap() error { return ErrInvalidFormat }

// Bounds of the lists error messages give, so that a message stays short
// whatever the size of the input or of the request: the error values keep
// the whole lists.
const (
	maxQuoted    = 10  // names a request asked for
	maxQuotedLen = 64  // bytes of each of them
	maxAvailable = 100 // names the input has
)

// quoteList quotes the first maxQuoted names of s, each cut to maxQuotedLen
// bytes, and says how many more there are.
func quoteList(s []string) string {
	q := make([]string, 0, min(len(s), maxQuoted)+1)
	for _, v := range s[:min(len(s), maxQuoted)] {
		if len(v) > maxQuotedLen {
			cut := maxQuotedLen
			for cut > 0 && !utf8.RuneStart(v[cut]) {
				cut--
			}
			v = v[:cut] + "…"
		}
		q = append(q, fmt.Sprintf("%q", v))
	}
	if len(s) > maxQuoted {
		q = append(q, fmt.Sprintf("and %d more", len(s)-maxQuoted))
	}
	return strings.Join(q, ", ")
}

// availableList lists the first maxAvailable names of s and says how many
// more there are.
func availableList(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	if len(s) > maxAvailable {
		return strings.Join(s[:maxAvailable], ", ") + fmt.Sprintf(", and %d more", len(s)-maxAvailable)
	}
	return strings.Join(s, ", ")
}
