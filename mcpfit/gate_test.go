package mcpfit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// bigText is some 30,000 tokens of lines, 15 times the tests' hard cap;
// under -short (test.sh's -race section) a third of it, still far over the
// cap (test.sh runs it whole without -race).
func bigText() string {
	lines := 3000
	if testing.Short() {
		lines = 1000
	}
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "line %d: the guest booked a room with a view\n", i)
	}
	return b.String()
}

func TestTheServersOwnReadsPromptsAndCompletionsPassTheGate(t *testing.T) {
	const hardCap = 2000
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			lines := strings.Split(bigText(), "\n")
			values := lines[:min(2000, len(lines)-1)] // 1,000 under -short: still far over the cap
			s := mcp.NewServer(&mcp.Implementation{Name: "edges", Version: "1"}, &mcp.ServerOptions{
				CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
					return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
				}})
			s.AddResource(&mcp.Resource{URI: "file:///big.txt", Name: "big", MIMEType: "text/plain"},
				func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///big.txt", MIMEType: "text/plain", Text: bigText()}}}, nil
				})
			s.AddPrompt(&mcp.Prompt{Name: "big_prompt"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: bigText()}}}}, nil
			})
			require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: hardCap, Mode: mode}), nil))
			cs := connect(t, s)
			ctx := context.Background()

			r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///big.txt"})
			require.NoError(t, err)
			mcpfittest.CheckRebuilt(t, cs, r, bigText(), hardCap)

			p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "big_prompt"})
			require.NoError(t, err)
			mcpfittest.CheckRebuilt(t, cs, p, bigText(), hardCap)

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
