package bpe_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ctxfit/ctxfit/internal/bpe"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// checkSafeCuts checks, for every position SafeCut accepts, that each
// encoding ends a piece there and that the counts of the two sides add up
// to the count of the whole.
func checkSafeCuts(t *testing.T, encs []*bpe.Encoding, text string) {
	t.Helper()
	for _, e := range encs {
		ends := map[int]bool{}
		pos := 0
		e.Pieces(text, func(p string) { pos += len(p); ends[pos] = true })
		if pos != len(text) {
			continue // invalid UTF-8 was replaced: positions differ, counts are checked below
		}
		whole := e.Count(text)
		for i := range len(text) {
			if !bpe.SafeCut(text, i) {
				continue
			}
			assert.True(t, ends[i], "%s: no piece ends at %d: %q|%q", e.Name(), i, text[max(0, i-10):i], text[i:min(len(text), i+10)])
			assert.Equal(t, whole, e.Count(text[:i])+e.Count(text[i:]), "%s: counts do not add up at %d", e.Name(), i)
		}
	}
}

func loadAll(t testing.TB) []*bpe.Encoding {
	var out []*bpe.Encoding
	for _, name := range encodings {
		out = append(out, load(t, name))
	}
	return out
}

func TestSafeCut(t *testing.T) {
	tests := []struct {
		text string
		i    int
		want bool
	}{
		{"a\nb", 2, true},
		{"a\n2026-01-01", 2, true},
		{"a\n{", 2, true},
		{"a\n/", 2, false},   // punctuation may run on through line feeds into '/'
		{"}\n/x", 2, false},  // "}\n/" is one piece
		{"a\n b", 2, false},  // whitespace
		{"a\n\nb", 2, false}, // inside a run of line feeds
		{"a\r\nb", 3, true},
		{"a\n\u00e9", 2, false},  // not ASCII
		{"a\n\u3000b", 2, false}, // Unicode white space
		{"ab", 1, false},
		{"\nb", 0, false},
		{"a\n", 2, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, bpe.SafeCut(tt.text, tt.i), "%q at %d", tt.text, tt.i)
	}
}

func TestSafeCutsAddUp(t *testing.T) {
	encs := loadAll(t)
	for name, text := range map[string]string{
		"log":   corpus.Log(300),
		"prose": corpus.Prose(20000),
		"code":  corpus.Code(20000),
		"json":  corpus.JSON(20000),
		"tricky": strings.Join([]string{"x", "}", "/a", "  ", "\t\t", "\u3000", "\u00a0", "'s", "'S", "123456", "\r", "", "#",
			"e\u0301", "日本", "\xff", "//", ")/", "a/"}, "\n"),
	} {
		t.Run(name, func(t *testing.T) { checkSafeCuts(t, encs, text) })
	}
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []string{"a", "Z", "1", " ", "  ", "\n", "\n\n", "\r\n", "/", "}", ",", "'", "'s", "\t", "\u00e9", "\u3000", "\u00a0", "\u2028", "日", "😀", "\xff", "-", "."}
	for range 300 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		checkSafeCuts(t, encs, b.String())
	}
}

func FuzzSafeCut(f *testing.F) {
	encs := loadAll(f)
	for _, s := range []string{"a\nb", "}\n/x", "x \n\ny", "'\ns", "1\n23", "\xff\n\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 512 {
			t.Skip()
		}
		checkSafeCuts(t, encs, text)
	})
}
