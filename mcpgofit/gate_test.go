package mcpgofit_test

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
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/mcpgofit"
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

func TestTheServersOwnReadsAndPromptsPassTheGate(t *testing.T) {
	const hardCap = 2000
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			s := server.NewMCPServer("edges", "1", server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false))
			s.AddResource(mcp.NewResource("file:///big.txt", "big", mcp.WithMIMEType("text/plain")),
				func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
					return []mcp.ResourceContents{mcp.TextResourceContents{URI: "file:///big.txt", MIMEType: "text/plain", Text: bigText()}}, nil
				})
			s.AddPrompt(mcp.NewPrompt("big_prompt"), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(bigText())}}}, nil
			})
			require.NoError(t, mcpgofit.Install(s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: hardCap, Mode: mode}), nil))
			c := connect(t, s)
			ctx := context.Background()

			r, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "file:///big.txt"}})
			require.NoError(t, err)
			raw, err := json.Marshal(r)
			require.NoError(t, err)
			mcpcheck.Rebuilt(t, session(c), raw, bigText(), hardCap)

			p, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "big_prompt"}})
			require.NoError(t, err)
			raw, err = json.Marshal(p)
			require.NoError(t, err)
			mcpcheck.Rebuilt(t, session(c), raw, bigText(), hardCap)
		})
	}
}

// completions completes every prompt argument with values.
type completions []string

func (c completions) CompletePromptArgument(context.Context, string, mcp.CompleteArgument, mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: c, Total: len(c)}, nil
}

func TestTheServersOwnCompletionsPassTheGate(t *testing.T) {
	const hardCap = 2000
	lines := strings.Split(bigText(), "\n")
	values := completions(lines[:min(2000, len(lines)-1)]) // far over the cap
	s := server.NewMCPServer("edges", "1", server.WithPromptCapabilities(false), server.WithCompletions(),
		server.WithPromptCompletionProvider(values))
	s.AddPrompt(mcp.NewPrompt("big_prompt", mcp.WithArgument("topic")), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	require.NoError(t, mcpgofit.Install(s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: hardCap}), nil))
	c := connect(t, s)
	comp, err := c.Complete(context.Background(), mcp.CompleteRequest{Params: mcp.CompleteParams{
		Ref: mcp.PromptReference{Type: "ref/prompt", Name: "big_prompt"}, Argument: mcp.CompleteArgument{Name: "topic", Value: "x"}}})
	require.NoError(t, err)
	require.NotEmpty(t, comp.Completion.Values)
	assert.Less(t, len(comp.Completion.Values), len(values), "some values left out")
	assert.Equal(t, []string(values[:len(comp.Completion.Values)]), comp.Completion.Values, "the first values, as they were")
	assert.True(t, comp.Completion.HasMore)
	assert.LessOrEqual(t, mcpfittest.Count(strings.Join(comp.Completion.Values, "\n")), hardCap, "a completion within the hard cap")
}
