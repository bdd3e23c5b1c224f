package chunk_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/internal/rawjson"
)

// cutAll follows a Cutter from the start of text to its end.
func cutAll(t *testing.T, text string, form chunk.Form, opts *chunk.Options) []chunk.Span {
	t.Helper()
	c, err := chunk.NewCutter(text, form, opts)
	require.NoError(t, err)
	var spans []chunk.Span
	for at := 0; at < len(text); {
		s, err := c.Next(at)
		require.NoError(t, err)
		require.Equal(t, at, s.Start)
		require.Greater(t, s.End, s.Start, "every chunk makes progress")
		spans = append(spans, s)
		at = s.End
	}
	return spans
}

func TestACutterGivesTheChunksOfSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 30 {
		text := randomText(rng, 200+rng.IntN(4000))
		if text == "" {
			continue
		}
		opts := &chunk.Options{MaxTokens: 20 + rng.IntN(200)}
		want, err := chunk.Split(text, opts)
		require.NoError(t, err)
		assert.Equal(t, want, cutAll(t, text, chunk.FormText, opts))
	}
}

func TestEscapedChunksAreMeasuredAsTheyAreSent(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	exact, err := budget.Exact("")
	require.NoError(t, err)
	for i := range 40 {
		text := randomText(rng, 100+rng.IntN(3000))
		if i%3 == 0 {
			text += "\xff\xfe latin-1 caf\xe9 \"quoted\" \\ back\x01"
		}
		if text == "" {
			continue
		}
		limit := 8 + rng.IntN(150)
		var joined []byte
		for _, s := range cutAll(t, text, chunk.FormEscaped, &chunk.Options{MaxTokens: limit}) {
			wire, _ := rawjson.Escape(nil, []byte(text[s.Start:s.End]))
			assert.Equal(t, exact.Count(string(wire)), s.Tokens, "Tokens is the escaped chunk's exact count")
			assert.LessOrEqual(t, s.Tokens, limit)
			joined = append(joined, rawjson.Unescape(wire)...)
		}
		assert.Equal(t, text, string(joined), "nothing lost, invalid UTF-8 included")
	}
}

func TestJSONStringChunksNeverSplitAnEscape(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	exact, err := budget.Exact("")
	require.NoError(t, err)
	for i := range 40 {
		text := randomText(rng, 100+rng.IntN(3000))
		quoted, err := json.Marshal(text) // escapes <, >, & as \u003c...: more escapes to respect
		require.NoError(t, err)
		body := string(quoted[1 : len(quoted)-1])
		if i%2 == 0 {
			body += `\ud800 lone \udc80 surrogates \ud83d\ude00 pair \/ slash \u00e9`
		}
		if body == "" {
			continue
		}
		limit := 6 + rng.IntN(120)
		var joined strings.Builder
		for _, s := range cutAll(t, body, chunk.FormJSONString, &chunk.Options{MaxTokens: limit}) {
			part := body[s.Start:s.End]
			assert.True(t, json.Valid([]byte(`"`+part+`"`)), "every chunk is a string body: %q", part)
			assert.Equal(t, exact.Count(part), s.Tokens)
			assert.LessOrEqual(t, s.Tokens, limit)
			joined.WriteString(part)
		}
		assert.Equal(t, body, joined.String(), "the chunks are the body, escapes as written")
	}
}

func TestACutterContinuesFromAWindowOfTheText(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	rounds := 20
	if testing.Short() {
		rounds = 4 // under -race (test.sh): every text still cut from windows all along; 20 in the section without -race
	}
	for range rounds {
		text := randomText(rng, 20000+rng.IntN(20000))
		if text == "" {
			continue
		}
		const limit = 40
		full, err := chunk.NewCutter(text, chunk.FormEscaped, &chunk.Options{MaxTokens: limit})
		require.NoError(t, err)
		opts := &chunk.Options{MaxTokens: limit, Kind: full.Kind()}
		for at := 0; at < len(text); {
			want, err := full.Next(at)
			require.NoError(t, err)
			from, to := chunk.Window(len(text), at, limit)
			win, err := chunk.NewCutter(text[from:to], chunk.FormEscaped, opts)
			require.NoError(t, err)
			got, err := win.Next(at - from)
			require.NoError(t, err)
			assert.Equal(t, want.End, got.End+from, "a window gives the chunk the whole text gives")
			assert.Equal(t, want.Tokens, got.Tokens)
			at = want.End
		}
	}
}
