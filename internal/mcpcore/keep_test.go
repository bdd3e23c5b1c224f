package mcpcore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/examples/corpus"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
)

// next calls the continuation tool and returns the text of its first
// block, requiring that it is no error.
func next(t *testing.T, s *mcpcore.Shaper, subject string, args json.RawMessage) []byte {
	t.Helper()
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(s.Next(context.Background(), subject, args, nil), &r))
	require.False(t, r.IsError, "%v", r.Content)
	return []byte(r.Content[0].Text)
}

// TestKeptContentOpensAsPartOneOfItsSnapshot pins what Keep relies on: a
// resource token of the Guard, with part 1, opens the value at offset 1 of
// the kept snapshot, and its cursors lead through the rest.
func TestKeptContentOpensAsPartOneOfItsSnapshot(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: strings.Repeat("k", 32), Threshold: 1000, HardCap: 2000}})
	require.NoError(t, err)
	defer g.Close()
	s := &mcpcore.Shaper{Guard: g}
	for name, content := range map[string]string{
		"a list":              corpus.JSON(200),
		"an object":           `{"rows":` + corpus.JSON(100) + `}`,
		"a log":               corpus.Log(300),
		"a short text":        "short",
		"a number is text":    "42",
		"spaced JSON is text": " [1] ",
	} {
		t.Run(name+" comes back whole", func(t *testing.T) {
			args, err := s.Keep(context.Background(), "subject", content)
			require.NoError(t, err)
			assert.Contains(t, string(args), `"part":1`)
			first := next(t, s, "subject", args)
			got, _, err := follow.Rebuild(first, func(cursor string, part int64) ([]byte, error) {
				in, _ := json.Marshal(mcpcore.NextInput{Cursor: cursor, Part: part})
				return next(t, s, "subject", in), nil
			})
			require.NoError(t, err)
			if got[0] == '"' {
				var str string
				require.NoError(t, json.Unmarshal(got, &str))
				got = []byte(str)
			}
			assert.Equal(t, content, string(got))
		})
	}
	_, err = s.Keep(context.Background(), "subject", "\xff invalid")
	assert.Error(t, err)
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
