package rawjson

import (
	"bytes"
	"errors"
	"slices"
)

// ErrInvalid is returned for input that is not one JSON value.
var ErrInvalid = errors.New("not valid JSON")

// Canonical appends the canonical form of the JSON value data to dst: no
// white space, object members sorted by key (bytewise, on the decoded key)
// with a repeated key keeping its last value, numbers as written, strings
// decoded and written again by [Escape]. Two values that encoding/json
// decodes to the same Go value have the same canonical form, except that
// bytes which are not valid UTF-8 are kept (as \udc80 to \udcff) instead of
// becoming U+FFFD, so strings that differ only there stay different. It is
// ctxfit's one canonical JSON, the same on every Go release.
func Canonical(dst, data []byte) ([]byte, error) {
	start, end, ok := Root(data)
	if !ok {
		return dst, ErrInvalid
	}
	return canonical(dst, data[start:end]), nil
}

// canonical writes the valid value v.
func canonical(dst, v []byte) []byte {
	switch KindOf(v[0]) {
	case String:
		return canonicalString(dst, v)
	case Array:
		dst = append(dst, '[')
		it, _ := Open(v, 0)
		for n := 0; ; n++ {
			item, ok := it.Next()
			if !ok {
				break
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = canonical(dst, v[item.Start:item.End])
		}
		return append(dst, ']')
	case Object:
		type member struct {
			key []byte // decoded
			val []byte
		}
		var ms []member
		it, _ := Open(v, 0)
		for item, ok := it.Next(); ok; item, ok = it.Next() {
			ms = append(ms, member{Unescape(v[item.Start+1 : item.KeyEnd-1]), v[item.Value:item.End]})
		}
		// Stable: among equal keys the last one read is last, and wins.
		slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
		dst = append(dst, '{')
		n := 0
		for i, m := range ms {
			if i+1 < len(ms) && bytes.Equal(m.key, ms[i+1].key) {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, '"')
			dst, _ = Escape(dst, m.key)
			dst = append(dst, '"', ':')
			dst = canonical(dst, m.val)
		}
		return append(dst, '}')
	}
	return append(dst, v...) // numbers and literals as written
}

func canonicalString(dst, v []byte) []byte {
	dst = append(dst, '"')
	dst, _ = Escape(dst, Unescape(v[1:len(v)-1]))
	return append(dst, '"')
}
