package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxfit/ctxfit/conversation"
)

func ExampleFit() {
	msgs := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "You are a booking assistant."},
		{Role: conversation.RoleUser, Content: "Hi!"},
		{Role: conversation.RoleAssistant, Content: "Hello! Where would you like to stay?"},
		{Role: conversation.RoleUser, Content: "Find me a flat in Lisbon for November."},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "call_1", Type: "function",
			Function: conversation.FunctionCall{Name: "search_listings", Arguments: `{"city":"Lisbon","month":"2025-11"}`}}}},
		{Role: conversation.RoleTool, ToolCallID: "call_1", Content: `[{"id":"L1","name":"Alfama loft","price":95},{"id":"L2","name":"Baixa studio","price":80}]`},
		{Role: conversation.RoleAssistant, Content: "I found the Alfama loft (95 €/night) and the Baixa studio (80 €/night)."},
		{Role: conversation.RoleUser, Content: "Book the cheaper one."},
	}
	// The default counter is the exact o200k_base counter.
	r, err := conversation.Fit(msgs, 130, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("kept:", r.Kept, "dropped:", r.Dropped)
	fmt.Println("tokens:", r.TokensBefore, "->", r.TokensAfter)
	for _, m := range r.Messages {
		text := m.Content
		for _, tc := range m.ToolCalls {
			text += "calls " + tc.Function.Name + " as " + tc.ID
		}
		fmt.Printf("%s: %s\n", m.Role, text)
	}

	// With max messages, as the middleware's Session.max_messages.
	r, _ = conversation.Fit(msgs, 1000, &conversation.Options{MaxMessages: 3})
	fmt.Println("kept:", r.Kept)

	// When the messages that must stay do not fit, nothing is dropped.
	_, err = conversation.Fit(msgs, 20, nil)
	fmt.Println(errors.Is(err, conversation.ErrMandatoryOverBudget))
	fmt.Println(err)
	// Output:
	// kept: [0 3 4 5 6 7] dropped: [1 2]
	// tokens: 146 -> 127
	// system: You are a booking assistant.
	// user: Find me a flat in Lisbon for November.
	// assistant: calls search_listings as call_1
	// tool: [{"id":"L1","name":"Alfama loft","price":95},{"id":"L2","name":"Baixa studio","price":80}]
	// assistant: I found the Alfama loft (95 €/night) and the Baixa studio (80 €/night).
	// user: Book the cheaper one.
	// kept: [0 7]
	// true
	// conversation: the messages that must stay (system messages, the latest user message, the latest tool calls and their results) take 22 tokens, more than the limit of 20; shorten them, summarize the latest tool results, or raise the limit
}

// notebook is a Keeper that keeps cleared results in memory; an agent uses
// mcpclientfit.Guard, which keeps them with ctxfit and reads them back
// through ctxfit_next.
type notebook struct{ pages []string }

func (n *notebook) Keep(_ context.Context, tool, content string) (conversation.Recall, error) {
	n.pages = append(n.pages, content)
	return conversation.Recall{Tool: "read_notebook", Arguments: fmt.Sprintf(`{"page":%d}`, len(n.pages))}, nil
}

func ExampleFitContext() {
	log := strings.Repeat("2026-11-21T10:00:00Z INFO request served in 12 ms\n", 200)
	msgs := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "You are an operations assistant."},
		{Role: conversation.RoleUser, Content: "Why was the site slow this morning?"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "call_1", Type: "function",
			Function: conversation.FunctionCall{Name: "read_log", Arguments: `{"name":"app.log"}`}}}},
		{Role: conversation.RoleTool, ToolCallID: "call_1", Content: log},
		{Role: conversation.RoleAssistant, Content: "Requests took 12 ms all morning: the site was not slow."},
		{Role: conversation.RoleUser, Content: "And the database?"},
	}
	nb := &notebook{}
	r, err := conversation.FitContext(context.Background(), msgs, 500, &conversation.Options{Keeper: nb})
	if err != nil {
		panic(err)
	}
	fmt.Println("kept:", r.Kept, "dropped:", r.Dropped)
	fmt.Println("tokens:", r.TokensBefore, "->", r.TokensAfter)
	fmt.Println(r.Messages[3].Content)
	fmt.Println("kept whole:", nb.pages[0] == log)
	// Output:
	// kept: [0 1 2 3 4 5] dropped: []
	// tokens: 4277 -> 114
	// [ctxfit] This result of read_log (4,200 tokens) was cleared to fit the context window. To read it again call read_notebook with {"page":1}.
	// kept whole: true
}
