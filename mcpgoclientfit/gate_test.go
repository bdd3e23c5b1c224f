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
	"github.com/ctxfit/ctxfit/internal/testing/mcpcheck"
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
			raw, err := json.Marshal(p)
			require.NoError(t, err)
			mcpcheck.Rebuilt(t, session(c), raw, bigLines(), hardCap)

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
