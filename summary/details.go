package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// ServeDetails serves a drill-down request: given the full object (the
// bytes the endpoint would return without summarization) and the request's
// fields parameter, it returns
//
//   - for "all": full itself, the same slice, unchanged;
//   - for a comma-separated list of top-level fields such as
//     "priceBreakdown,policies": an object holding exactly those fields,
//     whole, in the order of full, each value byte for byte as in full
//     (white space inside a value included), and nothing else.
//
// Spaces around names are ignored and repeated names count once. The
// caller must not summarize the result again: the client asked for it
// explicitly.
//
// Errors: [ErrInvalidJSON]; [ErrNotObject] when full is not an object (for
// "all" full is returned without being parsed); [*UnknownFieldError]
// (wrapping [ErrUnknownField]) when fields is empty or names a field that
// full lacks, listing the valid names.
func ServeDetails(full []byte, fields string) ([]byte, error) {
	names := parseFields(fields)
	for _, n := range names {
		if n == FieldsAll {
			return full, nil
		}
	}
	keys, vals, err := splitObject(full)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var unknown []string
	found := map[string]bool{}
	for _, k := range keys {
		found[k] = true
	}
	for _, n := range names {
		if !found[n] {
			unknown = append(unknown, n)
		}
	}
	if len(names) == 0 || len(unknown) > 0 {
		return nil, &UnknownFieldError{Fields: unknown, Valid: uniqueKeys(keys)}
	}
	// Of duplicate keys the last wins, as with encoding/json.
	last := map[string]int{}
	for i, k := range keys {
		last[k] = i
	}
	out := []byte{'{'}
	for i, k := range keys {
		if !want[k] || last[k] != i {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendString(out, k)
		out = append(out, ':')
		out = append(out, vals[i]...)
	}
	return append(out, '}'), nil
}

// parseFields splits a fields parameter into names, without blanks or
// repeats.
func parseFields(fields string) []string {
	var names []string
	seen := map[string]bool{}
	for _, f := range strings.Split(fields, ",") {
		f = strings.TrimSpace(f)
		if f != "" && !seen[f] {
			seen[f] = true
			names = append(names, f)
		}
	}
	return names
}

func uniqueKeys(keys []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// splitObject returns the keys of the JSON object data and the raw bytes of
// their values, in input order.
func splitObject(data []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		if !json.Valid(data) {
			return nil, nil, ErrInvalidJSON
		}
		return nil, nil, fmt.Errorf("%w: drill-down needs the full object, got another JSON value", ErrNotObject)
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
		}
		keys = append(keys, kt.(string))
		vals = append(vals, raw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("%w: data after the object", ErrInvalidJSON)
	}
	return keys, vals, nil
}
