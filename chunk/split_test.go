package chunk_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/chunk"
)

func TestSplitEndsAtTheBestLevelThatFits(t *testing.T) {
	longSentences := strings.Repeat("The guest confirmed the booking for the pool villa and asked about late checkout. ", 12)
	stack := "\tat com.example.Server.handle(Server.java:42)\n\tat com.example.Main.main(Main.java:7)\nCaused by: java.io.IOException: broken pipe\n\t... 3 more\n"
	tests := []struct {
		name      string
		text      string
		kind      chunk.Kind
		limit     int
		wantLevel chunk.Level
		wantFirst string // the first chunk
	}{
		{
			name:      "a text within the limit is one chunk that ends at the end",
			text:      "Short text.\n\nTwo paragraphs.\n",
			kind:      chunk.KindProse,
			limit:     100,
			wantLevel: chunk.LevelEnd,
			wantFirst: "Short text.\n\nTwo paragraphs.\n",
		},
		{
			name:      "a markdown section that fits ends before the next heading",
			text:      "# Intro\n\nA short intro.\n\n## Details\n\n" + longSentences,
			kind:      chunk.KindMarkdown,
			limit:     30,
			wantLevel: chunk.LevelSection,
			wantFirst: "# Intro\n\nA short intro.\n\n",
		},
		{
			name:      "a paragraph that fits ends after its blank lines",
			text:      "First paragraph, short.\n\n\nSecond paragraph.\n" + longSentences,
			kind:      chunk.KindProse,
			limit:     30,
			wantLevel: chunk.LevelParagraph,
			wantFirst: "First paragraph, short.\n\n\n",
		},
		{
			name:      "log entries keep their stack traces and end before the next entry",
			text:      "2026-01-02T15:04:05Z INFO started\n2026-01-02 15:04:06,123 ERROR request failed\n" + stack + "[WARN] retrying\n" + strings.Repeat("2026-01-02T15:04:07Z DEBUG tick\n", 20),
			kind:      chunk.KindLog,
			limit:     95,
			wantLevel: chunk.LevelEntry,
			wantFirst: "2026-01-02T15:04:05Z INFO started\n2026-01-02 15:04:06,123 ERROR request failed\n" + stack + "[WARN] retrying\n2026-01-02T15:04:07Z DEBUG tick\n",
		},
		{
			name:      "a line that fits ends after its newline when no paragraph fits",
			text:      "a first line of the paragraph\n" + longSentences,
			kind:      chunk.KindProse,
			limit:     20,
			wantLevel: chunk.LevelLine,
			wantFirst: "a first line of the paragraph\n",
		},
		{
			name:      "a sentence that fits ends before the space after its full stop",
			text:      longSentences,
			kind:      chunk.KindProse,
			limit:     40,
			wantLevel: chunk.LevelSentence,
			wantFirst: "The guest confirmed the booking for the pool villa and asked about late checkout. The guest confirmed the booking for the pool villa and asked about late checkout.",
		},
		{
			name:      "words are split only when no sentence fits",
			text:      longSentences,
			kind:      chunk.KindProse,
			limit:     8,
			wantLevel: chunk.LevelWord,
			wantFirst: "The guest confirmed the booking for the pool",
		},
		{
			name:      "a word over the limit is split between graphemes",
			text:      strings.Repeat("e\u0301", 40) + " end",
			kind:      chunk.KindProse,
			limit:     6,
			wantLevel: chunk.LevelGrapheme,
		},
		{
			name:      "a grapheme cluster over the limit is split between runes",
			text:      "a" + strings.Repeat("\u0301\u0300\u0302", 30),
			kind:      chunk.KindProse,
			limit:     4,
			wantLevel: chunk.LevelRune,
		},
	}
	counter := exactCounter(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans, err := chunk.Split(tt.text, &chunk.Options{MaxTokens: tt.limit, Kind: tt.kind})
			require.NoError(t, err)
			require.NotEmpty(t, spans)
			assert.Equal(t, tt.wantLevel, spans[0].Level, "first chunk %q", tt.text[spans[0].Start:spans[0].End])
			if tt.wantFirst != "" {
				assert.Equal(t, tt.wantFirst, tt.text[spans[0].Start:spans[0].End])
			}
			assert.Equal(t, tt.text, joined(tt.text, spans))
			for i, s := range spans {
				content := tt.text[s.Start:s.End]
				assert.Equal(t, counter.Count(content), s.Tokens, "chunk %d", i)
				assert.LessOrEqual(t, s.Tokens, tt.limit, "chunk %d", i)
				r, _ := utf8.DecodeRuneInString(content)
				if tt.wantLevel == chunk.LevelGrapheme {
					assert.False(t, unicode.Is(unicode.Mn, r), "chunk %d starts with a combining mark: %q", i, content)
				}
			}
		})
	}
}

func TestSplitKeepsEmojiSequencesWhole(t *testing.T) {
	family := "👩\u200d👩\u200d👧\u200d👦" // one grapheme cluster, several tokens
	text := strings.Repeat(family, 10)
	spans, err := chunk.Split(text, &chunk.Options{MaxTokens: 16, Kind: chunk.KindProse})
	require.NoError(t, err)
	require.Greater(t, len(spans), 1)
	for _, s := range spans {
		assert.Zero(t, (s.End-s.Start)%len(family), "a chunk splits the family emoji: %q", text[s.Start:s.End])
	}
}

func TestSplitEmptyTextIsOneEmptyChunk(t *testing.T) {
	spans, err := chunk.Split("", nil)
	require.NoError(t, err)
	assert.Equal(t, []chunk.Span{{Level: chunk.LevelEnd}}, spans)
}

func TestSplitRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts chunk.Options
		want string
	}{
		{"a limit below the minimum is rejected", chunk.Options{MaxTokens: 3}, "chunk: Options.MaxTokens is 3; it must be at least 4, or zero for the default of 2000"},
		{"a negative limit is rejected", chunk.Options{MaxTokens: -1}, "chunk: Options.MaxTokens is -1"},
		{"an unknown kind is rejected", chunk.Options{Kind: "xml"}, `chunk: Options.Kind "xml" is unknown`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chunk.Split("text", &tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = chunk.NewChunker(newCodec(t, nil, nil), &tt.opts)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("a chunker needs a codec", func(t *testing.T) {
		_, err := chunk.NewChunker(nil, nil)
		assert.ErrorContains(t, err, "chunk: NewChunker needs a cursor codec")
	})
}

// bytesTimesTwo counts two tokens per byte: a custom counter under which a
// four-byte rune is over a limit of four.
type bytesTimesTwo struct{}

func (bytesTimesTwo) Count(s string) int { return 2 * len(s) }

func TestSplitReportsARuneOverTheLimit(t *testing.T) {
	_, err := chunk.Split("ab😀", &chunk.Options{Counter: bytesTimesTwo{}, MaxTokens: 4, Kind: chunk.KindProse})
	require.ErrorIs(t, err, chunk.ErrUnsplittable)
	assert.EqualError(t, err, "chunk: a single rune is over the token limit: at byte 2, the rune takes more than 4 tokens")
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		text string
		want chunk.Kind
	}{
		{"empty text is prose", "", chunk.KindProse},
		{"sentences in paragraphs are prose", "The guest arrived late.\n\nShe asked for a quiet room, and got one.\n", chunk.KindProse},
		{"a heading makes markdown", "# Title\n\nSome text here.\n\n## More\n\nAnd more text.\n", chunk.KindMarkdown},
		{"a code fence makes markdown", "Run this:\n\n```\nmake test\n```\n\nThen read the output carefully.\n", chunk.KindMarkdown},
		{"timestamped lines are a log", "2026-01-02T15:04:05Z INFO start\n2026-01-02T15:04:06Z WARN slow\n", chunk.KindLog},
		{"level-prefixed lines with a stack trace are a log", "ERROR boom\n\tat a.b(C.java:1)\n\tat d.e(F.java:2)\n[INFO] done\n", chunk.KindLog},
		{"syslog timestamps are a log", "Jan  2 15:04:05 host sshd[1]: accepted\nJan  2 15:04:06 host sshd[1]: closed\n", chunk.KindLog},
		{"go source is code", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(1)\n}\n", chunk.KindCode},
		{"python with comments is code, not markdown", "# setup\nimport os\n\ndef main():\n    print(os.getcwd())\n", chunk.KindCode},
		{"one JSON object per line is JSON lines", "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n", chunk.KindJSONLines},
		{"a bracketed level is not a JSON array", "[INFO] a\n[INFO] b\n", chunk.KindLog},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, chunk.Detect(tt.text))
		})
	}
}

func TestKindDecidesTheLevels(t *testing.T) {
	tests := []struct {
		kind chunk.Kind
		want []chunk.Level
	}{
		{chunk.KindMarkdown, []chunk.Level{chunk.LevelSection, chunk.LevelParagraph, chunk.LevelLine, chunk.LevelSentence, chunk.LevelWord, chunk.LevelGrapheme, chunk.LevelRune}},
		{chunk.KindLog, []chunk.Level{chunk.LevelEntry, chunk.LevelLine, chunk.LevelWord, chunk.LevelGrapheme, chunk.LevelRune}},
		{chunk.KindProse, []chunk.Level{chunk.LevelParagraph, chunk.LevelLine, chunk.LevelSentence, chunk.LevelWord, chunk.LevelGrapheme, chunk.LevelRune}},
		{chunk.KindCode, []chunk.Level{chunk.LevelParagraph, chunk.LevelLine, chunk.LevelWord, chunk.LevelGrapheme, chunk.LevelRune}},
		{chunk.KindJSONLines, []chunk.Level{chunk.LevelLine, chunk.LevelWord, chunk.LevelGrapheme, chunk.LevelRune}},
		{chunk.KindAuto, nil},
	}
	for _, tt := range tests {
		t.Run("kind "+string(tt.kind)+" uses its levels", func(t *testing.T) {
			assert.Equal(t, tt.want, tt.kind.Levels())
		})
	}
	t.Run("a heading in a text chunked as prose is not a section boundary", func(t *testing.T) {
		text := "intro line\n# Heading\n" + strings.Repeat("word ", 40)
		spans, err := chunk.Split(text, &chunk.Options{MaxTokens: 10, Kind: chunk.KindProse})
		require.NoError(t, err)
		assert.NotEqual(t, chunk.LevelSection, spans[0].Level)
	})
	t.Run("levels have names", func(t *testing.T) {
		assert.Equal(t, "paragraph", chunk.LevelParagraph.String())
		assert.Equal(t, "Level(42)", chunk.Level(42).String())
	})
}
