package shapes

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Values generates JSON values for the tests of compact encodings (TOON):
// uniform arrays of objects, the tables such encodings exist for, and
// trees that mix every form of array and object. Unlike the [Shapes], all
// of it is what such an encoding can carry losslessly: strings and keys
// are Unicode text (no invalid UTF-8, no lone surrogates), no object
// repeats a key, numbers are within float64's range. Within that, strings
// hold what a delimited row must quote (the three delimiters, colons,
// quotes, brackets, leading hyphens, white space at either end, control
// characters, look-alikes of numbers and literals) and are escaped in
// several ways; keys include ones that must be quoted.
//
// The same R state gives the same bytes. A Values is used by one goroutine.
type Values struct {
	R *rand.Rand

	// Float64Exact limits numbers to those that a float64 reader, such as
	// JavaScript's JSON.parse, reads and writes back as the same value
	// (the shortest decimal of a float64, in any JSON spelling). Without
	// it numbers also have more digits than a float64 holds, or are below
	// float64's smallest (1e-400).
	Float64Exact bool
}

// Table returns a JSON array of rows objects (at least one) that all have
// the same keys in the same order and only primitive values.
func (v Values) Table(rows int) []byte {
	var b strings.Builder
	v.table(&b, max(rows, 1))
	return []byte(b.String())
}

// Tree returns a JSON value of about n bytes: objects, arrays of
// primitives, tables, lists of objects with different keys, arrays of
// arrays, mixed arrays, empty containers and primitives, nested.
func (v Values) Tree(n int) []byte {
	var b strings.Builder
	v.tree(&b, n, 0)
	return []byte(b.String())
}

func (v Values) table(b *strings.Builder, rows int) {
	keys := v.keys(1 + v.R.IntN(7))
	kinds := make([]int, len(keys)) // each column leans to one kind of value
	for i := range kinds {
		kinds[i] = v.R.IntN(4)
	}
	b.WriteByte('[')
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, k := range keys {
			if j > 0 {
				b.WriteByte(',')
			}
			v.str(b, k)
			b.WriteByte(':')
			v.primitive(b, kinds[j])
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
}

func (v Values) tree(b *strings.Builder, n, depth int) {
	if n < 16 || depth > 6 {
		v.primitive(b, v.R.IntN(4))
		return
	}
	switch v.R.IntN(9) {
	case 0, 1, 2: // an object
		keys := v.keys(1 + v.R.IntN(6))
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			v.str(b, k)
			b.WriteByte(':')
			v.tree(b, n/len(keys), depth+1)
		}
		b.WriteByte('}')
	case 3: // a table
		v.table(b, 1+v.R.IntN(5))
	case 4: // an array of primitives
		b.WriteByte('[')
		for i := range 1 + v.R.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
			}
			v.primitive(b, v.R.IntN(4))
		}
		b.WriteByte(']')
	case 5: // objects with different numbers of keys: a list, never a table
		b.WriteByte('[')
		for i := range 2 + v.R.IntN(3) {
			if i > 0 {
				b.WriteByte(',')
			}
			keys := v.keys(i + 1)
			b.WriteByte('{')
			for j, k := range keys {
				if j > 0 {
					b.WriteByte(',')
				}
				v.str(b, k)
				b.WriteByte(':')
				v.tree(b, n/8, depth+1)
			}
			b.WriteByte('}')
		}
		b.WriteByte(']')
	case 6: // empty containers
		b.WriteString([]string{"[]", "{}", "[[]]", "[{}]", "[{},{}]", `{"":{}}`, "[[],[1]]"}[v.R.IntN(7)])
	default: // a mixed array: anything, arrays of arrays included
		k := 1 + v.R.IntN(5)
		b.WriteByte('[')
		for i := range k {
			if i > 0 {
				b.WriteByte(',')
			}
			v.tree(b, n/k, depth+1)
		}
		b.WriteByte(']')
	}
}

// unquotedKeys may be written bare; quotedKeys must be quoted.
var (
	unquotedKeys = []string{"id", "name", "status", "guestName", "total_price", "_private", "user.name", "a.b.c", "x1", "Nights"}
	quotedKeys   = []string{"full name", "a,b", "a|b", "tab\tkey", "", "123", "-lead", "#tag", "k:v", "[i]", "{k}",
		"café", `say "hi"`, `back\slash`, "line\nbreak", " pad ", "true", "東京"}
)

// keys returns n different keys, mostly ones that may be bare.
func (v Values) keys(n int) []string {
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var k string
		switch r := v.R.IntN(10); {
		case r < 6:
			k = unquotedKeys[v.R.IntN(len(unquotedKeys))]
		case r < 9:
			k = quotedKeys[v.R.IntN(len(quotedKeys))]
		default:
			k = fmt.Sprintf("field_%d", v.R.IntN(1000))
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// primitive writes a primitive, of the kind given most of the time:
// 0 strings, 1 numbers, 2 booleans and null, 3 anything.
func (v Values) primitive(b *strings.Builder, kind int) {
	if kind == 3 || v.R.IntN(8) == 0 {
		kind = v.R.IntN(3)
	}
	switch kind {
	case 0:
		v.str(b, v.text())
	case 1:
		b.WriteString(v.number())
	default:
		b.WriteString([]string{"true", "false", "null"}[v.R.IntN(3)])
	}
}

// pieces are what texts are made of: words, and everything a TOON row
// must quote or a decoder could misread.
var pieces = []string{
	"Ada", "Lovelace", "booking", "confirmed", "room 12", "naïve", "東京", "😀", "é", "a/b",
	",", "|", "\t", ":", `"`, `\`, "[", "]", "{", "}", " ", "-", "#", "+", ".", "e",
	"true", "false", "null", "42", "05", "-3.14", "1e-6", "+1", "- item", "a: b", "x[2]: y", "[]",
	"\n", "\r\n", "\x00", "\x1f", "\x7f", "\u00a0", "\u2028", "\ufeff", "\u3000",
}

// whole are texts that must be quoted as a whole, or only just not.
var whole = []string{"", "-", "#", "true", "false", "null", "42", "-0", "0", "1.5", "05", "+1", "1e5", "1E+5",
	" x", "x ", "\u00a0x", "x\u2028", "[]", "{}", "[3]: a,b", "- x", "#x", "x#", "x-y", "1-2", "Infinity", "NaN", ".5", "5."}

func (v Values) text() string {
	if v.R.IntN(4) == 0 {
		return whole[v.R.IntN(len(whole))]
	}
	var s strings.Builder
	for range 1 + v.R.IntN(4) {
		s.WriteString(pieces[v.R.IntN(len(pieces))])
	}
	return s.String()
}

// str writes s as a JSON string, escaped in one of three ways: only what
// JSON requires, every non-ASCII character as \u escapes (surrogate pairs
// beyond the BMP), or with gratuitous escapes (\/ and \u00XX of ASCII).
func (v Values) str(b *strings.Builder, s string) {
	style := v.R.IntN(3)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t' && style != 0:
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case r >= utf8.RuneSelf && style == 1:
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				fmt.Fprintf(b, `\u%04x\u%04X`, r1, r2)
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		case r == '/' && style == 2:
			b.WriteString(`\/`)
		case style == 2 && r < utf8.RuneSelf && v.R.IntN(6) == 0:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// exactNumbers are shortest decimals of float64 values, in several JSON
// spellings; longNumbers are not.
var (
	exactNumbers = []string{"0", "-0", "-0.0", "0.0", "1", "-7", "42", "1.0", "2.50", "-3.14", "0.1", "1e6", "1E+6",
		"1e-6", "0.000001", "1E-7", "-1.5e-7", "1e21", "1.5e+21", "123456789012345", "100000000000000000000",
		"1e300", "-2.5e-300", "9007199254740991", "0.30000000000000004"}
	longNumbers = []string{"12345678901234567890123", "9007199254740993", "0.1234567890123456789", "1e-400",
		"-4.9406564584124654e-324", "1.7976931348623157e308", "3.141592653589793238462643383279"}
)

func (v Values) number() string {
	switch r := v.R.IntN(10); {
	case r < 5:
		return fmt.Sprint(v.R.IntN(200000) - 1000)
	case r < 7:
		return fmt.Sprintf("%d.%02d", v.R.IntN(10000), v.R.IntN(100))
	case r < 9 || v.Float64Exact:
		return exactNumbers[v.R.IntN(len(exactNumbers))]
	}
	return longNumbers[v.R.IntN(len(longNumbers))]
}
