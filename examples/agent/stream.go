package main

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/openaifit"
)

// streamer writes a chat completion as OpenAI's server-sent events
// (chat.completion.chunk objects, then data: [DONE]), turn by turn: the
// content of each turn of the model and its tool calls as deltas, while
// the agent runs the tool calls between turns. The tool calls of all turns
// have distinct indices, so that a client that adds the deltas up (the
// openai client's stream helpers) keeps each whole. The last chunk, with
// finish_reason "stop", carries the response's provider_used, duration_ms
// and tool_calls records; with stream_options.include_usage one more
// chunk carries the usage.
//
// A nil *streamer streams nothing. A streamer serves one request.
type streamer struct {
	w       http.ResponseWriter
	id      string
	model   string
	created int64
	usage   bool // stream_options.include_usage

	started    bool
	hasContent bool
	toolIndex  int
}

// chunkChoice is a choice of a chunk.
type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        any     `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// chunk is a chat.completion.chunk, with the agent's fields on the last.
type chunk struct {
	ID           string            `json:"id"`
	Object       string            `json:"object"`
	Created      int64             `json:"created"`
	Model        string            `json:"model"`
	Choices      []chunkChoice     `json:"choices"`
	Usage        *openaifit.Usage  `json:"usage,omitempty"`
	ToolCalls    *[]toolInvocation `json:"tool_calls,omitempty"`
	ProviderUsed string            `json:"provider_used,omitempty"`
	DurationMS   *int64            `json:"duration_ms,omitempty"`
}

type toolCallDelta struct {
	Index    int                       `json:"index"`
	ID       string                    `json:"id"`
	Type     string                    `json:"type"`
	Function conversation.FunctionCall `json:"function"`
}

func (s *streamer) send(c chunk) {
	c.ID, c.Object, c.Created, c.Model = s.id, "chat.completion.chunk", s.created, s.model
	if c.Choices == nil {
		c.Choices = []chunkChoice{}
	}
	b, _ := json.Marshal(c)
	s.write(b)
}

func (s *streamer) write(data []byte) {
	_, _ = fmt.Fprintf(s.w, "data: %s\n\n", data)
	_ = http.NewResponseController(s.w).Flush()
}

// start sends the headers and the first chunk, the assistant's role.
func (s *streamer) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.send(chunk{Choices: []chunkChoice{{Delta: map[string]any{"role": "assistant", "content": ""}}}})
}

// turn streams one message of the model: its content, then its tool
// calls.
func (s *streamer) turn(m conversation.Message) {
	if s == nil {
		return
	}
	s.start()
	if m.Content != "" {
		text := m.Content
		if s.hasContent {
			text = "\n\n" + text // the turns' texts apart
		}
		s.hasContent = true
		s.send(chunk{Choices: []chunkChoice{{Delta: map[string]any{"content": text}}}})
	}
	for _, tc := range m.ToolCalls {
		d := toolCallDelta{Index: s.toolIndex, ID: tc.ID, Type: "function", Function: tc.Function}
		s.toolIndex++
		s.send(chunk{Choices: []chunkChoice{{Delta: map[string]any{"tool_calls": []toolCallDelta{d}}}}})
	}
}

// finish streams the end of the answer and [DONE].
func (s *streamer) finish(resp chatResponse) {
	s.start()
	stop := "stop"
	records := resp.ToolCalls
	if records == nil {
		records = []toolInvocation{}
	}
	s.send(chunk{Choices: []chunkChoice{{Delta: map[string]any{}, FinishReason: &stop}},
		ToolCalls: &records, ProviderUsed: resp.ProviderUsed, DurationMS: &resp.DurationMS})
	if s.usage {
		s.send(chunk{Usage: resp.Usage})
	}
	s.write([]byte("[DONE]"))
}

// fail ends a stream that started with an error event, as OpenAI sends
// one: data: {"error":{...}}.
func (s *streamer) fail(e apiError) {
	b, _ := json.Marshal(openaifit.ErrorBody{Error: e.detail})
	s.write(b)
}
