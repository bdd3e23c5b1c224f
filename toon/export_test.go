package toon

import "github.com/ctxfit/ctxfit/internal/rawjson"

// CanonicalNumber is appendNumber for the external tests.
func CanonicalNumber(num string) (string, bool) {
	b, ok := appendNumber(nil, []byte(num))
	return string(b), ok
}

// Overflows is overflows for the external tests.
func Overflows(canonical string) bool { return overflows([]byte(canonical)) }

// Normal returns the valid JSON value data in the form Decode writes: no
// white space, keys in their order, strings escaped by rawjson.Escape,
// numbers in canonical form. Two JSON values are the same value, key order
// included, exactly when their Normal forms are equal. It panics on
// invalid JSON.
func Normal(data []byte) string {
	start, end, ok := rawjson.Root(data)
	if !ok {
		panic("Normal: invalid JSON: " + string(data))
	}
	return string(normal(nil, data[start:end]))
}

func normal(dst, v []byte) []byte {
	switch v[0] {
	case '"':
		text, _ := rawjson.Decode(v[1 : len(v)-1])
		dst = append(dst, '"')
		dst, _ = rawjson.Escape(dst, text)
		return append(dst, '"')
	case '[', '{':
		dst = append(dst, v[0])
		it, _ := rawjson.Open(v, 0)
		for n := 0; ; n++ {
			item, ok := it.Next()
			if !ok {
				break
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			if v[0] == '{' {
				dst = normal(dst, v[item.Start:item.KeyEnd])
				dst = append(dst, ':')
			}
			dst = normal(dst, v[item.Value:item.End])
		}
		return append(dst, v[0]+2)
	case 't', 'f', 'n':
		return append(dst, v...)
	}
	out, ok := appendNumber(dst, v)
	if !ok {
		return append(dst, v...)
	}
	return out
}
