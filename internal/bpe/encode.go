package bpe

import (
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
	if !utf8.ValidString(text) {
		text = sanitize(text)
	}
	if len(text) < cachedCountBytes {
		total := 0
		for i := 0; i < len(text); {
			j := e.split(text, i)
			total += e.countPiece(text[i:j])
			if limit >= 0 && total > limit {
				return total
			}
			i = j
		}
		return total
	}
	// Responses repeat their pieces (JSON keys, indentation, common words):
	// a small direct-mapped cache, private to this call, answers most of them
	// without a rank lookup. It lives on the stack; entries are compared by
	// content, so a collision only costs a miss.
	var cache [pieceCacheSize]struct {
		piece string
		n     int32
	}
	total := 0
	for i := 0; i < len(text); {
		j := e.split(text, i)
		p := text[i:j]
		var n int
		if len(p) == 1 {
			n = 1
		} else {
			slot := &cache[pieceHash(p)]
			if slot.piece == p {
				n = int(slot.n)
			} else {
				n = e.countPiece(p)
				if len(p) <= shortPiece {
					slot.piece, slot.n = p, int32(n)
				}
			}
		}
		total += n
		if limit >= 0 && total > limit {
			return total
		}
		i = j
	}
	return total
}

const (
	pieceCacheSize = 512
	// cachedCountBytes is the text length from which the piece cache pays
	// for clearing it.
	cachedCountBytes = 2048
)

// pieceHash is a cheap hash of a piece of 2 or more bytes for the cache.
func pieceHash(p string) int {
	h := uint32(len(p))*0x9E3779B1 ^ uint32(p[0])<<8 ^ uint32(p[1])<<16 ^ uint32(p[len(p)-1]) ^ uint32(p[len(p)/2])<<24
	h ^= h >> 15
	h *= 0x2C1B3C6D
	h ^= h >> 13
	return int(h & (pieceCacheSize - 1))
}

func (e *Encoding) countPiece(p string) int {
	if len(p) == 1 {
		return 1
	}
	if e.rank(p) != noRank {
		return 1
	}
	if len(p) <= shortPiece {
		var starts [shortPiece + 1]int32
		return e.mergeShort(p, &starts)
	}
	return e.countLong(p)
}

// countLong counts the tokens of a piece longer than shortPiece.
func (e *Encoding) countLong(p string) int {
	if bt := e.backtracker(); bt != nil {
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
	if bt := e.backtracker(); bt != nil {
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
