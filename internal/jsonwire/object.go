package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Object is a JSON object read member by member: its members keep their
// order and their bytes, so that changing one member leaves the others as
// they were written.
//
// The zero Object is an empty object. An Object is not safe for
// concurrent use.
type Object struct {
	keys []string
	vals []json.RawMessage
}

// ParseObject reads b, which must be one JSON object.
func ParseObject(b []byte) (*Object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("jsonwire: not a JSON object")
	}
	o := &Object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.keys, o.vals = append(o.keys, key), append(o.vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("jsonwire: more than one JSON value")
	}
	return o, nil
}

// Get returns the value of the member key, nil when there is none.
func (o *Object) Get(key string) json.RawMessage {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i]
		}
	}
	return nil
}

// Set sets the member key to v, in its place, or last when it is new.
func (o *Object) Set(key string, v json.RawMessage) {
	for i, k := range o.keys {
		if k == key {
			o.vals[i] = v
			return
		}
	}
	o.keys, o.vals = append(o.keys, key), append(o.vals, v)
}

// Marshal returns the object's JSON: its members in order, compact
// between them, each value as it was read or set.
func (o *Object) Marshal() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}
