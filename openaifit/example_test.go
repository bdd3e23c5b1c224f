package openaifit_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/openaifit"
)

func ExampleNewToolset() {
	// The tools of an MCP server (from ListTools of either Go MCP SDK:
	// openaifit.MCPTools converts them).
	ts, err := openaifit.NewToolset([]openaifit.MCPTool{
		{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "notes.search", Description: "Search the notes."},
	})
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(ts.Functions())
	fmt.Println(string(b))

	// A model's tool call, back to the MCP tool and its arguments.
	tool, args, err := ts.Call(conversation.ToolCall{ID: "call_1", Type: "function",
		Function: conversation.FunctionCall{Name: ts.Functions()[1].Function.Name, Arguments: `{"query":"budget"}`}})
	fmt.Println(tool, string(args), err)
	// Output:
	// [{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}},{"type":"function","function":{"name":"notes_search_ee3c0278","description":"Search the notes.","parameters":{"type":"object","properties":{}}}}]
	// notes.search {"query":"budget"} <nil>
}

func ExampleMiddleware() {
	provider := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req openaifit.ChatRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		fmt.Println("the provider gets", len(req.Messages), "messages")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(openaifit.ChatResponse{Object: "chat.completion", Model: req.Model,
			Choices: []openaifit.Choice{{Message: conversation.Message{Role: conversation.RoleAssistant, Content: "Hello."}, FinishReason: "stop"}}})
	})
	h := openaifit.Middleware(&openaifit.Options{
		ContextTokens: func(model string) int { return 1000 },
		ReplyTokens:   200,
		Burst:         2, // 10 by default
	})(provider)

	// 81 messages of 1,770 tokens: over the window, and over the
	// message limit (20 by default).
	var msgs []conversation.Message
	for i := range 40 {
		msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: fmt.Sprintf("question %d: %s", i, strings.Repeat("word ", 30))},
			conversation.Message{Role: conversation.RoleAssistant, Content: "answer"})
	}
	msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: "and now?"})
	body, _ := json.Marshal(openaifit.ChatRequest{Model: "m", Messages: msgs})
	for range 3 {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(string(body)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			fmt.Println(w.Code, "retry after", w.Header().Get("Retry-After"), "s")
			continue
		}
		fmt.Println(w.Code, "tokens", w.Header().Get("X-Ctxfit-Tokens-Before"), "->", w.Header().Get("X-Ctxfit-Tokens-After"))
	}
	// Output:
	// the provider gets 19 messages
	// 200 tokens 1770 -> 406
	// the provider gets 19 messages
	// 200 tokens 1770 -> 406
	// 429 retry after 1 s
}
