package pagination

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxfit/ctxfit/cursor"
)

// PaginateJSON returns the page that req asks for of the JSON array data,
// bound to q, without decoding the elements into Go values.
//
// Each item of the page is a [json.RawMessage] holding the bytes of one
// element of data exactly as they appear there (white space inside the
// element included; a copy, so data may be reused once PaginateJSON
// returns). Marshalling the page compacts them as encoding/json compacts
// every RawMessage, and that compact form is what the budget counts.
// Leading and trailing white space around data is allowed.
//
// data is validated and split in one pass, accepting exactly what
// json.Valid accepts, so the cost is linear in its length; only the elements of the requested page are copied,
// marshalled and counted. Errors are those of [Paginate], plus
// [ErrNotArray] when data is not valid JSON or not an array (JSON null
// included).
func (p *Pager) PaginateJSON(data []byte, req Request, q cursor.Binding) (Page[json.RawMessage], error) {
	limit, pos, err := p.start(req, &q)
	if err != nil {
		return Page[json.RawMessage]{}, err
	}
	window, total, err := splitArray(data, pos.offset, limit)
	if err != nil {
		return Page[json.RawMessage]{}, err
	}
	resp, err := page(context.Background(), p, window, total, pos, &q)
	if err != nil {
		return Page[json.RawMessage]{}, err
	}
	// The window aliases data: copy the page's items into one block.
	n := 0
	for _, it := range resp.Items {
		n += len(it)
	}
	block := make([]byte, 0, n)
	for i, it := range resp.Items {
		start := len(block)
		block = append(block, it...)
		resp.Items[i] = block[start:len(block):len(block)]
	}
	return resp, nil
}

// splitArray returns at most limit elements of the JSON array data, starting
// at element from, as subslices of data, and the number of elements in the
// array. It validates data in the same pass, accepting exactly what
// json.Valid accepts.
func splitArray(data []byte, from, limit int) ([]json.RawMessage, int, error) {
	s := scanner{data: data}
	i := s.space(0)
	if i == len(data) {
		return nil, 0, errNotJSON
	}
	if data[i] != '[' {
		end, ok := s.value(i, 0)
		if !ok || s.space(end) != len(data) {
			return nil, 0, errNotJSON
		}
		return nil, 0, fmt.Errorf("%w: the input is a JSON %s", ErrNotArray, kindOf(data[i]))
	}
	var window []json.RawMessage
	total := 0
	i = s.space(i + 1)
	if i < len(data) && data[i] == ']' {
		i++
	} else {
		for {
			start := i
			end, ok := s.value(i, 1)
			if !ok {
				return nil, 0, errNotJSON
			}
			if total >= from && len(window) < limit {
				window = append(window, data[start:end:end])
			}
			total++
			i = s.space(end)
			if i == len(data) {
				return nil, 0, errNotJSON
			}
			if data[i] == ']' {
				i++
				break
			}
			if data[i] != ',' {
				return nil, 0, errNotJSON
			}
			i = s.space(i + 1)
		}
	}
	if s.space(i) != len(data) {
		return nil, 0, errNotJSON
	}
	return window, total, nil
}

var errNotJSON = fmt.Errorf("%w: the input is not valid JSON", ErrNotArray)

// maxDepth is the deepest nesting of arrays and objects that encoding/json
// accepts.
const maxDepth = 10000

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
		// A value starts at i.
		if i >= len(data) {
			return i, false
		}
		switch c := data[i]; {
		case c == '[' || c == '{':
			if depth+len(s.stack) >= maxDepth {
				return i, false
			}
			s.stack = append(s.stack, c)
			i = s.space(i + 1)
			if i < len(data) && data[i] == c+2 { // ']' or '}'
				s.stack = s.stack[:len(s.stack)-1]
				i++
				break
			}
			if c == '{' {
				var ok bool
				if i, ok = s.key(i); !ok {
					return i, false
				}
			}
			continue
		case c == '"':
			var ok bool
			if i, ok = s.string(i); !ok {
				return i, false
			}
		case c == '-' || c >= '0' && c <= '9':
			var ok bool
			if i, ok = s.number(i); !ok {
				return i, false
			}
		case c == 't':
			if !s.literal(i, "true") {
				return i, false
			}
			i += len("true")
		case c == 'f':
			if !s.literal(i, "false") {
				return i, false
			}
			i += len("false")
		case c == 'n':
			if !s.literal(i, "null") {
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
			i = s.space(i)
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
			i = s.space(i + 1)
			if top == '{' {
				var ok bool
				if i, ok = s.key(i); !ok {
					return i, false
				}
			}
			break
		}
	}
}

// key reads an object key and its colon at i, and returns the index of the
// value that follows.
func (s *scanner) key(i int) (int, bool) {
	if i >= len(s.data) || s.data[i] != '"' {
		return i, false
	}
	i, ok := s.string(i)
	if !ok {
		return i, false
	}
	i = s.space(i)
	if i == len(s.data) || s.data[i] != ':' {
		return i, false
	}
	return s.space(i + 1), true
}

// string returns the index just past the JSON string that starts at i.
func (s *scanner) string(i int) (int, bool) {
	data := s.data
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

// number returns the index just past the JSON number that starts at i.
func (s *scanner) number(i int) (int, bool) {
	data := s.data
	if data[i] == '-' {
		i++
	}
	switch {
	case i == len(data):
		return i, false
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = s.digits(i)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		if i++; i == len(data) || !isDigit(data[i]) {
			return i, false
		}
		i = s.digits(i)
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i == len(data) || !isDigit(data[i]) {
			return i, false
		}
		i = s.digits(i)
	}
	return i, true
}

func (s *scanner) digits(i int) int {
	for i < len(s.data) && isDigit(s.data[i]) {
		i++
	}
	return i
}

func (s *scanner) literal(i int, lit string) bool {
	return len(s.data)-i >= len(lit) && string(s.data[i:i+len(lit)]) == lit
}

// space returns the index of the first byte at or after i that is not JSON
// white space.
func (s *scanner) space(i int) int {
	for i < len(s.data) {
		switch s.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func kindOf(c byte) string {
	switch c {
	case '{':
		return "object, not an array"
	case '"':
		return "string, not an array"
	case 'n':
		return "null, not an array"
	case 't', 'f':
		return "boolean, not an array"
	default:
		return "number, not an array"
	}
}
