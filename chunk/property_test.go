package chunk_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
)

// pieces are what random texts are made of: words of several scripts,
// white space, punctuation, line breaks of both kinds, headings, log lines,
// stack frames, combining marks and emoji sequences.
var pieces = []string{
	"the", "booking", "guest", "confirmed", "naïve", "café", "東京", "データ", "😀", "👩\u200d👩\u200d👧",
	"e\u0301", "🇵🇹", " ", " ", " ", "  ", "\t", ". ", "! ", "? ", ", ", "。", "\n", "\n", "\r\n", "\n\n", "\n \n",
	"# Heading\n", "## Sub\n", "2026-01-02T15:04:05Z INFO ok\n", "[ERROR] failed\n", "\tat a.b(C.java:1)\n",
	"Caused by: x\n", "{\"id\":1}\n", "0123456789", "https://example.com/x?y=1", "ZZZZZZZZ",
}

// randomText returns a text of about n bytes of one of several shapes.
func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	switch rng.IntN(8) {
	case 0: // no newline at all
		for b.Len() < n {
			p := pieces[rng.IntN(len(pieces))]
			if !strings.ContainsAny(p, "\r\n") {
				b.WriteString(p)
			}
		}
	case 1: // one giant word
		for b.Len() < n {
			b.WriteString([]string{"abc", "xyz", "é", "東", "0"}[rng.IntN(5)])
		}
	case 2: // ASCII only
		for b.Len() < n {
			p := pieces[rng.IntN(len(pieces))]
			if utf8.RuneCountInString(p) == len(p) {
				b.WriteString(p)
			}
		}
	case 3: // CRLF line endings
		for b.Len() < n {
			b.WriteString(strings.ReplaceAll(pieces[rng.IntN(len(pieces))], "\n", "\r\n"))
		}
	case 4: // empty
	default:
		for b.Len() < n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
	}
	return b.String()
}

// TestPropertyLosslessWithinLimitAtTheBestLevel splits random texts of every
// kind under random limits and checks the invariants that matter: the
// chunks are the text byte for byte, each is within the limit by exact
// count and is valid UTF-8 when the text is, each ends at the best level
// available from where it starts, and following the cursors gives the same
// chunks with consistent line metadata.
func TestPropertyLosslessWithinLimitAtTheBestLevel(t *testing.T) {
	counter := exactCounter(t)
	n := 300
	if testing.Short() || raceEnabled {
		n = 60
	}
	kinds := []chunk.Kind{chunk.KindAuto, chunk.KindProse, chunk.KindMarkdown, chunk.KindLog, chunk.KindCode, chunk.KindJSONLines}
	for seed := range uint64(n) {
		rng := rand.New(rand.NewPCG(seed, 0xc0ffee))
		text := randomText(rng, rng.IntN(3000))
		limit := chunk.MinMaxTokens + rng.IntN(200)
		kind := kinds[rng.IntN(len(kinds))]
		opts := &chunk.Options{MaxTokens: limit, Kind: kind}
		spans, err := chunk.Split(text, opts)
		require.NoError(t, err, "seed %d", seed)
		checkSpans(t, counter, text, limit, spans)
		if kind == chunk.KindAuto {
			kind = chunk.Detect(text)
		}
		checkBestLevel(t, counter, text, limit, kind, spans)
		if seed%5 == 0 {
			checkFollow(t, text, opts, spans)
		}
		if t.Failed() {
			t.Fatalf("seed %d: kind %s, limit %d, text %q", seed, kind, limit, text)
		}
	}
}

// checkSpans checks that spans are the text, in order, each within the
// limit by exact count and valid UTF-8 when the text is.
func checkSpans(t *testing.T, counter budget.Counter, text string, limit int, spans []chunk.Span) {
	t.Helper()
	require.NotEmpty(t, spans)
	pos := 0
	for i, s := range spans {
		require.Equal(t, pos, s.Start, "chunk %d starts where the previous one ended", i)
		if text != "" {
			require.Greater(t, s.End, s.Start, "chunk %d is not empty", i)
		}
		content := text[s.Start:s.End]
		got := counter.Count(content)
		assert.Equal(t, got, s.Tokens, "chunk %d reports its exact count", i)
		assert.LessOrEqual(t, got, limit, "chunk %d is within the limit", i)
		if utf8.ValidString(text) {
			assert.True(t, utf8.ValidString(content), "chunk %d splits a UTF-8 sequence", i)
		}
		pos = s.End
	}
	assert.Equal(t, len(text), pos, "the chunks reach the end")
	assert.Equal(t, chunk.LevelEnd, spans[len(spans)-1].Level)
}

// checkBestLevel checks that every chunk ends at a boundary of the best
// level whose first boundary fits from where the chunk starts, and that a
// rest that fits is the last chunk.
func checkBestLevel(t *testing.T, counter budget.Counter, text string, limit int, kind chunk.Kind, spans []chunk.Span) {
	t.Helper()
	levels := kind.Levels()
	for i, s := range spans {
		if s.End == len(text) {
			continue
		}
		assert.Greater(t, counter.Count(text[s.Start:]), limit, "chunk %d: the rest fits, but is not the last chunk", i)
		first := func(p, k int) int {
			b := len(text)
			for _, l := range levels[:k+1] {
				b = min(b, chunk.NextBoundary(text, l, p))
			}
			return b
		}
		best := -1
		for k := range levels {
			if counter.Count(text[s.Start:first(s.Start, k)]) <= limit {
				best = k
				break
			}
		}
		require.GreaterOrEqual(t, best, 0, "chunk %d: no level fits", i)
		p := s.Start
		for p < s.End {
			p = first(p, best)
		}
		assert.Equal(t, s.End, p, "chunk %d [%d,%d) %q does not end at a %s boundary (or better), which fits",
			i, s.Start, s.End, text[s.Start:s.End], levels[best])
	}
}

// checkFollow follows a Chunker's cursors through text and checks the
// chunks against spans and their line metadata.
func checkFollow(t *testing.T, text string, opts *chunk.Options, spans []chunk.Span) {
	t.Helper()
	c := newChunker(t, nil, opts)
	chunks := follow(t, c, text, docBinding)
	require.Len(t, chunks, len(spans))
	total := chunk.TotalLines(text)
	for i, ch := range chunks {
		s := spans[i]
		assert.Equal(t, text[s.Start:s.End], ch.Content)
		assert.Equal(t, i, ch.ChunkIndex)
		assert.Equal(t, len(spans), ch.TotalChunks)
		md := ch.Metadata
		assert.Equal(t, 1+strings.Count(text[:s.Start], "\n"), md.StartLine, "chunk %d start line", i)
		assert.Equal(t, total, md.TotalLines)
		assert.Equal(t, len(ch.Content), md.BytesInChunk)
		assert.LessOrEqual(t, md.StartLine, md.EndLine)
		assert.LessOrEqual(t, md.EndLine, total)
		if i > 0 {
			prev := chunks[i-1]
			want := prev.Metadata.EndLine
			if strings.HasSuffix(prev.Content, "\n") {
				want++
			}
			assert.Equal(t, want, md.StartLine, "chunk %d starts on the line after the previous one or on its last line", i)
		}
	}
	if n := len(chunks); n > 0 {
		assert.Equal(t, total, chunks[n-1].Metadata.EndLine, "the last chunk ends on the last line")
	}
}
