package bpe

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Character classes of the split patterns, as bits.
const (
	cL    uint8 = 1 << iota // \p{L}
	cN                      // \p{N}
	cS                      // \s (unicode.IsSpace, as regexp2 uses)
	cCRLF                   // \r or \n
	cUp                     // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLo                     // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// bmp holds the class bits of every rune below 0x10000; classOf computes the
// rest. loadClasses fills it (64 KiB) on the first Load, from the same
// Unicode tables as computeClass.
var (
	bmp         [0x10000]uint8
	classesOnce sync.Once
)

// loadClasses fills bmp once. It walks the ranges of the tables that
// computeClass asks, which is thousands of times faster than asking for
// each rune.
func loadClasses() {
	classesOnce.Do(func() {
		for _, c := range []struct {
			bit    uint8
			tables []*unicode.RangeTable
		}{
			{cL, []*unicode.RangeTable{unicode.L}},
			{cN, []*unicode.RangeTable{unicode.N}},
			{cS, []*unicode.RangeTable{unicode.White_Space}},
			{cUp, []*unicode.RangeTable{unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M}},
			{cLo, []*unicode.RangeTable{unicode.Ll, unicode.Lm, unicode.Lo, unicode.M}},
		} {
			for _, t := range c.tables {
				for _, r := range t.R16 {
					for x := int(r.Lo); x <= int(r.Hi); x += int(r.Stride) {
						bmp[x] |= c.bit
					}
				}
			}
		}
		bmp['\r'] |= cCRLF
		bmp['\n'] |= cCRLF
	})
}

func computeClass(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= cL
	}
	if unicode.IsNumber(r) {
		c |= cN
	}
	if unicode.IsSpace(r) {
		c |= cS
	}
	if r == '\r' || r == '\n' {
		c |= cCRLF
	}
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
		c |= cUp
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
		c |= cLo
	}
	return c
}

// classAt returns the class bits and byte width of the rune at s[i:].
// s must be valid UTF-8.
func classAt(s string, i int) (uint8, int) {
	b := s[i]
	if b < utf8.RuneSelf {
		return bmp[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		return bmp[r], n
	}
	return computeClass(r), n
}

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i:], or i.
// Only ASCII letters fold to these under unicode.ToLower, so ASCII is enough.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	}
	return i
}

// scan returns the end of the run of runes at s[i:] that have any of bits.
func scan(s string, i int, bits uint8) int {
	for i < len(s) {
		b := s[i]
		if b < utf8.RuneSelf {
			if bmp[b]&bits == 0 {
				return i
			}
			i++
			continue
		}
		c, n := classAt(s, i)
		if c&bits == 0 {
			return i
		}
		i += n
	}
	return i
}

// scanNumbers is \p{N}{1,3}: s[i:] starts with a number.
func scanNumbers(s string, i int) int {
	for k := 0; k < 3 && i < len(s); k++ {
		c, n := classAt(s, i)
		if c&cN == 0 {
			break
		}
		i += n
	}
	return i
}

// other is [^\s\p{L}\p{N}].
func isOther(c uint8) bool { return c&(cS|cL|cN) == 0 }

// prefix is [^\r\n\p{L}\p{N}].
func isPrefix(c uint8) bool { return c&(cL|cN|cCRLF) == 0 }

// punct is ` ?[^\s\p{L}\p{N}]+` followed by any run of the bytes in tail
// ("\r\n" for cl100k, "\r\n/" for o200k). It returns the end, or i when the
// alternative does not match.
func punct(s string, i int, slash bool) int {
	j := i
	if s[j] == ' ' {
		j++
	}
	if j >= len(s) {
		return i
	}
	if c, _ := classAt(s, j); !isOther(c) {
		if j == i {
			return i
		}
		// ' ' followed by a non-other: the optional space cannot help.
		return i
	}
	for j < len(s) {
		c, n := classAt(s, j)
		if !isOther(c) {
			break
		}
		j += n
	}
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || (slash && s[j] == '/')) {
		j++
	}
	return j
}

// space handles the three whitespace alternatives shared by both patterns:
// \s*[\r\n]+ | \s+(?!\S) | \s+. s[i:] starts with white space.
func space(s string, i int) int {
	j := i
	lastNL := -1  // index of the last \r or \n in the run
	lastRune := i // start of the last rune in the run
	for j < len(s) {
		c, n := classAt(s, j)
		if c&cS == 0 {
			break
		}
		if c&cCRLF != 0 {
			lastNL = j
		}
		lastRune = j
		j += n
	}
	if lastNL >= 0 {
		return lastNL + 1 // \s*[\r\n]+: backtrack to the last newline
	}
	if j == len(s) || lastRune == i {
		return j // \s+(?!\S) at the end, or \s+ for a single rune
	}
	return lastRune // \s+(?!\S): leave the last space to the next piece
}

// splitCL100K implements cl100k_base's pattern:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitCL100K(s string, i int) int {
	if e := contraction(s, i); e > i {
		return e
	}
	c, n := classAt(s, i)
	if c&cL != 0 {
		return scan(s, i+n, cL)
	}
	if isPrefix(c) && i+n < len(s) {
		if c2, n2 := classAt(s, i+n); c2&cL != 0 {
			return scan(s, i+n+n2, cL)
		}
	}
	if c&cN != 0 {
		return scanNumbers(s, i)
	}
	if e := punct(s, i, false); e > i {
		return e
	}
	return space(s, i)
}

// splitO200K implements o200k_base's pattern:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// with regexp2's backtracking order: each alternative is tried with the
// optional prefix taken first, then without it.
func splitO200K(s string, i int) int {
	c, n := classAt(s, i)
	pre := isPrefix(c) && i+n < len(s)
	if pre {
		if e := wordLower(s, i+n); e > 0 {
			return contraction(s, e)
		}
	}
	if e := wordLower(s, i); e > 0 {
		return contraction(s, e)
	}
	if pre {
		if e := wordUpper(s, i+n); e > 0 {
			return contraction(s, e)
		}
	}
	if e := wordUpper(s, i); e > 0 {
		return contraction(s, e)
	}
	if c&cN != 0 {
		return scanNumbers(s, i)
	}
	if e := punct(s, i, true); e > i {
		return e
	}
	return space(s, i)
}

// wordLower matches [Up]*[Lo]+ at s[p:] and returns its end, or 0.
// Up* is greedy; when no Lo follows the Up run, it backtracks to the last
// rune of the run that is also in Lo (Lm, Lo and M are in both sets).
func wordLower(s string, p int) int {
	j, lastLo := p, 0
	for j < len(s) {
		c, n := classAt(s, j)
		if c&cUp == 0 {
			break
		}
		j += n
		if c&cLo != 0 {
			lastLo = j
		}
	}
	if j < len(s) {
		if c, n := classAt(s, j); c&cLo != 0 {
			return scan(s, j+n, cLo)
		}
	}
	return lastLo
}

// wordUpper matches [Up]+[Lo]* at s[p:] and returns its end, or 0.
func wordUpper(s string, p int) int {
	if p >= len(s) {
		return 0
	}
	if c, _ := classAt(s, p); c&cUp == 0 {
		return 0
	}
	return scan(s, scan(s, p, cUp), cLo)
}
