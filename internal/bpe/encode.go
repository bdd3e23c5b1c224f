package bpe

import (
	"math"
	"unicode/utf8"
)

// Count returns the number of tokens in text.
func (e *Encoding) Count(text string) int {
	return e.CountUpTo(text, -1)
}

// CountUpTo returns the number of tokens in text when it is at most limit,
// and stops as soon as the count passes limit, returning some value above
// it. A negative limit means no limit.
func (e *Encoding) CountUpTo(text string, limit int) int {
	n, _ := e.CountPrefix(text, limit)
	return n
}

// CountPrefix is CountUpTo that also returns the share of text it read, as
// a fraction: 1 when the count is at most limit, less when it stopped past
// it (the tokens of the whole are about n / read).
func (e *Encoding) CountPrefix(text string, limit int) (n int, read float64) {
	if !utf8.ValidString(text) {
		text = sanitize(text)
	}
	if limit < 0 {
		limit = math.MaxInt
	}
	var end int
	if len(text) >= cachedCountBytes {
		var c pieceCache
		n, end = e.count(text, limit, &c)
	} else {
		n, end = e.count(text, limit, nil)
	}
	if end >= len(text) {
		return n, 1
	}
	return n, float64(end) / float64(len(text))
}

// pieceCache holds the counts of pieces seen before in one text. Texts
// repeat their pieces (JSON keys, indentation, common words), and the rank
// table is too large for the CPU's nearest caches: this one, on the stack of
// the call, answers most pieces. short holds pieces of up to 8 bytes, keyed
// by their bytes as a number; long holds longer pieces and the merges of
// short ones, keyed by content, so that a merge, which costs tens of
// look-ups, is evicted by merges only. Both are direct-mapped: a collision
// only costs a miss.
type pieceCache struct {
	short [pieceCacheSize]struct {
		head     uint64
		n, count uint32 // n: the piece's length, 0 for an empty entry
	}
	long [longCacheSize]struct {
		piece string
		count int
	}
}

const (
	pieceCacheBits = 10
	pieceCacheSize = 1 << pieceCacheBits
	longCacheBits  = 9
	longCacheSize  = 1 << longCacheBits
	// cachedCountBytes is the text length from which the piece cache pays
	// for clearing it.
	cachedCountBytes = 2048
)

// count is CountPrefix on valid UTF-8 with a limit, with a piece cache or
// none; end is the byte offset where it stopped (len(text) when it read all
// of it).
func (e *Encoding) count(text string, limit int, cache *pieceCache) (total, end int) {
	for i := 0; i < len(text); {
		// e.split, without a call in between for ASCII pieces.
		j := asciiSplit(text, i, e.o200k)
		if j == i {
			j = e.split(text, i)
		}
		n := j - i
		switch {
		case n == 1:
			total++
		case cache != nil && n <= 8 && i+8 <= len(text):
			head, hash := shortKey(le64(text[i:]), n)
			c := &cache.short[hash>>(64-pieceCacheBits)]
			if c.head != head || c.n != uint32(n) {
				c.head, c.n, c.count = head, uint32(n), 1
				if e.find(text[i:j], head, hash) == noRank {
					m := &cache.long[hash>>(64-longCacheBits)]
					if m.piece != text[i:j] {
						m.piece, m.count = text[i:j], e.merge(text[i:j])
					}
					c.count = uint32(m.count)
				}
			}
			total += int(c.count)
		case cache != nil:
			p := text[i:j]
			head, hash := key(p)
			c := &cache.long[hash>>(64-longCacheBits)]
			if c.piece != p {
				c.piece, c.count = p, 1
				if len(p) > e.maxLen || e.find(p, head, hash) == noRank {
					c.count = e.merge(p)
				}
			}
			total += c.count
		default:
			total++
			if e.rank(text[i:j]) == noRank {
				total += e.merge(text[i:j]) - 1
			}
		}
		if total > limit {
			return total, j
		}
		i = j
	}
	return total, len(text)
}

// merge returns the number of tokens in piece, which is not a token.
func (e *Encoding) merge(p string) int {
	if len(p) <= shortPiece && (len(p) < midPiece || !e.btBuilt.Load()) {
		var starts [shortPiece + 1]int32
		return e.mergeShort(p, &starts)
	}
	return e.countLong(p)
}

// countLong counts the tokens of a piece longer than shortPiece.
func (e *Encoding) countLong(p string) int {
	if bt := e.search(len(p)); bt != nil {
		sc := getScratch()
		defer putScratch(sc)
		if bt.encode(p, sc) {
			return len(sc.stack)
		}
	}
	return e.mergeLong(p, nil)
}

// Encode returns the token ids of text, as tiktoken's EncodeOrdinary does.
func (e *Encoding) Encode(text string) []int {
	if !utf8.ValidString(text) {
		text = sanitize(text)
	}
	var out []int
	for i := 0; i < len(text); {
		j := e.split(text, i)
		p := text[i:j]
		switch r := e.rank(p); {
		case r != noRank:
			out = append(out, int(r))
		case len(p) <= shortPiece:
			var starts [shortPiece + 1]int32
			n := e.mergeShort(p, &starts)
			for k := 0; k < n; k++ {
				out = append(out, int(e.rank(p[starts[k]:starts[k+1]])))
			}
		default:
			out = e.appendLong(out, p)
		}
		i = j
	}
	return out
}

// Decode returns the bytes of tokens.
func (e *Encoding) Decode(tokens []int) string {
	var b []byte
	for _, t := range tokens {
		if t >= 0 && t < len(e.off)-1 {
			b = append(b, e.token(uint32(t))...)
		}
	}
	return string(b)
}

// Pieces calls fn with each pre-tokeniser piece of text, in order.
func (e *Encoding) Pieces(text string, fn func(piece string)) {
	if !utf8.ValidString(text) {
		text = sanitize(text)
	}
	for i := 0; i < len(text); {
		j := e.split(text, i)
		fn(text[i:j])
		i = j
	}
}

// sanitize replaces each invalid byte with U+FFFD, as Go's []rune conversion
// (and so tiktoken-go) does.
func sanitize(s string) string {
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// appendLong appends the tokens of a piece longer than shortPiece.
func (e *Encoding) appendLong(out []int, p string) []int {
	if bt := e.search(len(p)); bt != nil {
		sc := getScratch()
		defer putScratch(sc)
		if bt.encode(p, sc) {
			for _, t := range sc.stack {
				out = append(out, int(t&^guessed))
			}
			return out
		}
	}
	e.mergeLong(p, func(a, b int) { out = append(out, int(e.rank(p[a:b]))) })
	return out
}

// SafeCut reports whether i is a position of text where counting the two
// sides apart gives the count of the whole, for every encoding of this
// package: i follows a line feed and text[i] is printable ASCII other than
// '/'. The pre-tokenisers then end a piece at i whatever precedes it (no
// pattern runs from a line feed into such a byte, and only punctuation may
// run on through line feeds into a '/'), and pieces are counted apart.
// Invalid UTF-8 elsewhere does not matter: it is replaced byte by byte.
func SafeCut(text string, i int) bool {
	if i <= 0 || i >= len(text) {
		return false
	}
	c := text[i]
	return text[i-1] == '\n' && c > ' ' && c < 0x7f && c != '/'
}
