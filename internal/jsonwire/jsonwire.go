// Package jsonwire encodes JSON that ctxfit sends so that its bytes do not
// depend on which encoding/json the toolchain ships.
//
// encoding/json of Go 1.26 writes a string's invalid UTF-8 as the escape
// \ufffd; Go 1.27's, built on encoding/json/v2, writes the replacement
// character U+FFFD itself. Both mean the same string, but the bytes (and so
// the token counts, the snapshots' content keys and golden files) differ.
// [Marshal] writes the escape on every toolchain: it is json.Marshal
// followed by [Normalize].
package jsonwire

import (
	"bytes"
	"encoding/json"
)

// replacement is U+FFFD in UTF-8.
var replacement = []byte("\uFFFD")

// escape is what Go 1.26's encoding/json writes for invalid UTF-8.
var escape = []byte(`\ufffd`)

// Marshal returns json.Marshal(v) with every U+FFFD written as \ufffd.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Normalize(b), nil
}

// MarshalUnescaped is [Marshal] without encoding/json's HTML escaping: '<',
// '>' and '&' are written as they are, for JSON that people read or that
// must reach another program as it was written.
func MarshalUnescaped(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return Normalize(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// Normalize rewrites the character U+FFFD in b, which must be valid JSON
// (outside strings U+FFFD cannot occur), as the escape \ufffd. It returns b
// itself when there is none, and a new slice otherwise.
func Normalize(b []byte) []byte {
	if !bytes.Contains(b, replacement) {
		return b
	}
	return bytes.ReplaceAll(b, replacement, escape)
}
