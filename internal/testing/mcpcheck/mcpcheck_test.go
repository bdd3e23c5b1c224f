package mcpcheck_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/mcpcheck"
)

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestAResultTheGateCutIsRebuiltByFollowingItsByteRangeLink(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Threshold: 500, HardCap: 1000, Secret: "0123456789abcdef0123456789abcdef"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	s := &mcpcore.Shaper{Guard: g, Names: mcpcore.Names{}.WithDefaults()}
	session := mcpcheck.Session{Read: func(uri string) (json.RawMessage, error) {
		return s.ReadResource(context.Background(), "s", uri, nil)
	}}
	var text strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&text, "line %d: café, 東京 <&> \"quoted\"\n", i)
	}
	links := make([]any, 800)
	for i := range links {
		links[i] = map[string]any{"type": "resource_link", "uri": fmt.Sprintf("file:///srv/file-%05d.txt", i), "name": fmt.Sprintf("file-%05d.txt", i)}
	}
	structured := mustJSON(t, map[string]any{"lines": strings.Split(text.String(), "\n")})
	for _, tc := range []struct {
		name string
		raw  json.RawMessage
	}{
		{"a result of one text", mustJSON(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": text.String()}}})},
		{"a result of many resource_link blocks", mustJSON(t, map[string]any{"content": links})},
		{"a result of texts and an image", mustJSON(t, map[string]any{"content": []any{
			map[string]any{"type": "text", "text": text.String()[:20000]},
			map[string]any{"type": "image", "mimeType": "image/png", "data": strings.Repeat("iVBO", 2000)},
			map[string]any{"type": "text", "text": text.String()[20000:40000]},
		}})},
		{"a structured result", mustJSON(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(structured)}},
			"structuredContent": json.RawMessage(structured)})},
	} {
		t.Run(tc.name+" cut by the gate is rebuilt block by block", func(t *testing.T) {
			cut, err := s.Gate(context.Background(), mcpcore.Call{Tool: "t", Subject: "s"}, tc.raw, nil) // shaping failed
			require.NoError(t, err)
			var meta struct {
				Meta map[string]any `json:"_meta"`
			}
			require.NoError(t, json.Unmarshal(cut, &meta))
			require.Equal(t, true, meta.Meta[mcpcore.MetaGate], "the gate cut it")
			read := func(uri string) ([]byte, error) { return mcpcheck.ReadRanges(t, session, uri) }
			blocks, st, err := follow.Blocks(cut, nil, read)
			require.NoError(t, err)
			var want struct {
				Content    json.RawMessage `json:"content"`
				Structured json.RawMessage `json:"structuredContent"`
			}
			require.NoError(t, json.Unmarshal(tc.raw, &want))
			if want.Structured != nil {
				require.NotNil(t, st, "the structured content rebuilt")
				assert.Equal(t, string(want.Structured), string(st), "the structured content, byte for byte")
				return
			}
			assert.Empty(t, follow.SameBlocks(blocks, want.Content), "every block rebuilt, in its place")
		})
	}
}
