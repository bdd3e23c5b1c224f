package rawjson

import (
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// Map relates offsets in a text to offsets in its JSON-escaped form (the
// body of a JSON string, without quotes): the text decoded from a string
// body by [Decode], or the body written for a text by [Escape]. Offsets
// map exactly at the boundaries of escape sequences and of the runes they
// stand for, which are the only places a string body can be cut.
//
// The zero Map is the identity (no escapes). A Map is immutable once built
// and safe for concurrent use.
type Map struct {
	anchors []anchor // after each escape: the offsets in both forms, in order
}

type anchor struct{ text, enc int }

// Encoded returns the offset in the escaped form of the text offset p.
func (m Map) Encoded(p int) int {
	a := m.anchors
	i := sort.Search(len(a), func(i int) bool { return a[i].text > p })
	if i == 0 {
		return p
	}
	return a[i-1].enc + (p - a[i-1].text)
}

// Text returns the text offset of the offset q of the escaped form.
func (m Map) Text(q int) int {
	a := m.anchors
	i := sort.Search(len(a), func(i int) bool { return a[i].enc > q })
	if i == 0 {
		return q
	}
	return a[i-1].text + (q - a[i-1].enc)
}

// Decode returns the text the body of a JSON string denotes (body without
// its quotes, as valid JSON has it), and the Map between the two. Raw bytes
// are copied as they are, invalid UTF-8 included; a lone surrogate escape
// denotes U+FFFD, as encoding/json decodes it. Decode does not validate:
// pass a body of a valid JSON string.
func Decode(body []byte) ([]byte, Map) {
	text := make([]byte, 0, len(body))
	var m Map
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			text = append(text, c)
			i++
			continue
		}
		switch body[i+1] {
		case 'u':
			r, n := unicodeEscape(body[i:])
			text = utf8.AppendRune(text, r)
			i += n
		default:
			text = append(text, unescapeByte(body[i+1]))
			i += 2
		}
		m.anchors = append(m.anchors, anchor{len(text), i})
	}
	return text, m
}

// unicodeEscape reads the \uXXXX escape (and the low surrogate of a pair)
// at the start of b, returning the rune it stands for and its length.
func unicodeEscape(b []byte) (rune, int) {
	r, ok := hex4(b)
	if !ok {
		return utf8.RuneError, min(len(b), 2)
	}
	if utf16.IsSurrogate(r) {
		if r < 0xDC00 && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if r2, ok := hex4(b[6:]); ok {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return dec, 12
				}
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func unescapeByte(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\', '/'
}

// Escape appends text to dst as the body of a JSON string (without
// quotes) and returns it with the Map between text and the appended body
// (offsets in the Map are relative to the start of the appended body).
//
// The escaping is ctxfit's own and the same on every Go release: '"' and
// '\' are escaped, control characters as \b \f \n \r \t or \u00XX, and
// every other valid UTF-8 sequence is kept as it is (including '<', '>',
// '&', U+2028 and U+2029, which encoding/json escapes). Bytes that are not
// valid UTF-8 are written as the lone surrogate escapes \udc80 to \udcff,
// one per byte (the "surrogateescape" convention): the result is valid
// JSON, and [Unescape] gives back the original bytes exactly.
func Escape(dst, text []byte) ([]byte, Map) {
	base := len(dst)
	var m Map
	for i := 0; i < len(text); {
		c := text[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, w := utf8.DecodeRune(text[i:])
			if r != utf8.RuneError || w != 1 {
				dst = append(dst, text[i:i+w]...)
				i += w
				continue
			}
			dst = append(dst, '\\', 'u', 'd', 'c', hexDigits[c>>4], hexDigits[c&0xF])
		} else {
			dst = appendControl(dst, c)
		}
		i++
		m.anchors = append(m.anchors, anchor{i, len(dst) - base})
	}
	return dst, m
}

// AppendQuoted appends s to dst as a JSON string with quotes, escaped as
// [Escape] does.
func AppendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst, _ = Escape(dst, []byte(s))
	return append(dst, '"')
}

// EscapedLen returns the length of text as [Escape] writes it, without
// writing it.
func EscapedLen(text []byte) int {
	n := 0
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf:
			n++
			i++
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRune(text[i:])
			if r == utf8.RuneError && w == 1 {
				n += 6
			} else {
				n += w
			}
			i += w
		default:
			n += len(appendControl(nil, c))
			i++
		}
	}
	return n
}

const hexDigits = "0123456789abcdef"

func appendControl(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// Unescape returns the bytes a JSON string body written by [Escape]
// stands for: escapes are decoded, and each lone surrogate escape \udc80 to
// \udcff gives back the byte 0x80 to 0xff it stands for. Other lone
// surrogates give U+FFFD, as in encoding/json. It is the inverse of Escape:
// Unescape(Escape(nil, b)) equals b for every b.
func Unescape(body []byte) []byte {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			out = append(out, c)
			i++
			continue
		}
		if body[i+1] != 'u' {
			out = append(out, unescapeByte(body[i+1]))
			i += 2
			continue
		}
		if r, ok := hex4(body[i:]); ok && 0xDC80 <= r && r <= 0xDCFF {
			out = append(out, byte(r-0xDC00))
			i += 6
			continue
		}
		r, n := unicodeEscape(body[i:])
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// EscapeLatin1 appends text to dst as the body of a JSON string in which
// every byte stands for itself as a character, as ISO 8859-1 reads it:
// bytes 0x80 to 0xff are written as U+0080 to U+00FF, and ASCII as
// [Escape] writes it. It suits text that is not UTF-8 at all (Latin-1,
// Windows-1252): each byte costs a character, where Escape spends an
// escape on each. [UnescapeLatin1] gives the bytes back.
func EscapeLatin1(dst, text []byte) []byte {
	for _, c := range text {
		switch {
		case c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf:
			dst = append(dst, c)
		case c >= utf8.RuneSelf:
			dst = utf8.AppendRune(dst, rune(c))
		default:
			dst = appendControl(dst, c)
		}
	}
	return dst
}

// UnescapeLatin1 returns the bytes a JSON string body written by
// [EscapeLatin1] stands for: each character is one byte.
func UnescapeLatin1(body []byte) []byte {
	text := []rune(string(Unescape(body)))
	out := make([]byte, len(text))
	for i, r := range text {
		out[i] = byte(r)
	}
	return out
}

// MultiByte reports whether text holds a valid UTF-8 sequence of more
// than one byte.
func MultiByte(text []byte) bool {
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, w := utf8.DecodeRune(text[i:])
		if r != utf8.RuneError || w > 1 {
			return true
		}
		i += w
	}
	return false
}
