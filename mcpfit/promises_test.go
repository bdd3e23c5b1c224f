package mcpfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/internal/testing/shapes"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// TestEveryShapeKeepsBothPromisesOverMCP returns generated responses of
// every shape from a tool, as text and (for JSON objects) as structured
// content, through the guard with random settings and arguments of up to
// 20 KB, and follows every cursor and part with ctxfit_next: nothing over
// the hard cap, and the rebuilt text is the tool's, character for
// character.
func TestEveryShapeKeepsBothPromisesOverMCP(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 30))
	links := 0
	t.Cleanup(func() { assert.Positive(t, links, "some shaped results link their original") })
	sizes := shapes.Sizes(8000, 100000)
	for i := range len(sizes) * len(shapes.Shapes) {
		resp := shapes.Generate(r, i, sizes[i/len(shapes.Shapes)])
		cfg := ctxfit.Config{Threshold: 500 + r.IntN(3000), ChunkTokens: 200 + r.IntN(2000),
			Mode:         []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay}[r.IntN(2)],
			ShapeTimeout: ctxfit.Duration(time.Hour)} // a test of what is sent, not of when
		cfg.HardCap = cfg.Threshold + ctxfit.MinHardCap + r.IntN(2000)
		start, _, ok := rawjson.Root(resp.Body)
		var decoded any
		// Structured content must decode for the SDK's client: not
		// numbers beyond float64, nor deeper than encoding/json goes.
		structured := ok && resp.Body[start] == '{' && r.IntN(2) == 0 && json.Unmarshal(resp.Body, &decoded) == nil
		t.Run(fmt.Sprintf("%s of %d bytes, %s mode, structured %v", resp.Name, len(resp.Body), cfg.Mode, structured), func(t *testing.T) {
			tool := func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
				res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(resp.Body)}}}
				if structured {
					res.StructuredContent = json.RawMessage(resp.Body)
				}
				return res, nil, nil
			}
			s := mcp.NewServer(&mcp.Implementation{Name: "shapes", Version: "1"}, nil)
			mcp.AddTool(s, &mcp.Tool{Name: "shape"}, tool)
			require.NoError(t, mcpfit.Install(s, newGuard(t, cfg), nil))
			raw := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "1"}, nil)
			mcp.AddTool(raw, &mcp.Tool{Name: "shape"}, tool)
			cs, rs := connect(t, s), connect(t, raw)

			args := map[string]any{"q": strings.Repeat("a", r.IntN(20000))}
			want := mcpfittest.Texts(t, mcpfittest.Call(t, rs, "shape", args))[0]
			if structured {
				want = bodyOf(t, mcpfittest.Call(t, rs, "shape", args))
			}
			first := mcpfittest.Call(t, cs, "shape", args)
			require.False(t, first.IsError, "%v", mcpfittest.Texts(t, first))
			assert.LessOrEqual(t, mcpfittest.Tokens(t, first), cfg.HardCap, "nothing over the hard cap")
			if first.Meta["dev.ctxfit/strategy"] == nil {
				assert.Equal(t, want, bodyOf(t, first), "a pass-through is the result itself")
				return
			}
			if link := mcpfittest.Original(first); link != nil {
				got := mcpfittest.ReadLink(t, cs, link.URI, cfg.HardCap) // not UTF-8: its bytes
				var whole mcp.CallToolResult
				require.NoError(t, json.Unmarshal([]byte(got), &whole), "the link reads the whole result back")
				if structured {
					assert.JSONEq(t, want, string(mustJSON(t, whole.StructuredContent)), "the link reads the original back")
				} else {
					require.NotEmpty(t, whole.Content)
					assert.Equal(t, want, whole.Content[0].(*mcp.TextContent).Text, "the link reads the original back, character for character")
				}
				links++
			}
			if first.Meta["dev.ctxfit/strategy"] == "summary" {
				first = mcpfittest.Call(t, cs, "ctxfit_details", map[string]any{"cursor": mcpfittest.DetailsCursor(first), "fields": "all"})
				require.False(t, first.IsError, "%v", mcpfittest.Texts(t, first))
				if s := first.Meta["dev.ctxfit/strategy"]; s == nil || s == "passthrough" {
					assert.Equal(t, want, bodyOf(t, first), "the whole record, as it was")
					return
				}
			}
			got := mcpfittest.Rebuild(t, cs, first, cfg.HardCap)
			if structured {
				// The SDK's client decodes structured content into Go
				// values: compare them.
				assert.JSONEq(t, want, got, "nothing lost")
				return
			}
			assert.Equal(t, want, got, "nothing lost, character for character")
		})
	}
}
