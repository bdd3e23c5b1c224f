package mcpclientfit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/mcpclientfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// bigLines is about 30,000 tokens of lines.
func bigLines() string {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "line %d: the guest booked a room with a view\n", i)
	}
	return b.String()
}

func TestPromptsAndCompletionsPassTheGate(t *testing.T) {
	const hardCap = 2000
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run("a huge prompt and a huge completion in "+string(mode)+" mode come within the cap", func(t *testing.T) {
			values := strings.Split(bigLines(), "\n")[:2000]
			s := mcp.NewServer(&mcp.Implementation{Name: "edges", Version: "1"}, &mcp.ServerOptions{
				CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
					return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
				}})
			s.AddPrompt(&mcp.Prompt{Name: "big_prompt"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: bigLines()}}}}, nil
			})
			cg, err := mcpclientfit.New(newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: hardCap, Mode: mode}), nil)
			require.NoError(t, err)
			cs := connect(t, s, cg)
			ctx := context.Background()

			p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "big_prompt"})
			require.NoError(t, err)
			mcpfittest.CheckRebuilt(t, cs, p, bigLines(), hardCap)

			comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "big_prompt"},
				Argument: mcp.CompleteParamsArgument{Name: "topic", Value: "x"}})
			require.NoError(t, err)
			require.NotEmpty(t, comp.Completion.Values)
			assert.Equal(t, values[:len(comp.Completion.Values)], comp.Completion.Values, "the first values, as they were")
			assert.True(t, comp.Completion.HasMore)
			assert.LessOrEqual(t, mcpfittest.Count(strings.Join(comp.Completion.Values, "\n")), hardCap, "a completion within the hard cap")
		})
	}
}
