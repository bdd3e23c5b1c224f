package toon

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonText returns the text the body of a valid JSON string denotes, and
// false when that text is not a sequence of Unicode scalar values: bytes
// that are not UTF-8, or a \u escape of a surrogate that is not half of a
// pair. TOON is UTF-8 text and its decoders reject surrogate escapes, so
// such strings have no TOON form. Without escapes the body itself is
// returned; otherwise the text is appended to buf, which is returned too.
func jsonText(buf, body []byte) (text, newBuf []byte, ok bool) {
	if bytes.IndexByte(body, '\\') < 0 {
		return body, buf, utf8.Valid(body)
	}
	start := len(buf)
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			buf = append(buf, c)
			i++
			continue
		}
		switch e := body[i+1]; e {
		case 'u':
			r := hex4(body[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
					return nil, buf, false
				}
				r2 := hex4(body[i+2 : i+6])
				if r2 < 0xDC00 || r2 > 0xDFFF {
					return nil, buf, false
				}
				r = utf16.DecodeRune(r, r2)
				i += 6
			}
			buf = utf8.AppendRune(buf, r)
		default:
			buf = append(buf, unescapeByte(e))
			i += 2
		}
	}
	// Escapes append whole UTF-8 sequences, so the text is valid exactly
	// when the raw bytes between them are.
	return buf[start:], buf, utf8.Valid(buf[start:])
}

// hex4 reads four hex digits that rawjson has validated, or that the
// caller checked with isHex.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
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

// isUnquotedKey reports whether a key may be written without quotes (spec
// §7.3): ^[A-Za-z_][A-Za-z0-9_.]*$.
func isUnquotedKey(k []byte) bool {
	if len(k) == 0 || !(isAlpha(k[0]) || k[0] == '_') {
		return false
	}
	for _, c := range k[1:] {
		if !(isAlpha(c) || isDigit(c) || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// needsQuotes reports whether the string value s must be quoted where
// delim is the relevant delimiter: the rules of spec v3 §7.2, the two that
// v4 added (a leading '#', and a numeric-like string after a '+'), so that
// v3 and v4 decoders read the output alike, and leading or trailing white
// space in the widest sense any decoder trims (JavaScript's String.trim).
func needsQuotes(s []byte, delim byte) bool {
	if len(s) == 0 {
		return true
	}
	switch s[0] {
	case '-', '#':
		return true
	}
	if isTrimmed(s) || numericLike(s) {
		return true
	}
	switch string(s) {
	case "true", "false", "null":
		return true
	}
	for _, c := range s {
		switch {
		case c < 0x20, c == delim:
			return true
		}
		switch c {
		case ':', '"', '\\', '[', ']', '{', '}':
			return true
		}
	}
	return false
}

// isTrimmed reports whether s starts or ends with a character that
// JavaScript's String.prototype.trim removes (white space and line
// terminators, U+FEFF included).
func isTrimmed(s []byte) bool {
	r, _ := utf8.DecodeRune(s)
	if jsSpace(r) {
		return true
	}
	r, _ = utf8.DecodeLastRune(s)
	return jsSpace(r)
}

func jsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// numericLike reports whether s matches
// /^[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i, the spec v4 pattern (v3's
// without the '+').
func numericLike(s []byte) bool {
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return i > j
	}
	if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s, valid UTF-8, as a quoted TOON string (spec
// §7.1): backslash, quote, LF, CR and tab as \\ \" \n \r \t, the other
// control characters as \u00xx, everything else as it is.
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '\\' || c == '"':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// quotedEnd returns the index just past the quoted TOON string that starts
// at s[0] ('"'), and its text appended to buf. It fails (end < 0) on an
// escape other than \\ \" \n \r \t \uXXXX, on a \u escape of a surrogate,
// on a control character other than tab, and on a missing closing quote;
// msg says which.
func quotedEnd(buf, s []byte) (end int, text, newBuf []byte, msg string) {
	start := len(buf)
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return i + 1, buf[start:], buf, ""
		case c == '\\':
			if i+1 == len(s) {
				return -1, nil, buf, "unterminated string"
			}
			i++
			switch s[i] {
			case '\\', '"':
				buf = append(buf, s[i])
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				if i+4 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) || !isHex(s[i+3]) || !isHex(s[i+4]) {
					return -1, nil, buf, `\u must be followed by four hex digits`
				}
				r := hex4(s[i+1 : i+5])
				if utf16.IsSurrogate(r) {
					return -1, nil, buf, `\u escapes of surrogates are not allowed; write the character itself`
				}
				buf = utf8.AppendRune(buf, r)
				i += 4
			default:
				return -1, nil, buf, `invalid escape \` + string(rune(s[i])) + ` (only \\ \" \n \r \t \uXXXX)`
			}
		case c < 0x20 && c != '\t':
			return -1, nil, buf, "a control character in a quoted string must be escaped"
		default:
			buf = append(buf, c)
		}
	}
	return -1, nil, buf, "unterminated string"
}
