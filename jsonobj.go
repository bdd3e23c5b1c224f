package ctxfit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// member is one key and raw value of a JSON object, as in the input.
type member struct {
	key string
	val json.RawMessage
}

var errNotObject = errors.New("ctxfit: not a JSON object")

// members returns the members of a JSON object in input order; values keep
// their bytes.
func members(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errNotObject
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errNotObject
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		ms = append(ms, member{key, val})
	}
	return ms, nil
}

// lookup returns the raw value at a dotted path of nested objects.
func lookup(data []byte, path []string) ([]byte, error) {
	for _, k := range path {
		ms, err := members(data)
		if err != nil {
			return nil, err
		}
		found := false
		for _, m := range ms {
			if m.key == k {
				data, found = m.val, true
			}
		}
		if !found {
			return nil, fmt.Errorf("ctxfit: no field %q", k)
		}
	}
	return data, nil
}

// splice rebuilds data with the value at path replaced by val, and extra
// members (already encoded, "" for none) added right after it in the same
// object. Other members keep their values byte for byte.
func splice(data []byte, path []string, val []byte, extra string) ([]byte, error) {
	ms, err := members(data)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	found := false
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.key)
		b.Write(key)
		b.WriteByte(':')
		if m.key != path[0] || found {
			b.Write(m.val)
			continue
		}
		found = true
		if len(path) == 1 {
			b.Write(val)
			if extra != "" {
				b.WriteByte(',')
				b.WriteString(extra)
			}
			continue
		}
		inner, err := splice(m.val, path[1:], val, extra)
		if err != nil {
			return nil, err
		}
		b.Write(inner)
	}
	if !found {
		return nil, fmt.Errorf("ctxfit: no field %q", path[0])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// arrayPath returns the path of the array to page in an object: the
// configured one when it names an array, else the array that holds at least
// half of the object's bytes, at the top level or one level down. Nil means
// none.
func arrayPath(data []byte, configured string) []string {
	if configured != "" {
		path := strings.Split(configured, ".")
		if v, err := lookup(data, path); err == nil && firstByte(v) == '[' {
			return path
		}
		return nil
	}
	ms, err := members(data)
	if err != nil {
		return nil
	}
	half := len(data) / 2
	for _, m := range ms {
		if len(m.val) < half {
			continue
		}
		switch firstByte(m.val) {
		case '[':
			return []string{m.key}
		case '{':
			inner, err := members(m.val)
			if err != nil {
				return nil
			}
			for _, im := range inner {
				if len(im.val) >= half && firstByte(im.val) == '[' {
					return []string{m.key, im.key}
				}
			}
		}
	}
	return nil
}

// dominantString returns the top-level string field that holds at least
// half of the object's bytes, and its value.
func dominantString(data []byte) (string, string, bool) {
	ms, err := members(data)
	if err != nil {
		return "", "", false
	}
	for _, m := range ms {
		if len(m.val) >= len(data)/2 && firstByte(m.val) == '"' {
			var s string
			if json.Unmarshal(m.val, &s) == nil {
				return m.key, s, true
			}
		}
	}
	return "", "", false
}
