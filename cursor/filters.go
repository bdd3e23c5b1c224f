package cursor

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/ctxfit/ctxfit/internal/jsonwire"
)

// canonicalFilters returns the canonical form of the JSON value raw: what
// encoding/json's Marshal writes for it, that is compact, with object keys
// sorted (a repeated key keeps its last value) and numbers kept as written.
// Empty input and JSON null both mean "no filters" and give nil.
func canonicalFilters(raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, errors.New("not valid JSON")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber() // keep numbers exactly as written: no float64 rounding
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	return jsonwire.Marshal(v) // the same bytes on every toolchain
}

// sameFilters reports whether the filters a caller expects equal the
// canonical filters stored in a cursor.
func sameFilters(want, stored []byte) bool {
	if bytes.Equal(want, stored) {
		return true // the common case: the caller passes canonical JSON
	}
	w, err := canonicalFilters(want)
	return err == nil && bytes.Equal(w, stored)
}

// isCanonicalFilters reports whether stored filters are in the form Encode
// writes: nil, or canonical JSON other than null.
func isCanonicalFilters(f []byte) bool {
	if f == nil {
		return true
	}
	c, err := canonicalFilters(f)
	return err == nil && bytes.Equal(c, f)
}
