package conversation_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/conversation"
)

func exactCounter(tb testing.TB) budget.Counter {
	tb.Helper()
	c, err := budget.Exact(budget.O200KBase)
	require.NoError(tb, err)
	return c
}

// wordCounter counts one token per space-separated word, so that the costs
// in the table tests are easy to read: a message of n words costs
// 3 + 1 (role) + n.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

func sys(s string) conversation.Message {
	return conversation.Message{Role: conversation.RoleSystem, Content: s}
}
func user(s string) conversation.Message {
	return conversation.Message{Role: conversation.RoleUser, Content: s}
}
func asst(s string) conversation.Message {
	return conversation.Message{Role: conversation.RoleAssistant, Content: s}
}

func call(ids ...string) conversation.Message {
	m := conversation.Message{Role: conversation.RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, conversation.ToolCall{ID: id, Type: "function", Function: conversation.FunctionCall{Name: "lookup", Arguments: "{}"}})
	}
	return m
}

func result(id, s string) conversation.Message {
	return conversation.Message{Role: conversation.RoleTool, ToolCallID: id, Content: s}
}

// words returns n words.
func words(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }

func TestFit(t *testing.T) {
	// With wordCounter a message of n words costs 4+n; the conversation
	// costs 3 more.
	tests := []struct {
		name        string
		msgs        []conversation.Message
		maxTokens   int
		maxMessages int
		wantKept    []int
	}{
		{
			name:      "a conversation within the budget is kept whole",
			msgs:      []conversation.Message{sys("be brief"), user("hi"), asst("hello")},
			maxTokens: 1000,
			wantKept:  []int{0, 1, 2},
		},
		{
			name:      "the oldest turn goes first",
			msgs:      []conversation.Message{sys(words(6)), user(words(6)), asst(words(6)), user(words(6)), asst(words(6)), user(words(6))},
			maxTokens: 3 + 4*10,
			wantKept:  []int{0, 3, 4, 5},
		},
		{
			name:      "a whole turn goes, never half of it",
			msgs:      []conversation.Message{user(words(1)), asst(words(30)), user(words(1)), asst(words(1)), user(words(1))},
			maxTokens: 3 + 5 + 5 + 5 + 1,
			wantKept:  []int{2, 3, 4},
		},
		{
			name:      "system messages stay wherever they are",
			msgs:      []conversation.Message{sys(words(1)), user(words(20)), sys(words(1)), asst(words(20)), user(words(1))},
			maxTokens: 3 + 5 + 5 + 5,
			wantKept:  []int{0, 2, 4},
		},
		{
			name:      "the latest user message stays and what follows it goes oldest first",
			msgs:      []conversation.Message{user(words(1)), call("a"), result("a", words(40)), asst(words(1))},
			maxTokens: 3 + 5 + 5,
			wantKept:  []int{0, 3},
		},
		{
			name:      "an assistant message with tool calls goes with all its results",
			msgs:      []conversation.Message{user(words(1)), call("a", "b"), result("a", words(1)), result("b", words(1)), asst(words(1)), user(words(1))},
			maxTokens: 3 + 5 + 5,
			wantKept:  []int{5},
		},
		{
			name:      "tool results tied to the latest turn stay together",
			msgs:      []conversation.Message{user(words(5)), asst(words(5)), user(words(1)), call("x"), result("x", words(1))},
			maxTokens: 3 + 5 + 12 + 5,
			wantKept:  []int{2, 3, 4},
		},
		{
			name:        "max messages drops the oldest turns even within the token budget",
			msgs:        []conversation.Message{sys("s"), user("a"), asst("b"), user("c"), asst("d"), user("e")},
			maxTokens:   1000,
			maxMessages: 4,
			wantKept:    []int{0, 3, 4, 5},
		},
		{
			name:      "messages before the first user message form a turn",
			msgs:      []conversation.Message{asst(words(10)), asst(words(10)), user(words(1))},
			maxTokens: 3 + 5 + 14,
			wantKept:  []int{2},
		},
		{
			name:      "an orphan tool result is a unit of its own",
			msgs:      []conversation.Message{user(words(1)), result("gone", words(30)), asst(words(1))},
			maxTokens: 3 + 5 + 5,
			wantKept:  []int{0, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := slices.Clone(tt.msgs)
			r, err := conversation.Fit(tt.msgs, tt.maxTokens, &conversation.Options{Counter: wordCounter{}, MaxMessages: tt.maxMessages})
			require.NoError(t, err)
			assert.Equal(t, tt.wantKept, r.Kept)
			var dropped []int
			for i := range tt.msgs {
				if !slices.Contains(tt.wantKept, i) {
					dropped = append(dropped, i)
				}
			}
			assert.Equal(t, append([]int{}, dropped...), r.Dropped)
			require.Len(t, r.Messages, len(r.Kept))
			for j, i := range r.Kept {
				assert.Equal(t, tt.msgs[i], r.Messages[j])
			}
			assert.Equal(t, conversation.Tokens(wordCounter{}, tt.msgs), r.TokensBefore)
			assert.Equal(t, conversation.Tokens(wordCounter{}, r.Messages), r.TokensAfter)
			assert.LessOrEqual(t, r.TokensAfter, tt.maxTokens)
			assert.Equal(t, orig, tt.msgs, "the input is not modified")
		})
	}
}

func TestFitFailsWhenTheMandatoryMessagesDoNotFit(t *testing.T) {
	tests := []struct {
		name        string
		msgs        []conversation.Message
		maxTokens   int
		maxMessages int
		wantMsg     string
	}{
		{"a system prompt over the token limit", []conversation.Message{sys(words(50)), user("hi")}, 20, 0, "take 62 tokens, more than the limit of 20"},
		{"a latest user message over the token limit", []conversation.Message{user("a"), user(words(50))}, 20, 0, "more than the limit of 20"},
		{"more system messages than the message limit", []conversation.Message{sys("a"), sys("b"), sys("c"), user("d")}, 1000, 3, "the 4 messages that must stay"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is a MandatoryError", func(t *testing.T) {
			_, err := conversation.Fit(tt.msgs, tt.maxTokens, &conversation.Options{Counter: wordCounter{}, MaxMessages: tt.maxMessages})
			require.ErrorIs(t, err, conversation.ErrMandatoryOverBudget)
			var me *conversation.MandatoryError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tt.maxTokens, me.MaxTokens)
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.True(t, strings.HasPrefix(err.Error(), "conversation: "))
		})
	}
}

func TestFitRejectsInvalidOptions(t *testing.T) {
	_, err := conversation.Fit(nil, 0, nil)
	require.ErrorIs(t, err, conversation.ErrInvalidOptions)
	_, err = conversation.Fit(nil, 10, &conversation.Options{ClearAbove: -1})
	require.ErrorIs(t, err, conversation.ErrInvalidOptions)
	_, err = conversation.Fit(nil, 10, &conversation.Options{ClearAtLeast: -1})
	require.ErrorIs(t, err, conversation.ErrInvalidOptions)
}

func TestMessageTokens(t *testing.T) {
	c := exactCounter(t)
	tests := []struct {
		name string
		msg  conversation.Message
		want int
	}{
		{"a plain message costs 3 plus its role and content", user("Hello there"), 3 + c.Count("user") + c.Count("Hello there")},
		{"a name costs 1 plus the name", conversation.Message{Role: "user", Content: "hi", Name: "ann"}, 3 + c.Count("user") + c.Count("hi") + 1 + c.Count("ann")},
		{"a tool call costs 3 plus its id, type, name and arguments", call("call_1"),
			3 + c.Count("assistant") + 3 + c.Count("call_1") + c.Count("function") + c.Count("lookup") + c.Count("{}")},
		{"a tool result costs its tool_call_id too", result("call_1", "42"), 3 + c.Count("tool") + c.Count("42") + c.Count("call_1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, conversation.MessageTokens(c, &tt.msg))
		})
	}
	assert.Equal(t, 3, conversation.Tokens(c, nil), "an empty conversation costs the reply priming")
}

// randomConversation returns a conversation of up to 40 messages with
// system messages, turns, tool calls with one to three results, and
// orphan results.
func randomConversation(rng *rand.Rand) []conversation.Message {
	n := rng.IntN(40)
	var msgs []conversation.Message
	callID := 0
	text := func() string { return words(rng.IntN(30)) }
	for len(msgs) < n {
		switch k := rng.IntN(10); {
		case k == 0:
			msgs = append(msgs, sys(text()))
		case k < 4:
			msgs = append(msgs, user(text()))
		case k < 6:
			msgs = append(msgs, asst(text()))
		case k < 9:
			var ids []string
			for range 1 + rng.IntN(3) {
				callID++
				ids = append(ids, fmt.Sprintf("call_%d", callID))
			}
			msgs = append(msgs, call(ids...))
			for _, id := range ids {
				if rng.IntN(8) > 0 { // some calls are still unanswered
					msgs = append(msgs, result(id, text()))
				}
			}
		default:
			msgs = append(msgs, result("orphan", text()))
		}
	}
	return msgs
}

// mandatoryOf returns the indices of the messages FitContext always keeps:
// system messages, the latest user message, and the latest assistant
// message after it when it calls tools, with the results that answer it.
func mandatoryOf(msgs []conversation.Message) []int {
	lastUser := -1
	for i, m := range msgs {
		if m.Role == conversation.RoleUser {
			lastUser = i
		}
	}
	lastCall := -1
	for i := len(msgs) - 1; i > lastUser; i-- {
		if msgs[i].Role == conversation.RoleAssistant {
			if len(msgs[i].ToolCalls) > 0 {
				lastCall = i
			}
			break
		}
	}
	var mandatory []int
	for i, m := range msgs {
		answers := lastCall >= 0 && i > lastCall && m.Role == conversation.RoleTool &&
			slices.ContainsFunc(msgs[lastCall].ToolCalls, func(tc conversation.ToolCall) bool { return tc.ID == m.ToolCallID })
		if m.Role == conversation.RoleSystem || i == lastUser || i == lastCall || answers {
			mandatory = append(mandatory, i)
		}
	}
	return mandatory
}

func TestFitProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := exactCounter(t)
	for run := range 2000 {
		msgs := randomConversation(rng)
		maxTokens := 1 + rng.IntN(300)
		maxMessages := rng.IntN(12) - 1 // -1 means no limit, 0 the default 20
		r, err := conversation.Fit(msgs, maxTokens, &conversation.Options{Counter: c, MaxMessages: maxMessages})
		limit := limitOf(maxMessages)
		mandatory := mandatoryOf(msgs)
		if err != nil {
			require.ErrorIs(t, err, conversation.ErrMandatoryOverBudget, "run %d", run)
			// The mandatory messages alone really do not fit.
			var only []conversation.Message
			for _, i := range mandatory {
				only = append(only, msgs[i])
			}
			assert.True(t, conversation.Tokens(c, only) > maxTokens || limit > 0 && len(only) > limit, "run %d: fitting failed although the mandatory messages fit", run)
			continue
		}
		checkFitted(t, run, c, msgs, r, mandatory, maxTokens, limit)
		assert.Empty(t, r.Cleared, "run %d: Fit clears nothing", run)
		for j, i := range r.Kept {
			assert.Equal(t, msgs[i], r.Messages[j], "run %d", run)
		}
	}
}

// limitOf is the message limit of Options.MaxMessages, 0 for none.
func limitOf(maxMessages int) int {
	switch {
	case maxMessages == 0:
		return conversation.DefaultMaxMessages
	case maxMessages < 0:
		return 0
	}
	return maxMessages
}

// checkFitted checks the promises of every fitted conversation.
func checkFitted(t *testing.T, run int, c budget.Counter, msgs []conversation.Message, r conversation.Result, mandatory []int, maxTokens, maxMessages int) {
	t.Helper()
	// Kept messages are a subsequence of the input in order.
	require.Len(t, r.Messages, len(r.Kept))
	assert.True(t, slices.IsSorted(r.Kept), "run %d", run)
	assert.Equal(t, len(msgs), len(r.Kept)+len(r.Dropped), "run %d", run)
	for j, i := range r.Kept {
		got, want := r.Messages[j], msgs[i]
		want.Content, got.Content = "", ""
		assert.Equal(t, want, got, "run %d: message %d changed beyond its content", run, i)
	}
	// Every mandatory message is kept.
	for _, i := range mandatory {
		assert.Contains(t, r.Kept, i, "run %d: mandatory message %d dropped", run, i)
	}
	// Within both limits, by the documented count.
	assert.LessOrEqual(t, r.TokensAfter, maxTokens, "run %d", run)
	assert.Equal(t, conversation.Tokens(c, r.Messages), r.TokensAfter, "run %d", run)
	assert.Equal(t, conversation.Tokens(c, msgs), r.TokensBefore, "run %d", run)
	if maxMessages > 0 {
		assert.LessOrEqual(t, len(r.Messages), maxMessages, "run %d", run)
	}
	// Tool calls and their results are kept or dropped together.
	kept := map[int]bool{}
	for _, i := range r.Kept {
		kept[i] = true
	}
	for i, m := range msgs {
		for _, tc := range m.ToolCalls {
			for j, res := range msgs {
				if res.Role == conversation.RoleTool && res.ToolCallID == tc.ID {
					assert.Equal(t, kept[i], kept[j], "run %d: call %d and result %d separated", run, i, j)
				}
			}
		}
	}
}
