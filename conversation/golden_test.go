package conversation_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/conversation"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestFittedConversationGolden pins the JSON of fitted messages: the
// OpenAI chat shape (role, content, tool_calls with id, type and function,
// tool_call_id), which clients send on as they are.
func TestFittedConversationGolden(t *testing.T) {
	msgs := []conversation.Message{
		sys("You are a booking assistant."),
		user("an old question " + words(40)),
		asst("an old answer " + words(40)),
		user("Find a flat in Lisbon."),
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "call_1", Type: "function",
			Function: conversation.FunctionCall{Name: "search_listings", Arguments: `{"city":"Lisbon"}`}}}},
		result("call_1", `[{"id":"L1"}]`),
		{Role: conversation.RoleUser, Name: "ann", Content: "Book it."},
	}
	r, err := conversation.Fit(msgs, 100, &conversation.Options{Counter: wordCounter{}})
	require.NoError(t, err)
	got, err := json.MarshalIndent(struct {
		Messages     []conversation.Message `json:"messages"`
		Dropped      []int                  `json:"dropped"`
		TokensBefore int                    `json:"tokensBefore"`
		TokensAfter  int                    `json:"tokensAfter"`
	}{r.Messages, r.Dropped, r.TokensBefore, r.TokensAfter}, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')

	path := filepath.Join("testdata", "golden", "fitted.json")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create the golden file")
	assert.Equal(t, string(want), string(got))
}
