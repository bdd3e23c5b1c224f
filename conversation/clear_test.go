package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/conversation"
)

// memKeeper keeps cleared results in a map; its Recall is "recall" with
// {"id":N}. It refuses contents that hold "refuse".
type memKeeper struct {
	mu    sync.Mutex
	kept  []string
	tools []string
}

func (k *memKeeper) Keep(_ context.Context, tool, content string) (conversation.Recall, error) {
	if strings.Contains(content, "refuse") {
		return conversation.Recall{}, errors.New("refused")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = append(k.kept, content)
	k.tools = append(k.tools, tool)
	return conversation.Recall{Tool: "recall", Arguments: fmt.Sprintf(`{"id":%d}`, len(k.kept)-1)}, nil
}

// recall returns what a Recall leads to.
func (k *memKeeper) recall(t *testing.T, r conversation.Recall) string {
	t.Helper()
	require.Equal(t, "recall", r.Tool)
	var in struct{ ID int }
	require.NoError(t, json.Unmarshal([]byte(r.Arguments), &in))
	k.mu.Lock()
	defer k.mu.Unlock()
	require.Less(t, in.ID, len(k.kept))
	return k.kept[in.ID]
}

func named(id, name string) conversation.Message {
	m := call(id)
	m.ToolCalls[0].Function.Name = name
	return m
}

func TestFitContextClears(t *testing.T) {
	// With wordCounter a tool result of 200 words costs 205 tokens, and a
	// cleared one 27 (its placeholder is 22 words).
	big := words(200)
	twoReads := []conversation.Message{user("q"), named("a", "read"), result("a", big), named("b", "read"), result("b", big), asst("done"), user("next")}
	full := conversation.Tokens(wordCounter{}, twoReads)
	latest := []conversation.Message{user(words(20)), asst(words(20)), user("q"), named("a", "read"), result("a", big)}
	latestTurn := conversation.Tokens(wordCounter{}, latest[2:])
	tests := []struct {
		name        string
		msgs        []conversation.Message
		maxTokens   int
		opts        conversation.Options
		wantCleared []int
		wantKept    []int
	}{
		{
			name:        "the oldest large result is cleared first, and only as far as needed",
			msgs:        twoReads,
			maxTokens:   full - 1,
			wantCleared: []int{2},
			wantKept:    []int{0, 1, 2, 3, 4, 5, 6},
		},
		{
			name: "results under ClearAbove stay, larger ones go",
			msgs: []conversation.Message{user("q"), named("a", "read"), result("a", words(40)), named("b", "read"), result("b", big), asst("done"), user("next")},
			maxTokens: conversation.Tokens(wordCounter{}, []conversation.Message{user("q"), named("a", "read"), result("a", words(40)),
				named("b", "read"), result("b", big), asst("done"), user("next")}) - 1,
			opts:        conversation.Options{ClearAbove: 50},
			wantCleared: []int{4},
			wantKept:    []int{0, 1, 2, 3, 4, 5, 6},
		},
		{
			name:        "ClearAtLeast clears on after the conversation fits",
			msgs:        twoReads,
			maxTokens:   full - 1,
			opts:        conversation.Options{ClearAtLeast: 300},
			wantCleared: []int{2, 4},
			wantKept:    []int{0, 1, 2, 3, 4, 5, 6},
		},
		{
			name:        "the latest results are cleared only when dropping old turns is not enough",
			msgs:        latest,
			maxTokens:   latestTurn - 205 + 27,
			wantCleared: []int{4},
			wantKept:    []int{2, 3, 4},
		},
		{
			name:        "the latest results stay while old turns can go",
			msgs:        latest,
			maxTokens:   latestTurn,
			wantCleared: nil,
			wantKept:    []int{2, 3, 4},
		},
		{
			name:        "a result the keeper refuses is not cleared, its turn goes instead",
			msgs:        []conversation.Message{user("q"), named("a", "read"), result("a", "refuse "+big), asst("done"), user("next")},
			maxTokens:   100,
			wantCleared: nil,
			wantKept:    []int{4},
		},
		{
			name: "the message limit drops old turns before anything is cleared",
			msgs: []conversation.Message{user("q"), named("a", "read"), result("a", big), asst("done"),
				user("q2"), named("b", "read"), result("b", big), asst("done"), user("next")},
			maxTokens: conversation.Tokens(wordCounter{}, []conversation.Message{user("q2"), named("b", "read"), result("b", big),
				asst("done"), user("next")}) - 1,
			opts:        conversation.Options{MaxMessages: 5},
			wantCleared: []int{6},
			wantKept:    []int{4, 5, 6, 7, 8},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &memKeeper{}
			opts := tt.opts
			opts.Counter, opts.Keeper = wordCounter{}, k
			if opts.ClearAbove == 0 {
				opts.ClearAbove = 100 // the default, 500, is over these results of 200 words
			}
			r, err := conversation.FitContext(context.Background(), tt.msgs, tt.maxTokens, &opts)
			require.NoError(t, err)
			assert.Equal(t, tt.wantKept, r.Kept)
			var cleared []int
			for _, c := range r.Cleared {
				cleared = append(cleared, c.Index)
				assert.Equal(t, tt.msgs[c.Index].Content, k.recall(t, c.Recall), "the keeper has the result")
				assert.Equal(t, "read", c.Tool)
				assert.Equal(t, wordCounter{}.Count(tt.msgs[c.Index].Content), c.Tokens)
			}
			assert.Equal(t, tt.wantCleared, cleared)
			for j, i := range r.Kept {
				m := r.Messages[j]
				if slicesContains(cleared, i) {
					assert.True(t, strings.HasPrefix(m.Content, "[ctxfit] This result of read ("), m.Content)
					assert.Equal(t, tt.msgs[i].ToolCallID, m.ToolCallID)
					assert.NotContains(t, m.Content, "\n", "a placeholder is one line")
				} else {
					assert.Equal(t, tt.msgs[i], m)
				}
			}
			assert.LessOrEqual(t, r.TokensAfter, tt.maxTokens)
			assert.Equal(t, conversation.Tokens(wordCounter{}, r.Messages), r.TokensAfter)
		})
	}
}

func slicesContains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestPlaceholderSaysWhatWasClearedAndHowToReadItBack(t *testing.T) {
	got := conversation.Placeholder("read_file", 12345, conversation.Recall{Tool: "ctxfit_next", Arguments: `{"cursor":"c","part":1}`})
	assert.Equal(t, `[ctxfit] This result of read_file (12,345 tokens) was cleared to fit the context window. To read it again call ctxfit_next with {"cursor":"c","part":1}.`, got)
	assert.Contains(t, conversation.Placeholder("", 7, conversation.Recall{Tool: "t", Arguments: "{}"}), "This tool result (7 tokens)")
}

// TestFitContextProperties: on random conversations with large tool
// results, every fitted conversation is within both limits, keeps the
// mandatory messages and every tool call with its results, changes only
// the content of the results it clears, and every cleared result is
// recoverable byte for byte through its Recall.
func TestFitContextProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := exactCounter(t)
	clearedSome := 0
	runs := 1500
	if testing.Short() {
		runs = 300 // under -race (test.sh); 1,500 without -race
	}
	for run := range runs {
		msgs := randomConversation(rng)
		for i := range msgs {
			if msgs[i].Role == conversation.RoleTool && rng.IntN(2) == 0 {
				// A large result, with text a tokenizer splits oddly.
				msgs[i].Content = strings.Repeat(fmt.Sprintf("line %d: ünïcödé <tag> & \"quotes\"\n", rng.IntN(1000)), 20+rng.IntN(200))
			}
		}
		maxTokens := 50 + rng.IntN(3000)
		maxMessages := rng.IntN(25) - 1
		k := &memKeeper{}
		opts := conversation.Options{Counter: c, MaxMessages: maxMessages, Keeper: k, ClearAbove: rng.IntN(200), ClearAtLeast: rng.IntN(2) * rng.IntN(2000)}
		r, err := conversation.FitContext(context.Background(), msgs, maxTokens, &opts)
		limit := limitOf(maxMessages)
		mandatory := mandatoryOf(msgs)
		if err != nil {
			require.ErrorIs(t, err, conversation.ErrMandatoryOverBudget, "run %d", run)
			var me *conversation.MandatoryError
			require.ErrorAs(t, err, &me)
			assert.True(t, me.Tokens > maxTokens || limit > 0 && me.Messages > limit, "run %d: %v", run, err)
			continue
		}
		checkFitted(t, run, c, msgs, r, mandatory, maxTokens, limit)
		cleared := map[int]bool{}
		for _, cl := range r.Cleared {
			cleared[cl.Index] = true
			assert.Equal(t, msgs[cl.Index].Content, k.recall(t, cl.Recall), "run %d: cleared result %d recovered byte for byte", run, cl.Index)
			assert.Greater(t, cl.Tokens, opts.ClearAbove, "run %d", run)
			assert.Equal(t, conversation.RoleTool, msgs[cl.Index].Role, "run %d", run)
		}
		clearedSome += len(r.Cleared)
		for j, i := range r.Kept {
			if cleared[i] {
				assert.True(t, strings.HasPrefix(r.Messages[j].Content, "[ctxfit] "), "run %d", run)
			} else {
				assert.Equal(t, msgs[i], r.Messages[j], "run %d: message %d changed", run, i)
			}
		}
	}
	assert.Greater(t, clearedSome, runs/3, "the runs cleared results")
}

func TestFitContextWithoutAKeeperIsFit(t *testing.T) {
	msgs := []conversation.Message{user("q"), named("a", "read"), result("a", words(300)), asst("done"), user("next")}
	want, err := conversation.Fit(msgs, 50, &conversation.Options{Counter: wordCounter{}})
	require.NoError(t, err)
	got, err := conversation.FitContext(context.Background(), msgs, 50, &conversation.Options{Counter: wordCounter{}})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Empty(t, got.Cleared)
}
