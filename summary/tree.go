package summary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is a decoded JSON value that remembers the order of object keys and
// the literal text of numbers.
//
// Scalars keep their text in lit: the number literal exactly as written, the
// decoded string, or "true"/"false". Objects hold keys and vals in input
// order; arrays hold vals.
type node struct {
	kind kind
	lit  string
	keys []string
	vals []*node
}

// get returns the value of key in the object n, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// isScalar reports whether n is neither an array nor an object.
func (n *node) isScalar() bool { return n.kind < kindArray }

// parse decodes exactly one JSON value from data. Numbers are kept as
// written (json.Decoder.UseNumber); of duplicate object keys the last value
// wins, at the position of the first, as with encoding/json.
func parse(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the first value", ErrInvalidJSON)
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("unexpected end of input")
		}
		return nil, err
	}
	return parseToken(dec, tok)
}

func parseToken(dec *json.Decoder, tok json.Token) (*node, error) {
	switch t := tok.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case bool:
		return &node{kind: kindBool, lit: strconv.FormatBool(t)}, nil
	case json.Number:
		return &node{kind: kindNumber, lit: string(t)}, nil
	case string:
		return &node{kind: kindString, lit: t}, nil
	case json.Delim:
		switch t {
		case '[':
			n := &node{kind: kindArray}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return n, nil
		case '{':
			n := &node{kind: kindObject}
			var index map[string]int // built once the object is large
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				if index == nil && len(n.keys) >= 16 {
					index = make(map[string]int, 2*len(n.keys))
					for i, k := range n.keys {
						index[k] = i
					}
				}
				at := -1
				if index != nil {
					if i, ok := index[key]; ok {
						at = i
					}
				} else {
					for i, k := range n.keys {
						if k == key {
							at = i
							break
						}
					}
				}
				if at >= 0 {
					n.vals[at] = v
					continue
				}
				if index != nil {
					index[key] = len(n.keys)
				}
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return n, nil
		}
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// appendJSON appends the compact JSON of n to dst. Numbers are written as
// they were read; strings as encoding/json writes them.
func appendJSON(dst []byte, n *node) []byte {
	switch n.kind {
	case kindNull:
		return append(dst, "null"...)
	case kindBool, kindNumber:
		return append(dst, n.lit...)
	case kindString:
		return appendString(dst, n.lit)
	case kindArray:
		dst = append(dst, '[')
		for i, v := range n.vals {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, v)
		}
		return append(dst, ']')
	default:
		dst = append(dst, '{')
		for i, k := range n.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendJSON(dst, n.vals[i])
		}
		return append(dst, '}')
	}
}

// appendString appends s as a JSON string, byte for byte as json.Marshal
// writes it.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// topKeys returns the top-level field names of n: the keys of an object, or
// the union of the keys of the objects in an array, in order of first
// appearance.
func topKeys(n *node) []string {
	switch n.kind {
	case kindObject:
		return append([]string(nil), n.keys...)
	case kindArray:
		seen := map[string]bool{}
		var keys []string
		for _, v := range n.vals {
			if v.kind != kindObject {
				continue
			}
			for _, k := range v.keys {
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
		return keys
	}
	return nil
}
