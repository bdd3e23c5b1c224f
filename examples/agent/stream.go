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
// content deltas and tool-call deltas of each turn of the model as the
// provider streams them (each flushed at once), while the agent runs the
// tool calls between turns. The tool calls of all turns have distinct
// indices, so that a client that adds the deltas up (the openai client's
// stream helpers) keeps each whole. The last chunk, with finish_reason
// "stop", carries the response's provider_used, duration_ms and tool_calls
// records; with stream_options.include_usage one more chunk carries the
// usage.
//
// The headers and the first chunk go out with the first delta of the
// model: until then an error is answered as an HTTP error, and a provider
// that failed may be retried, or another one tried. A turn is relayed
// through a [turnStream]; once a delta of the turn reached the client, a
// failure of its provider ends the stream with an error event.
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

// turn starts relaying a turn of the model; nil when s is nil.
func (s *streamer) turn() *turnStream {
	if s == nil {
		return nil
	}
	return &turnStream{st: s, base: s.toolIndex, index: map[int]int{}}
}

// turnStream relays one turn of the model to the client as it comes: its
// content deltas, and its tool-call deltas under the client's indices. It
// serves one turn, its attempts (retries, other providers) included.
type turnStream struct {
	st      *streamer
	sent    bool        // a delta of the turn reached the client: it can no longer be tried again
	base    int         // the client's index of the turn's first tool call
	index   map[int]int // the provider's tool-call index -> its order in the turn
	content bool        // the turn's content started
}

// text relays a content delta.
func (t *turnStream) text(s string) {
	if s == "" {
		return
	}
	t.st.start()
	t.sent = true
	if !t.content {
		t.content = true
		if t.st.hasContent {
			s = "\n\n" + s // the turns' texts apart
		}
		t.st.hasContent = true
	}
	t.st.send(chunk{Choices: []chunkChoice{{Delta: map[string]any{"content": s}}}})
}

// toolCall relays a tool-call delta: the provider's index, and the id and
// name (on its first delta) and a piece of the arguments.
func (t *turnStream) toolCall(index int, id, name, args string) {
	n, ok := t.index[index]
	if !ok {
		n = len(t.index)
		t.index[index] = n
		t.st.toolIndex = t.base + n + 1
	}
	d := map[string]any{"index": t.base + n}
	if id != "" {
		d["id"], d["type"] = id, "function"
	}
	fn := map[string]any{"arguments": args}
	if name != "" {
		fn["name"] = name
	}
	d["function"] = fn
	t.st.start()
	t.sent = true
	t.st.send(chunk{Choices: []chunkChoice{{Delta: map[string]any{"tool_calls": []any{d}}}}})
}

// message relays a whole message of the model: its content, then its tool
// calls (a provider that answered without streaming, or the agent's own
// message).
func (t *turnStream) message(m conversation.Message) {
	if t == nil {
		return
	}
	t.text(m.Content)
	for i, tc := range m.ToolCalls {
		t.toolCall(i, tc.ID, tc.Function.Name, tc.Function.Arguments)
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
