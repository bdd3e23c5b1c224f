package mcpcore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
)

// next calls the continuation tool and returns its result, requiring
// that it is no error.
func next(t *testing.T, s *mcpcore.Shaper, subject string, args json.RawMessage) json.RawMessage {
	t.Helper()
	raw := s.Next(context.Background(), subject, args, nil)
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(raw, &r))
	require.False(t, r.IsError, "%v", r.Content)
	return raw
}

// recallOf follows a recall as a client that wants everything would:
// the continuation tool with args, then every cursor and part. It returns
// what it rebuilds, the results it read, and what a model reads of them:
// the texts of their blocks, a result's joined by newlines.
func recallOf(t *testing.T, s *mcpcore.Shaper, subject string, args json.RawMessage) (string, []json.RawMessage, []string) {
	t.Helper()
	var results []json.RawMessage
	call := func(args json.RawMessage) []byte {
		raw := next(t, s, subject, args)
		results = append(results, raw)
		body, err := follow.ResultBody(raw)
		require.NoError(t, err)
		return body
	}
	got, _, err := follow.Rebuild(call(args), func(cursor string, part int64) ([]byte, error) {
		in, _ := json.Marshal(mcpcore.NextInput{Cursor: cursor, Part: part})
		return call(in), nil
	})
	require.NoError(t, err)
	var read []string
	for _, raw := range results {
		var r struct{ Content []struct{ Text string } }
		require.NoError(t, json.Unmarshal(raw, &r))
		texts := make([]string, len(r.Content))
		for i, c := range r.Content {
			texts[i] = c.Text
		}
		read = append(read, strings.Join(texts, "\n"))
	}
	return string(got), results, read
}

// TestKeptContentComesBackWhole: what Keep keeps, the continuation tool
// gives back, and following every cursor and part rebuilds it byte for
// byte: a JSON object or array as itself, any other text as text.
func TestKeptContentComesBackWhole(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: strings.Repeat("k", 32), Threshold: 1000, HardCap: 2000}})
	require.NoError(t, err)
	defer g.Close()
	s := &mcpcore.Shaper{Guard: g}
	for name, content := range map[string]string{
		"a list":              corpus.JSON(200),
		"an object":           `{"rows":` + corpus.JSON(100) + `}`,
		"a log":               corpus.Log(300),
		"a short text":        "short",
		"an empty text":       "",
		"a number is text":    "42",
		"spaced JSON is text": " [1] ",
	} {
		t.Run(name+" comes back whole", func(t *testing.T) {
			args, err := s.Keep(context.Background(), "subject", content)
			require.NoError(t, err)
			got, _, _ := recallOf(t, s, "subject", args)
			assert.Equal(t, content, got)
		})
	}
	_, err = s.Keep(context.Background(), "subject", "\xff invalid")
	assert.Error(t, err)
}

// TestARecallOfATextCostsTheTextAndAGuidanceLineAChunk: a kept text comes
// back as text, not escaped again in a JSON envelope: what a model reads
// of a recall, every answer's texts, costs at most the text and a small
// envelope (a guidance line) per answer; each answer is within the hard
// cap, and the chunks rebuild the text byte for byte.
func TestARecallOfATextCostsTheTextAndAGuidanceLineAChunk(t *testing.T) {
	const hardCap = 2000
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: strings.Repeat("k", 32), Threshold: 1500, HardCap: hardCap}})
	require.NoError(t, err)
	defer g.Close()
	s := &mcpcore.Shaper{Guard: g}
	exact, err := budget.Exact(budget.O200KBase)
	require.NoError(t, err)
	escapes := strings.Repeat("say \"hi\"\tC:\\path\\to <tag> & \u2028 done\n", 30)
	cjk := strings.Repeat("文脈の窓に収まるように、ツールの結果を分割します。\n", 40)
	for name, content := range map[string]string{
		"prose that fits":               corpus.Prose(3000),
		"text full of escapes":          escapes,
		"CJK text":                      cjk,
		"long prose in chunks":          corpus.Prose(24000),
		"a long log in chunks":          corpus.Log(400),
		"escapes in chunks":             strings.Repeat(escapes, 8),
		"CJK in chunks":                 strings.Repeat(cjk, 6),
		"a transcript of dropped turns": "user: read 1\n\nassistant: \n[called read_doc (call_1) with {\"n\":1}]\n\ntool (answer to call_1): " + corpus.Prose(2000) + "\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			args, err := s.Keep(context.Background(), "subject", content)
			require.NoError(t, err)
			got, results, read := recallOf(t, s, "subject", args)
			require.Equal(t, content, got, "byte for byte")
			texts, lines, cost := 0, 0, 0
			for i, raw := range results {
				var r struct {
					Content []struct {
						Text string
						Meta map[string]any `json:"_meta"`
					}
				}
				require.NoError(t, json.Unmarshal(raw, &r))
				require.Len(t, r.Content, 2, "answer %d: the chunk, then its guidance line", i)
				assert.Contains(t, r.Content[0].Meta, mcpcore.MetaChunk, "answer %d says where its text lies", i)
				assert.Equal(t, true, r.Content[1].Meta[mcpcore.MetaGuidance])
				assert.LessOrEqual(t, exact.Count(string(raw)), hardCap, "answer %d", i)
				texts += exact.Count(r.Content[0].Text)
				lines += exact.Count(r.Content[1].Text)
				cost += exact.Count(read[i])
			}
			original := exact.Count(content)
			// The chunks cost the text: a token the text's tokenizer joins
			// across a chunk's edge may cost one more on each side.
			assert.LessOrEqual(t, texts, original+2*(len(results)-1), "the texts of %d answers", len(results))
			// The envelope: a guidance line an answer (its cursor most of it).
			assert.LessOrEqual(t, lines, 220*len(results), "the guidance lines of %d answers", len(results))
			// What a model reads: the texts and the lines, a newline apart.
			assert.LessOrEqual(t, cost, original+lines+3*len(results))
			t.Logf("%d tokens, read back in %d answers for %d tokens (%d of guidance)", original, len(results), cost, lines)
		})
	}
}

func TestShapeReadKeepsTheFormOfAReadResult(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: strings.Repeat("k", 32), Threshold: 1000, HardCap: 2000}})
	require.NoError(t, err)
	defer g.Close()
	s := &mcpcore.Shaper{Guard: g}
	text, _ := json.Marshal(corpus.Log(300))
	raw := json.RawMessage(`{"contents":[{"uri":"file:///a.log","mimeType":"text/plain","text":` + string(text) + `},` +
		`{"uri":"file:///b.bin","mimeType":"application/octet-stream","blob":"` + strings.Repeat("AAAA", 2000) + `"}],"_meta":{"own":1}}`)
	call := mcpcore.Call{Tool: mcpcore.ReadResourceTool, Arguments: mcpcore.ReadArguments("file:///a.log"), Subject: "s"}
	shaped, err := s.ShapeRead(context.Background(), call, raw)
	require.NoError(t, err)
	require.True(t, shaped.Shaped)
	var out struct {
		Contents []struct {
			URI, MimeType, Text string
			Meta                map[string]any `json:"_meta"`
		} `json:"contents"`
		Meta map[string]any `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(shaped.Result, &out))
	require.Len(t, out.Contents, 3)
	assert.Equal(t, "file:///a.log", out.Contents[0].URI)
	assert.True(t, strings.HasPrefix(corpus.Log(300), out.Contents[0].Text), "a chunk of the text, as it is")
	assert.Equal(t, "block", out.Contents[0].Meta[mcpcore.MetaShaped])
	assert.EqualValues(t, 0, out.Contents[0].Meta[mcpcore.MetaChunk].(map[string]any)["offset"], "where the chunk lies")
	assert.NotEmpty(t, out.Meta[mcpcore.MetaNextCursor])
	assert.Equal(t, true, out.Contents[1].Meta[mcpcore.MetaGuidance])
	assert.True(t, strings.HasPrefix(out.Contents[2].URI, mcpcore.ResourcePrefix))
	assert.Equal(t, "file:///b.bin", out.Contents[2].Meta[mcpcore.MetaHeldBack])
	assert.Equal(t, float64(1), out.Meta["own"])
	assert.Equal(t, "chunking", out.Meta[mcpcore.MetaStrategy])

	// A small read passes through as it is.
	small := json.RawMessage(`{"contents":[{"uri":"file:///c","text":"hi"}]}`)
	shaped, err = s.ShapeRead(context.Background(), call, small)
	require.NoError(t, err)
	assert.False(t, shaped.Shaped)
	assert.Equal(t, string(small), string(shaped.Result))

	tool, err := mcpcore.ReadAsToolResult(small)
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":[{"type":"resource","resource":{"uri":"file:///c","text":"hi"}}]}`, string(tool))
	uri, err := mcpcore.ReadURI(mcpcore.ReadArguments("file:///c"))
	require.NoError(t, err)
	assert.Equal(t, "file:///c", uri)
}
