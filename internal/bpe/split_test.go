package bpe

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkASCIIPaths checks at every offset of s that the ASCII paths either
// leave the piece to the whole pattern or end it where the pattern does.
func checkASCIIPaths(t *testing.T, s string) {
	t.Helper()
	loadClasses()
	for i := range len(s) {
		if j := asciiSplit(s, i, true); j != i {
			require.Equal(t, splitO200K(s, i), j, "o200k_base at %d of %q", i, s)
		}
		if j := asciiSplit(s, i, false); j != i {
			require.Equal(t, splitCL100K(s, i), j, "cl100k_base at %d of %q", i, s)
		}
	}
}

// asciiPieces mixes what the ASCII paths tell apart, and some non-ASCII
// runes that they must leave to the patterns.
var asciiPieces = []string{
	"a", "z", "A", "Z", "hello", "World", "HTTP", "Server", "abcdefghijklmnop", "ABCDEFGHIJ", "'s", "'T", "'re",
	"'LL", "'d", "'", "0", "7", "123", "4567", " ", "  ", "        ", "\t", "\n", "\r\n", "\v", "\f", "\x1c", "\x00",
	"!", "\"", "/", ":", "{", "}", "@", "[", "`", "~", "\x7f", "é", "É", "ǅ", "½", "\u00a0", "\u0085", "\u2028",
	"日", "\u0301", "—", "😀",
}

func TestASCIIPathsEndPiecesAsThePatternsDo(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		var b strings.Builder
		for range r.IntN(24) {
			b.WriteString(asciiPieces[r.IntN(len(asciiPieces))])
		}
		checkASCIIPaths(t, b.String())
	}
}

func FuzzASCIIPaths(f *testing.F) {
	for _, s := range asciiPieces {
		f.Add(s + " x" + s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return
		}
		checkASCIIPaths(t, sanitize(s))
	})
}
