package bpe

import (
	"math/bits"
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
	cHigh                   // in byteClass only: a byte of a multi-byte rune
)

// bmp holds the class bits of every rune below 0x10000; classAt computes the
// rest. byteClass holds those of the ASCII bytes, and cHigh for the others,
// so that loops over ASCII text stop at the first byte that is not. Both are
// filled (64 KiB) on the first Load, from the same Unicode tables as
// computeClass.
var (
	bmp         [0x10000]uint8
	byteClass   [256]uint8
	classesOnce sync.Once
)

// loadClasses fills bmp and byteClass once. It walks the ranges of the
// tables that computeClass asks, which is thousands of times faster than
// asking them about each rune.
func loadClasses() {
	classesOnce.Do(func() {
		for _, c := range classTables() {
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
		for b := range byteClass {
			byteClass[b] = cHigh
			if b < utf8.RuneSelf {
				byteClass[b] = bmp[b]
			}
		}
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
	return suppClass(r), n
}

// The class bits of the runes from 0x10000 on (the supplementary planes),
// in blocks of 256 runes: suppIndex[(r-0x10000)>>8] is the number of r's
// block in suppBlocks, where equal blocks are stored once (most of the
// planes are unassigned: one block of zeros). They are filled on the first
// such rune (a few milliseconds), from the same tables as computeClass:
// asking those (a binary search per table) cost random text a fifth of its
// time.
var (
	suppOnce   sync.Once
	suppIndex  [(utf8.MaxRune + 1 - 0x10000) >> 8]uint16
	suppBlocks []uint8
)

// suppClass returns the class bits of r, a rune from 0x10000 on.
func suppClass(r rune) uint8 {
	suppOnce.Do(loadSupp)
	x := int(r - 0x10000)
	return suppBlocks[int(suppIndex[x>>8])<<8|x&0xff]
}

func loadSupp() {
	flat := make([]uint8, utf8.MaxRune+1-0x10000)
	for _, c := range classTables() {
		for _, t := range c.tables {
			for _, r := range t.R32 {
				for x := int(r.Lo); x <= int(r.Hi); x += int(r.Stride) {
					if x >= 0x10000 {
						flat[x-0x10000] |= c.bit
					}
				}
			}
		}
	}
	ids := map[[256]uint8]uint16{}
	for b := range suppIndex {
		blk := [256]uint8(flat[b<<8:])
		id, ok := ids[blk]
		if !ok {
			id = uint16(len(ids))
			ids[blk] = id
			suppBlocks = append(suppBlocks, blk[:]...)
		}
		suppIndex[b] = id
	}
}

// classTables are the Unicode tables of each class bit but cCRLF, as
// computeClass asks them.
func classTables() []classTable {
	return []classTable{
		{cL, []*unicode.RangeTable{unicode.L}},
		{cN, []*unicode.RangeTable{unicode.N}},
		{cS, []*unicode.RangeTable{unicode.White_Space}},
		{cUp, []*unicode.RangeTable{unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M}},
		{cLo, []*unicode.RangeTable{unicode.Ll, unicode.Lm, unicode.Lo, unicode.M}},
	}
}

type classTable struct {
	bit    uint8
	tables []*unicode.RangeTable
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

// The ASCII path below follows the patterns' alternatives as splitO200K and
// splitCL100K do, with one byte-class look-up per byte and 8 bytes at a time
// through words. It returns the end of the piece at s[i:], or i when a byte
// of a multi-byte rune (cHigh) could change it: a letter, number, space or
// punctuation mark of its own class. In ASCII the letter classes are simple:
// [Up] is A-Z, [Lo] is a-z, and \p{L} is both.

// asciiSplit is splitO200K (o200k) or splitCL100K on ASCII.
func asciiSplit(s string, i int, o200k bool) int {
	if !o200k && s[i] == '\'' {
		if e := contraction(s, i); e > i {
			return e
		}
	}
	c := byteClass[s[i]]
	switch {
	case c&cL != 0:
		return asciiWord(s, i, i, o200k)
	case c&cN != 0:
		return asciiNumbers(s, i)
	case c&(cCRLF|cHigh) != 0:
		if c&cHigh != 0 {
			return i
		}
		return asciiSpace(s, i)
	}
	// A byte that may prefix a word: [^\r\n\p{L}\p{N}].
	if i+1 < len(s) {
		if c2 := byteClass[s[i+1]]; c2&(cL|cHigh) != 0 {
			if c2&cHigh != 0 {
				return i
			}
			return asciiWord(s, i, i+1, o200k)
		}
	}
	if c&cS == 0 || s[i] == ' ' && i+1 < len(s) && byteClass[s[i+1]]&(cS|cN) == 0 {
		return asciiPunct(s, i, o200k)
	}
	return asciiSpace(s, i)
}

// asciiWord returns the end of the word at s[p:], which starts with an ASCII
// letter, for the piece that starts at i. For cl100k_base that is \p{L}+.
// For o200k_base it is [Up]*[Lo]+ or [Up]+[Lo]*, then a contraction: the
// upper-case run, then the lower-case run; where the Up run has no Lo after
// it, the first alternative fails (no ASCII upper-case letter is in Lo) and
// the second takes the same run.
func asciiWord(s string, i, p int, o200k bool) int {
	j, fold := p, byte(0x20) // fold: either case
	if o200k {
		for j < len(s) && byteClass[s[j]]&cUp != 0 {
			j++
		}
		fold = 0
	}
	if in := uint64(0); j+8 <= len(s) {
		if in = inRange(le64(s[j:]), 'a', 'z', fold); in != high {
			j += bits.TrailingZeros64(^in&high) >> 3
		} else {
			j = asciiRun(s, j+8, 'a', 'z', fold)
		}
	} else {
		j = asciiRun(s, j, 'a', 'z', fold)
	}
	if j < len(s) {
		switch {
		case s[j] >= utf8.RuneSelf:
			return i
		case o200k && s[j] == '\'':
			return contraction(s, j)
		}
	}
	return j
}

// asciiRun returns the end of the run at s[j:] of bytes from lo to hi, ASCII
// with lo > 0, after ORing them with fold (0x20 to match either case). It
// tests 8 bytes at once: most runs are words, whose end a byte loop
// mispredicts. asciiWord tests the first 8 bytes itself.
func asciiRun(s string, j int, lo, hi, fold byte) int {
	for ; j+8 <= len(s); j += 8 {
		if in := inRange(le64(s[j:]), lo, hi, fold); in != high {
			return j + bits.TrailingZeros64(^in&high)>>3
		}
	}
	for ; j < len(s); j++ {
		if c := s[j] | fold; c < lo || c > hi {
			break
		}
	}
	return j
}

const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// inRange sets the high bit of each byte of x that is from lo to hi after
// ORing it with fold, and clears the other bits.
func inRange(x uint64, lo, hi, fold byte) uint64 {
	x |= uint64(fold) * ones
	y := x &^ high // no carries between bytes below
	return (y + (0x80-uint64(lo))*ones) &^ (y + (0x7f-uint64(hi))*ones) &^ x & high
}

// asciiNumbers is \p{N}{1,3} at s[i:], which starts with a digit.
func asciiNumbers(s string, i int) int {
	j := i + 1
	for ; j < len(s) && j < i+3; j++ {
		if c := byteClass[s[j]]; c&cN == 0 {
			if c&cHigh != 0 {
				return i
			}
			break
		}
	}
	return j
}

// asciiPunct is ` ?[^\s\p{L}\p{N}]+[\r\n]*` (with slash, [\r\n/]*) at s[i:],
// which starts with punctuation, or a space and punctuation.
func asciiPunct(s string, i int, slash bool) int {
	j := i + 1
	for j < len(s) && byteClass[s[j]]&(cS|cL|cN) == 0 {
		if s[j] >= utf8.RuneSelf {
			return i
		}
		j++
	}
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || slash && s[j] == '/') {
		j++
	}
	return j
}

// asciiSpace is space on ASCII white space at s[i:].
func asciiSpace(s string, i int) int {
	j, lastNL := i, -1
	for ; j < len(s); j++ {
		c := byteClass[s[j]]
		if c&cS == 0 {
			if c&cHigh != 0 {
				return i
			}
			break
		}
		if c&cCRLF != 0 {
			lastNL = j
		}
	}
	switch {
	case lastNL >= 0:
		return lastNL + 1
	case j == len(s) || j == i+1:
		return j
	}
	return j - 1
}
