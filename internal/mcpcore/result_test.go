package mcpcore_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))))
	return b.Bytes()
}

func wavOf(seconds float64) []byte {
	const rate = 8000 // bytes a second: 8 kHz, 8-bit mono
	n := int(seconds * rate)
	b := make([]byte, 44+n)
	copy(b, "RIFF")
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint32(b[28:], rate)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(n))
	return b
}

func TestMediaCountsWhatAModelReads(t *testing.T) {
	var rule mcpcore.MediaRule
	for _, tc := range []struct {
		name string
		w, h int
		want int
	}{
		{"a small image: width x height / 750", 300, 250, 100},
		{"a large image is scaled to 1,568 pixels on its long side, and costs at most 1,600", 4000, 3000, 1600},
		{"a thin image", 1568, 10, 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := rule.ImageTokens(pngOf(t, tc.w, tc.h))
			require.True(t, ok)
			assert.Equal(t, tc.want, got)
		})
	}
	_, ok := rule.ImageTokens([]byte("not an image"))
	assert.False(t, ok)
	assert.Equal(t, 320, rule.AudioTokens(wavOf(10)), "32 tokens a second of audio")
	assert.Equal(t, 50, mcpcore.MediaRule{AudioTokensPerSecond: 5}.AudioTokens(wavOf(10)))
}

func newShaper(t *testing.T, cfg ctxfit.Config) *mcpcore.Shaper {
	t.Helper()
	cfg.Secret = "0123456789abcdef0123456789abcdef"
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	return &mcpcore.Shaper{Guard: g, Names: mcpcore.Names{}.WithDefaults()}
}

// content reads the blocks of a result's wire JSON.
func content(t *testing.T, raw json.RawMessage) []map[string]any {
	t.Helper()
	var r struct {
		Content []map[string]any `json:"content"`
	}
	require.NoError(t, json.Unmarshal(raw, &r))
	return r.Content
}

func TestAResultUnderTheThresholdIsTheResultItself(t *testing.T) {
	s := newShaper(t, ctxfit.Config{})
	raw := json.RawMessage(`{"content":[{"type":"text","text":"small"},{"type":"image","data":"` +
		base64.StdEncoding.EncodeToString(pngOf(t, 100, 100)) + `","mimeType":"image/png"}]}`)
	got, err := s.ShapeResult(context.Background(), mcpcore.Call{Tool: "t"}, raw)
	require.NoError(t, err)
	assert.False(t, got.Shaped)
	assert.Equal(t, raw, got.Result)
}

func TestEachLargeTextBlockIsShapedWithItsShareOfTheBudget(t *testing.T) {
	s := newShaper(t, ctxfit.Config{Threshold: 4000, HardCap: 12000})
	big := strings.Repeat("a line of a long report about the guest and the booking\n", 3000)
	blocks := []map[string]any{{"type": "text", "text": "header"}, {"type": "text", "text": big}, {"type": "text", "text": big + "!"}}
	raw, _ := json.Marshal(map[string]any{"content": blocks, "_meta": map[string]any{"tool/own": 1}})
	got, err := s.ShapeResult(context.Background(), mcpcore.Call{Tool: "t"}, raw)
	require.NoError(t, err)
	require.True(t, got.Shaped)
	require.Len(t, got.Results, 2, "each large block on its own")
	c := content(t, got.Result)
	assert.Equal(t, "header", c[0]["text"], "the small block stays")
	exact, _ := budget.Exact("")
	total := 0
	links := 0
	for _, b := range c {
		if b["type"] == "resource_link" {
			links++
			j, _ := json.Marshal(b)
			total += exact.Count(string(j))
			continue
		}
		total += exact.Count(b["text"].(string))
	}
	assert.LessOrEqual(t, total, 12000, "the blocks together stay within the hard cap")
	assert.Equal(t, 1, links, "one link to the whole original")
	var meta struct {
		Meta map[string]any `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(got.Result, &meta))
	assert.EqualValues(t, 1, meta.Meta["tool/own"], "the tool's own _meta stays")
	assert.NotEmpty(t, meta.Meta[mcpcore.MetaNextCursor])
	assert.NotEmpty(t, meta.Meta[mcpcore.MetaMoreCursors], "the second block's cursor")
}

func TestTooManyLargeTextBlocksArePagedAsTheContentList(t *testing.T) {
	s := newShaper(t, ctxfit.Config{Threshold: 1000, HardCap: 2000})
	var blocks []map[string]any
	for range 12 {
		blocks = append(blocks, map[string]any{"type": "text", "text": strings.Repeat("word ", 3000)})
	}
	raw, _ := json.Marshal(map[string]any{"content": blocks})
	got, err := s.ShapeResult(context.Background(), mcpcore.Call{Tool: "t"}, raw)
	require.NoError(t, err)
	require.Len(t, got.Results, 1)
	c := content(t, got.Result)
	require.Len(t, c, 3)
	assert.Equal(t, "text", c[0]["type"], "a page of the content list")
	assert.Contains(t, c[0]["text"], `"items":[`)
	assert.Equal(t, "text", c[1]["type"], "its guidance line")
	assert.Equal(t, "resource_link", c[2]["type"])
	assert.EqualValues(t, len(raw), c[2]["size"], "the original: the whole result")
	assert.LessOrEqual(t, got.Tokens, 2000)
}

func TestBlockBodyReadsTheBodyAContinuationReplays(t *testing.T) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"a"},{"type":"image","data":"aGVsbG8=","mimeType":"image/png"},{"type":"text","text":"b"}]}`)
	for blk, want := range map[int]string{0: "a\nb", 1: "a", 2: "hello", 3: "b"} {
		got, _, err := mcpcore.BlockBody(raw, blk)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	_, _, err := mcpcore.BlockBody(raw, 9)
	assert.Error(t, err)
	structured := json.RawMessage(`{"content":[{"type":"text","text":"{}"}],"structuredContent":{"x":1}}`)
	got, ct, err := mcpcore.BlockBody(structured, 0)
	require.NoError(t, err)
	assert.JSONEq(t, `{"x":1}`, string(got))
	assert.Equal(t, "application/json", ct)
}
