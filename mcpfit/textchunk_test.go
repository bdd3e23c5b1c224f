package mcpfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/hostile"
	"github.com/ctxfit/ctxfit/internal/testing/textgen"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// clientTokens counts a result as a client reads it ([hostile.Tokens]).
func clientTokens(t *testing.T, res any) int {
	t.Helper()
	b, err := json.Marshal(res)
	require.NoError(t, err)
	n, err := hostile.Tokens(b)
	require.NoError(t, err)
	return n
}

// TestEveryTextComesBackWholeAtMostOnePointThreeTimesItsTokens reads a
// text of every kind through mcpfit and the SDK's client, following every
// cursor: every answer within the hard cap as the client counts it, each
// chunk a text block holding the text as it is (never escaped twice),
// the chunks the text byte for byte, and all of them at most 1.3 times
// the original's tokens plus [textgen.ResponseEnvelope] an answer.
func TestEveryTextComesBackWholeAtMostOnePointThreeTimesItsTokens(t *testing.T) {
	size := 20_000
	if testing.Short() {
		size = 12_000 // 8,000 bytes of prose cost less whole than chunked: it passes as it came
	}
	const th, hc = 1500, 4000
	r := rand.New(rand.NewPCG(24, 5))
	for _, kind := range textgen.Kinds {
		text := textgen.Text(r, kind, size)
		t.Run(fmt.Sprintf("%s of %d bytes", kind, len(text)), func(t *testing.T) {
			add := func(s *mcp.Server) {
				mcp.AddTool(s, &mcp.Tool{Name: "read", Annotations: readOnly}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
				})
			}
			s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
			add(s)
			require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{Threshold: th, HardCap: hc}), nil))
			raw := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "1"}, nil)
			add(raw)
			cs, rawCS := connect(t, s), connect(t, raw)

			original := clientTokens(t, mcpfittest.Call(t, rawCS, "read", nil))
			res := mcpfittest.Call(t, cs, "read", nil)
			require.Equal(t, "chunking", res.Meta[mcpcore.MetaStrategy])
			var answers []*mcp.CallToolResult
			tokens := 0
			for {
				require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
				n := clientTokens(t, res)
				require.LessOrEqual(t, n, hc, "answer %d within the hard cap as the client counts it", len(answers))
				tokens += n
				answers = append(answers, res)
				next := mcpfittest.NextCursor(res)
				if next == "" {
					break
				}
				require.Less(t, len(answers), 500)
				res = mcpfittest.Call(t, cs, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
			}
			whole := ""
			for _, c := range mcpfittest.ChunkTexts(t, answers) {
				whole += c
			}
			require.Equal(t, text, whole, "the chunks, text blocks as they are, rebuild the text byte for byte")
			assert.LessOrEqual(t, tokens, original*13/10+textgen.ResponseEnvelope*len(answers),
				"%d answers read at most 1.3x the original's %d tokens plus %d an answer", len(answers), original, textgen.ResponseEnvelope)
			t.Logf("%d answers, %d tokens for %d (%.2fx)", len(answers), tokens, original, float64(tokens)/float64(original))
		})
	}
}
