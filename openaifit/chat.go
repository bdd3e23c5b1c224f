package openaifit

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/ctxfit/ctxfit/conversation"
)

// ChatRequest is the body of an OpenAI chat-completions request, with the
// members ctxfit reads or an agent sets. Messages are in the text form of
// [conversation.Message]; the middleware itself keeps every member of a
// request it forwards, known or not.
//
// The zero value is an empty request. A ChatRequest is a plain value.
type ChatRequest struct {
	Model               string                 `json:"model"`
	Messages            []conversation.Message `json:"messages"`
	Tools               []FunctionTool         `json:"tools,omitempty"`
	MaxTokens           int                    `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                    `json:"max_completion_tokens,omitempty"`
	Stream              bool                   `json:"stream,omitempty"`
}

// ChatResponse is the body of a chat-completions response (not streamed).
//
// The zero value is an empty response. A ChatResponse is a plain value.
type ChatResponse struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"` // "chat.completion"
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage,omitempty"`
}

// Choice is one answer of a [ChatResponse].
//
// The zero value is an empty answer. A Choice is a plain value.
type Choice struct {
	Index        int                  `json:"index"`
	Message      conversation.Message `json:"message"`
	FinishReason string               `json:"finish_reason"` // "stop", "tool_calls", "length"
}

// Usage is the token usage a provider reports.
//
// The zero value is no usage. A Usage is a plain value.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ErrorBody is the body of an OpenAI-style error response:
// {"error":{"message":...,"type":...,"param":...,"code":...}}.
//
// The zero value is an empty error. An ErrorBody is a plain value.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the error of an [ErrorBody]. Param and Code are JSON null
// when empty, as OpenAI sends them.
//
// The zero value is an empty error. An ErrorDetail is a plain value.
type ErrorDetail struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   string `json:"param"`
	Code    string `json:"code"`
}

// MarshalJSON writes empty Param and Code as null.
func (e ErrorDetail) MarshalJSON() ([]byte, error) {
	orNull := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return json.Marshal(struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}{e.Message, e.Type, orNull(e.Param), orNull(e.Code)})
}

// Error types and codes of the errors the middleware answers, as OpenAI
// names them.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeRateLimit      = "requests"
	TypeServer         = "server_error"

	CodeRateLimitExceeded     = "rate_limit_exceeded"
	CodeContextLengthExceeded = "context_length_exceeded"
	CodeRequestTooLarge       = "request_too_large"
)

// WriteError writes an OpenAI-style error response with status and e.
func WriteError(w http.ResponseWriter, status int, e ErrorDetail) {
	b, _ := json.Marshal(ErrorBody{Error: e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// wireMessage is a chat message as the middleware reads it: enough to
// count and fit it.
type wireMessage struct {
	Role       conversation.Role       `json:"role"`
	Content    json.RawMessage         `json:"content"`
	Name       string                  `json:"name"`
	ToolCalls  []conversation.ToolCall `json:"tool_calls"`
	ToolCallID string                  `json:"tool_call_id"`
}

// readMessages reads the messages of a request for fitting: each as a
// [conversation.Message] whose Content is its text (a string content as it
// is; the parts of an array content joined by newlines, a text part as its
// text and any other part as its JSON, which counts it conservatively;
// null as ""), and each as its raw JSON.
func readMessages(raw json.RawMessage) ([]conversation.Message, []json.RawMessage, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return nil, nil, errors.New("openaifit: messages is not an array")
	}
	msgs := make([]conversation.Message, len(raws))
	for i, r := range raws {
		var m wireMessage
		if err := json.Unmarshal(r, &m); err != nil {
			return nil, nil, errors.New("openaifit: a message is not an object")
		}
		text, err := contentText(m.Content)
		if err != nil {
			return nil, nil, err
		}
		msgs[i] = conversation.Message{Role: m.Role, Content: text, Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return msgs, raws, nil
}

func contentText(c json.RawMessage) (string, error) {
	c = bytes.TrimSpace(c)
	if len(c) == 0 || string(c) == "null" {
		return "", nil
	}
	switch c[0] {
	case '"':
		var s string
		err := json.Unmarshal(c, &s)
		return s, err
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(c, &parts); err != nil {
			return "", err
		}
		texts := make([]string, len(parts))
		for i, p := range parts {
			var part struct {
				Type string  `json:"type"`
				Text *string `json:"text"`
			}
			if json.Unmarshal(p, &part) == nil && part.Type == "text" && part.Text != nil {
				texts[i] = *part.Text
			} else {
				texts[i] = string(p)
			}
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", errors.New("openaifit: a message's content is neither a string, an array nor null")
}

// DecodeMessages reads chat messages, a JSON array in the chat-completions
// format, as conversation messages in text form: a string content as it
// is, null as "", the parts of an array content joined by newlines (a text
// part as its text, any other part as its JSON).
func DecodeMessages(raw json.RawMessage) ([]conversation.Message, error) {
	msgs, _, err := readMessages(raw)
	return msgs, err
}
