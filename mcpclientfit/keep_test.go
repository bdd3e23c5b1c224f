package mcpclientfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/mcpclientfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/store"
)

// recall follows the Recall of a cleared result through the guard, as a
// model would (ctxfit_next with its arguments, then every cursor and
// part), checking each response against the hard cap, and returns what it
// rebuilds: the content itself, a JSON object or array from its pages, a
// text from its chunks, which travel as text.
func recall(t *testing.T, ctx context.Context, cg *mcpclientfit.Guard, r conversation.Recall, hardCap int) string {
	t.Helper()
	call := func(args json.RawMessage) []byte {
		res, err := cg.CallTool(ctx, r.Tool, args)
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
		assert.LessOrEqual(t, mcpfittest.Tokens(t, res), hardCap)
		raw, err := json.Marshal(res)
		require.NoError(t, err)
		body, err := follow.ResultBody(raw)
		require.NoError(t, err)
		return body
	}
	first := call(json.RawMessage(r.Arguments))
	out, _, err := follow.Rebuild(first, func(cursor string, part int64) ([]byte, error) {
		args, _ := json.Marshal(map[string]any{"cursor": cursor, "part": part})
		if part == 0 {
			args, _ = json.Marshal(map[string]any{"cursor": cursor})
		}
		return call(args), nil
	})
	require.NoError(t, err)
	return string(out)
}

// TestClearedResultsAreRecoverableThroughCtxfitNext: conversations with
// large tool results of every shape (JSON lists, objects, logs, prose,
// small JSON, text with escapes) fitted with the guard as Keeper stay
// within the budget, and every result they clear comes back byte for byte
// through ctxfit_next, each response within the hard cap, for the subject
// it was cleared for only.
func TestClearedResultsAreRecoverableThroughCtxfitNext(t *testing.T) {
	g := newGuard(t, ctxfit.Config{Threshold: 1500, HardCap: 2500})
	cg, err := mcpclientfit.New(g, nil)
	require.NoError(t, err)
	exact, err := budget.Exact(budget.O200KBase)
	require.NoError(t, err)
	contents := []string{
		corpus.JSON(300),
		`{"items":` + corpus.JSON(200) + `,"total":200}`,
		corpus.Log(400),
		corpus.Prose(9000),
		" " + corpus.JSON(100) + "\n", // JSON with space around it is text
		strings.Repeat("quote \" backslash \\ tab \t <tag> & ünïcödé 🎉\n", 300),
		`[1,2,3]`,
	}
	rng := rand.New(rand.NewPCG(7, 8))
	ctx := store.WithSubject(context.Background(), "session-1")
	cleared := 0
	for run := range 12 {
		var msgs []conversation.Message
		msgs = append(msgs, conversation.Message{Role: conversation.RoleSystem, Content: "You read files."})
		for turn := range 4 + rng.IntN(4) {
			msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: fmt.Sprintf("question %d", turn)})
			for c := range 1 + rng.IntN(3) {
				id := fmt.Sprintf("call_%d_%d", turn, c)
				msgs = append(msgs,
					conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: id, Type: "function",
						Function: conversation.FunctionCall{Name: "read_file", Arguments: `{}`}}}},
					conversation.Message{Role: conversation.RoleTool, ToolCallID: id, Content: contents[rng.IntN(len(contents))]})
			}
			msgs = append(msgs, conversation.Message{Role: conversation.RoleAssistant, Content: "Here is what I found."})
		}
		msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: "And now?"})
		maxTokens := 4000 + rng.IntN(20000)
		r, err := conversation.FitContext(ctx, msgs, maxTokens, &conversation.Options{Keeper: cg, MaxMessages: -1, ClearAbove: 200})
		require.NoError(t, err, "run %d", run)
		assert.LessOrEqual(t, r.TokensAfter, maxTokens)
		assert.Equal(t, conversation.Tokens(exact, r.Messages), r.TokensAfter)
		for _, c := range r.Cleared {
			cleared++
			assert.Equal(t, "ctxfit_next", c.Recall.Tool)
			got := recall(t, ctx, cg, c.Recall, 2500)
			assert.Equal(t, msgs[c.Index].Content, got, "run %d: cleared result %d comes back byte for byte", run, c.Index)
		}
	}
	require.Greater(t, cleared, 10)

	// Another subject cannot read them.
	r, err := conversation.FitContext(ctx, []conversation.Message{
		{Role: conversation.RoleUser, Content: "q"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "a", Type: "function", Function: conversation.FunctionCall{Name: "read_file"}}}},
		{Role: conversation.RoleTool, ToolCallID: "a", Content: corpus.Log(300)},
		{Role: conversation.RoleAssistant, Content: "done"},
		{Role: conversation.RoleUser, Content: "next"},
	}, 500, &conversation.Options{Keeper: cg})
	require.NoError(t, err)
	require.Len(t, r.Cleared, 1)
	res, err := cg.CallTool(store.WithSubject(context.Background(), "session-2"), "ctxfit_next", json.RawMessage(r.Cleared[0].Recall.Arguments))
	require.NoError(t, err)
	assert.True(t, res.IsError)
}

func TestKeepFailsInReplayModeAndTheResultStays(t *testing.T) {
	cg, err := mcpclientfit.New(newGuard(t, ctxfit.Config{Mode: ctxfit.ModeReplay}), nil)
	require.NoError(t, err)
	_, err = cg.Keep(context.Background(), "read_file", corpus.Log(100))
	require.Error(t, err)
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, Content: "q"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "a", Type: "function", Function: conversation.FunctionCall{Name: "read_file"}}}},
		{Role: conversation.RoleTool, ToolCallID: "a", Content: corpus.Log(300)},
		{Role: conversation.RoleAssistant, Content: "done"},
		{Role: conversation.RoleUser, Content: "next"},
	}
	r, err := conversation.FitContext(context.Background(), msgs, 500, &conversation.Options{Keeper: cg})
	require.NoError(t, err)
	assert.Empty(t, r.Cleared)
	assert.Equal(t, []int{4}, r.Kept, "the old turn is dropped instead")
}
