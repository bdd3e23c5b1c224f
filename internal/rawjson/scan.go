// Package rawjson reads JSON without decoding it: it validates values, finds
// their spans, walks the elements of arrays and the members of objects from
// any position, and maps JSON string bodies to the text they denote and back.
// ctxfit's engine shapes responses with it so that what it sends holds the
// original bytes, never a re-encoding of them.
//
// It accepts exactly what encoding/json accepts (invalid UTF-8 inside
// strings and lone surrogate escapes included), nests at most 10,000
// containers deep as encoding/json does, and never recurses: every function
// is linear in the bytes it reads.
package rawjson

// MaxDepth is the deepest nesting of arrays and objects accepted, as in
// encoding/json.
const MaxDepth = 10000

// Kind is the kind of a JSON value, told by its first byte.
type Kind byte

// Kinds of values.
const (
	Invalid Kind = iota
	Object
	Array
	String
	Number
	Bool
	Null
)

var kindNames = [...]string{"invalid", "object", "array", "string", "number", "boolean", "null"}

// String returns the kind's name: "object", "array", "string", "number",
// "boolean", "null" or "invalid".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// KindOf returns the kind of the value whose first byte is c.
func KindOf(c byte) Kind {
	switch {
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == '"':
		return String
	case c == '-' || c >= '0' && c <= '9':
		return Number
	case c == 't' || c == 'f':
		return Bool
	case c == 'n':
		return Null
	}
	return Invalid
}

// Valid reports whether data is one JSON value, with optional white space
// around it.
func Valid(data []byte) bool {
	_, _, ok := Root(data)
	return ok
}

// Root returns the span data[start:end] of the one JSON value data holds,
// without the white space around it, and whether data is valid JSON.
func Root(data []byte) (start, end int, ok bool) {
	start = Space(data, 0)
	end, ok = End(data, start)
	if !ok || Space(data, end) != len(data) {
		return 0, 0, false
	}
	return start, end, true
}

// Bounds is Root for data already known to be valid (Valid or Root said
// so): the span of its one value, found from its two ends without scanning
// what lies between. On data that is not valid JSON its result means
// nothing.
func Bounds(valid []byte) (start, end int) {
	start, end = Space(valid, 0), len(valid)
	for end > start && Space(valid[end-1:end], 0) == 1 {
		end--
	}
	return start, end
}

// End returns the index just past the JSON value that starts at data[i] (no
// white space before it), and whether that value is valid.
func End(data []byte, i int) (int, bool) {
	var buf [32]byte
	s := scanner{data: data, stack: buf[:0]}
	return s.value(i, 0)
}

// Space returns the index of the first byte at or after i that is not JSON
// white space (space, tab, line feed, carriage return).
func Space(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanner validates JSON values without recursion.
type scanner struct {
	data  []byte
	stack []byte // open containers: '[' or '{'
}

// value returns the index just past the JSON value that starts at i, which
// is nested in depth containers, and whether the value is valid.
func (s *scanner) value(i, depth int) (int, bool) {
	data := s.data
	s.stack = s.stack[:0]
	for {
		if i >= len(data) {
			return i, false
		}
		switch c := data[i]; {
		case c == '[' || c == '{':
			if depth+len(s.stack) >= MaxDepth {
				return i, false
			}
			s.stack = append(s.stack, c)
			i = Space(data, i+1)
			if i < len(data) && data[i] == c+2 { // ']' or '}'
				s.stack = s.stack[:len(s.stack)-1]
				i++
				break
			}
			if c == '{' {
				var ok bool
				if i, ok = key(data, i); !ok {
					return i, false
				}
			}
			continue
		case c == '"':
			var ok bool
			if i, ok = stringEnd(data, i); !ok {
				return i, false
			}
		case c == '-' || c >= '0' && c <= '9':
			var ok bool
			if i, ok = numberEnd(data, i); !ok {
				return i, false
			}
		case c == 't':
			if !literal(data, i, "true") {
				return i, false
			}
			i += len("true")
		case c == 'f':
			if !literal(data, i, "false") {
				return i, false
			}
			i += len("false")
		case c == 'n':
			if !literal(data, i, "null") {
				return i, false
			}
			i += len("null")
		default:
			return i, false
		}
		// A value ended at i: close containers until one continues.
		for {
			if len(s.stack) == 0 {
				return i, true
			}
			i = Space(data, i)
			if i == len(data) {
				return i, false
			}
			top := s.stack[len(s.stack)-1]
			if data[i] == top+2 {
				s.stack = s.stack[:len(s.stack)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return i, false
			}
			i = Space(data, i+1)
			if top == '{' {
				var ok bool
				if i, ok = key(data, i); !ok {
					return i, false
				}
			}
			break
		}
	}
}

// key reads an object key and its colon at i, and returns the index of the
// value that follows.
func key(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := stringEnd(data, i)
	if !ok {
		return i, false
	}
	i = Space(data, i)
	if i == len(data) || data[i] != ':' {
		return i, false
	}
	return Space(data, i+1), true
}

// stringEnd returns the index just past the JSON string that starts at i.
func stringEnd(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i == len(data) {
				return i, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return i, false
				}
				for _, h := range data[i+1 : i+5] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

// numberEnd returns the index just past the JSON number that starts at i.
func numberEnd(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i == len(data):
		return i, false
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = digits(data, i)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		if i++; i == len(data) || !isDigit(data[i]) {
			return i, false
		}
		i = digits(data, i)
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i == len(data) || !isDigit(data[i]) {
			return i, false
		}
		i = digits(data, i)
	}
	return i, true
}

func digits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}

func literal(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
