package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file finds boundaries. Every finder answers "the first boundary of
// its level after position s", the end of the text when there is none.
// Boundaries are decided by the bytes around them (a line start looks back
// one line at most), so the answer does not depend on where splitting
// started: splitting from a cursor's offset gives the chunks a full split
// gives from there.

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isHeading reports whether line (or the text from a line start) begins with
// a Markdown ATX heading: up to three spaces, one to six '#', then a space,
// a tab or the end of the line.
func isHeading(line string) bool {
	i := 0
	for i < 3 && i < len(line) && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] == '#' {
		j++
	}
	if j == i || j-i > 6 {
		return false
	}
	return j == len(line) || line[j] == ' ' || line[j] == '\t' || line[j] == '\n' || line[j] == '\r'
}

// isBlankLine reports whether the line that starts at the beginning of s
// holds only spaces, tabs and '\r' before its '\n' (or the end).
func isBlankLine(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r':
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

// prevLineBlank reports whether the line that ends with the '\n' at
// text[p-1] is blank.
func prevLineBlank(text string, p int) bool {
	for i := p - 2; i >= 0; i-- {
		switch text[i] {
		case ' ', '\t', '\r':
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

var logLevels = []string{"TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL", "PANIC", "SEVERE"}

// isLevelWord reports whether s starts with a log level in capitals followed
// by a non-letter or the end.
func isLevelWord(s string) bool {
	for _, l := range logLevels {
		if strings.HasPrefix(s, l) {
			rest := s[len(l):]
			return rest == "" || !('A' <= rest[0] && rest[0] <= 'Z' || 'a' <= rest[0] && rest[0] <= 'z')
		}
	}
	return false
}

// digits reports whether s has n digits at i.
func digits(s string, i, n int) bool {
	if i+n > len(s) {
		return false
	}
	for k := i; k < i+n; k++ {
		if !isDigit(s[k]) {
			return false
		}
	}
	return true
}

var months = []string{"Jan ", "Feb ", "Mar ", "Apr ", "May ", "Jun ", "Jul ", "Aug ", "Sep ", "Oct ", "Nov ", "Dec "}

// isTimestamp reports whether s starts with "2006-01-02T15:04", "2006-01-02
// 15:04", "2006/01/02 15:04", "Jan  2 15:04:05" or "15:04:05".
func isTimestamp(s string) bool {
	if digits(s, 0, 4) && len(s) >= 16 && (s[4] == '-' || s[4] == '/') && digits(s, 5, 2) && s[7] == s[4] && digits(s, 8, 2) &&
		(s[10] == 'T' || s[10] == ' ') && digits(s, 11, 2) && s[13] == ':' && digits(s, 14, 2) {
		return true
	}
	if digits(s, 0, 2) && len(s) >= 8 && s[2] == ':' && digits(s, 3, 2) && s[5] == ':' && digits(s, 6, 2) {
		return true
	}
	for _, m := range months {
		if strings.HasPrefix(s, m) {
			r := strings.TrimLeft(s[4:], " ")
			return len(r) >= 3 && isDigit(r[0]) && (r[1] == ' ' || isDigit(r[1]) && r[2] == ' ')
		}
	}
	return false
}

// isEntryStart reports whether the line at the start of s begins a log
// entry: a timestamp or a level, optionally after '['.
func isEntryStart(s string) bool {
	if s != "" && s[0] == '[' {
		s = s[1:]
	}
	return s != "" && (isTimestamp(s) || isLevelWord(s))
}

// isSentenceEnd reports whether a sentence ends just before p: text[:p]
// ends with an ideographic terminator, or text[p] is white space and
// text[:p] ends with a terminator and up to three closing marks.
func isSentenceEnd(text string, p int) bool {
	if p <= 0 || p > len(text) {
		return false
	}
	if p >= 3 {
		switch text[p-3 : p] {
		case "。", "！", "？":
			return true
		}
	}
	if p == len(text) || !isSpace(text[p]) {
		return false
	}
	end := text[:p]
	for k := 0; k < 3; k++ {
		trimmed := strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(end, `)"']`), "”"), "’")
		if trimmed == end {
			break
		}
		end = trimmed
	}
	if strings.HasSuffix(end, "…") {
		return true
	}
	if len(end) < 2 || isSpace(end[len(end)-2]) {
		return false
	}
	switch end[len(end)-1] {
	case '.', '!', '?':
		return true
	}
	return false
}

// isExtender reports whether r joins the grapheme cluster before it.
func isExtender(r rune) bool {
	if r < 0x300 {
		return false
	}
	switch {
	case r == 0x200D, 0xFE00 <= r && r <= 0xFE0F, 0x1F3FB <= r && r <= 0x1F3FF, 0xE0020 <= r && r <= 0xE007F:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

// isAt reports whether p (0 < p < len(text)) is a boundary of level l,
// for the levels that can be checked locally (not grapheme and rune).
func isAt(text string, l Level, p int) bool {
	lineStart := text[p-1] == '\n'
	switch l {
	case LevelSection:
		return lineStart && isHeading(text[p:])
	case LevelParagraph:
		return lineStart && prevLineBlank(text, p) && !isBlankLine(text[p:])
	case LevelEntry:
		return lineStart && isEntryStart(text[p:])
	case LevelLine:
		return lineStart
	case LevelSentence:
		return isSentenceEnd(text, p)
	case LevelWord:
		return isSpace(text[p]) && !isSpace(text[p-1])
	}
	return false
}

// finder finds the boundaries of one text, remembering for each level the
// last answer: the first boundary after from is at. Splitting moves
// forward, so most questions are answered from memory, and each level scans
// the text about once.
type finder struct {
	text string
	memo [numLevels]struct{ from, at int }
}

func newFinder(text string) *finder {
	f := &finder{text: text}
	for i := range f.memo {
		f.memo[i].from = -1
	}
	return f
}

// next returns the first boundary of level l after s (s < len(text)), or
// len(text) when there is none.
func (f *finder) next(l Level, s int) int {
	m := &f.memo[l]
	if m.from >= 0 && m.from <= s && s < m.at {
		return m.at
	}
	at := f.scan(l, s)
	m.from, m.at = s, at
	return at
}

func (f *finder) scan(l Level, s int) int {
	text := f.text
	n := len(text)
	switch l {
	case LevelSection, LevelParagraph, LevelEntry, LevelLine:
		for p := s; ; {
			i := strings.IndexByte(text[p:], '\n')
			if i < 0 {
				return n
			}
			p += i + 1
			if p >= n || isAt(text, l, p) {
				return p
			}
		}
	case LevelSentence:
		for p := s + 1; p < n; p++ {
			switch c := text[p]; {
			case isSpace(c):
				if isSentenceEnd(text, p) {
					return p
				}
			case c == 0x82 || c == 0x81 || c == 0x9F: // last byte of 。 (E3 80 82), ！ (EF BC 81) or ？ (EF BC 9F)
				if p+1 < n && isSentenceEnd(text, p+1) {
					return p + 1
				}
			}
		}
		return n
	case LevelWord:
		for p := s + 1; p < n; p++ {
			if isSpace(text[p]) && !isSpace(text[p-1]) {
				return p
			}
		}
		return n
	case LevelGrapheme:
		r, w := utf8.DecodeRuneInString(text[s:])
		p := s + w
		for p < n {
			r2, w2 := utf8.DecodeRuneInString(text[p:])
			if !(isExtender(r2) || r == 0x200D || r == '\r' && r2 == '\n') {
				return p
			}
			r, p = r2, p+w2
		}
		return n
	default: // LevelRune
		_, w := utf8.DecodeRuneInString(text[s:])
		return s + w
	}
}
