package mcpgoclientfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
)

// bigLines is about 30,000 tokens of lines.
func bigLines() string {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "line %d: the guest booked a room with a view\n", i)
	}
	return b.String()
}

// manyValues completes every prompt argument with 2,000 values.
type manyValues []string

func (v manyValues) CompletePromptArgument(context.Context, string, mcp.CompleteArgument, mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: v, Total: len(v)}, nil
}

func TestPromptsAndCompletionsPassTheGate(t *testing.T) {
	const hardCap = 2000
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run("a huge prompt and a huge completion in "+string(mode)+" mode come within the cap", func(t *testing.T) {
			values := strings.Split(bigLines(), "\n")[:2000]
			s := server.NewMCPServer("edges", "1", server.WithPromptCapabilities(false), server.WithCompletions(),
				server.WithPromptCompletionProvider(manyValues(values)))
			s.AddPrompt(mcp.NewPrompt("big_prompt"), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(bigLines())}}}, nil
			})
			cg := newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: hardCap, Mode: mode})
			c := connect(t, s, cg)
			ctx := context.Background()

			p, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "big_prompt"}})
			require.NoError(t, err)
			n := 0
			for _, m := range p.Messages {
				if tc, ok := m.Content.(mcp.TextContent); ok {
					n += exact.Count(tc.Text)
				}
			}
			assert.LessOrEqual(t, n, hardCap, "a prompt within the hard cap")
			pr, err := json.Marshal(p)
			require.NoError(t, err)
			first, err := follow.PromptBody(pr)
			require.NoError(t, err)
			got, _, err := follow.Rebuild(first, func(cursor string, part int64) ([]byte, error) {
				res := callTool(t, ctx, c, "ctxfit_next", map[string]any{"cursor": cursor})
				require.False(t, res.IsError, "%v", texts(res))
				assert.LessOrEqual(t, exact.Count(strings.Join(texts(res), "\n")), hardCap)
				return body(t, res), nil
			})
			require.NoError(t, err)
			assert.Equal(t, bigLines(), string(got), "the prompt rebuilt, byte for byte")

			comp, err := c.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{Ref: mcp.PromptReference{Type: "ref/prompt", Name: "big_prompt"},
				Argument: mcp.CompleteArgument{Name: "topic", Value: "x"}}})
			require.NoError(t, err)
			require.NotEmpty(t, comp.Completion.Values)
			assert.Equal(t, values[:len(comp.Completion.Values)], comp.Completion.Values, "the first values, as they were")
			assert.True(t, comp.Completion.HasMore)
			assert.LessOrEqual(t, exact.Count(strings.Join(comp.Completion.Values, "\n")), hardCap, "a completion within the hard cap")
		})
	}
}
