// Package openaifittest is a scripted OpenAI-compatible chat-completions
// provider for the tests of agents, so that an agent's loop (tool calls,
// fitting, recalls, retries and fallback) is tested without a model.
//
// A [Provider] answers each user message with the tool call its [Script]
// gives (or a greeting when it gives none), and "Done: I read it." once
// the results are back. It records every request it gets (its messages
// and their exact token count). Like a model that wants a result back, it
// recalls every tool result the agent cleared from the conversation,
// before it answers the user's message: it calls ctxfit_next with the
// placeholder's arguments, then follows every cursor and part of the
// answers (a text comes back as text, a chunk and a guidance line an
// answer; a JSON object or array in pages), one tool call per request,
// and checks that what it rebuilds is the result it first read, byte for
// byte ([Provider.Recalls]). [Provider.Fail] makes the next requests fail: a
// status (a 5xx, a 429 with Retry-After), no answer until the client
// gives up (a time-out), or a stream broken after its first delta.
//
// A request with "stream": true is answered as OpenAI streams: server-sent
// events of chat.completion.chunk objects (the role, the content in a few
// deltas, each tool call's id and name and then its arguments in pieces,
// the finish reason, the usage when stream_options.include_usage asks for
// it), then data: [DONE]. [Provider.Hold] stops the next streamed answer
// after its first delta until the test lets it go on, so that a test can
// see what reached the agent's client while the provider's turn had not
// ended.
//
// A Provider serves one conversation at a time (requests are answered in
// order; its state is the conversation's). Its methods are safe for
// concurrent use.
package openaifittest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/openaifit"
)

// Script returns the tool call a user message asks for: a function name
// and its arguments (JSON), or "" to answer the message directly.
type Script func(user string) (function, arguments string)

// Request is what the provider got in one request.
type Request struct {
	Messages []conversation.Message
	// Tokens is the exact o200k_base cost of the messages
	// (conversation.Tokens); ToolTokens the count of the "tools" member as
	// sent.
	Tokens, ToolTokens int
	// Placeholders is the number of cleared tool results in the messages.
	Placeholders int
	// Status is the status the provider answered: 200, the status of a
	// [Failure], or 0 when it did not answer (a Failure that hangs).
	Status int
	// Stream reports whether the request asked for a streamed answer.
	Stream bool
}

// Failure is how the provider fails one request, instead of answering it.
//
// The zero value is not a failure: give a Status or Hang.
type Failure struct {
	// Status is the HTTP status answered (500, 503, 429, ...), with an
	// OpenAI-style error body.
	Status int
	// RetryAfter is the Retry-After header sent with it; "" sends none.
	RetryAfter string
	// Hang makes the provider answer nothing until the client gives up
	// (its time-out) or the provider closes: a provider that does not
	// answer in time.
	Hang bool
	// MidStream, for a streamed request, answers 200 and streams the
	// first delta of the answer, then ends the stream with an error event
	// as OpenAI sends one (data: {"error":{...}}, the message naming
	// Status) and no data: [DONE]: a provider that fails mid-stream. The
	// answer is lost, as a broken stream loses it. A request not streamed
	// fails with Status (500 when it is 0).
	MidStream bool
}

// Recall is the outcome of recalling one cleared tool result.
type Recall struct {
	ToolCallID string
	Calls      int    // ctxfit_next calls it took
	Original   string // the result as the provider first read it
	Rebuilt    string // what following the placeholder gave back
	Err        error
}

// Provider is a scripted provider. Create one with [New].
type Provider struct {
	// URL is the base URL of its API (http://127.0.0.1:PORT/v1).
	URL    string
	server *httptest.Server
	script Script
	exact  budget.Counter

	mu        sync.Mutex
	requests  []Request
	recalls   []Recall
	originals map[string]string // tool_call_id -> the result first read
	own       map[string]bool   // tool_call_ids of the provider's recall calls
	recalled  map[string]bool
	active    *recall
	pending   *string // the user message to answer once the recalls are done
	next      int
	failures  []Failure
	holds     []*hold
	closed    chan struct{}
}

// hold stops a streamed answer after its first delta.
type hold struct {
	held    chan struct{} // closed as the stream stops, before its first delta is sent
	release chan struct{} // closed to let it go on
	once    sync.Once
}

// recall is a recall in progress: a goroutine that follows a placeholder
// and asks for one ctxfit_next call at a time.
type recall struct {
	id     string
	calls  int
	last   string               // the tool_call_id of the call in flight
	want   chan json.RawMessage // the arguments of the next call
	got    chan []byte          // the body of its answer (nil: an error)
	done   chan Recall
	result *Recall
}

// New starts a provider that answers user messages by script; the caller
// closes it.
func New(script Script) *Provider {
	exact, err := budget.Exact(budget.O200KBase)
	if err != nil {
		panic(err)
	}
	p := &Provider{script: script, exact: exact, originals: map[string]string{}, own: map[string]bool{}, recalled: map[string]bool{},
		closed: make(chan struct{})}
	p.server = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.server.URL + "/v1"
	return p
}

// Fail makes the next len(f) requests fail, one failure each, in order;
// the requests after them are answered again.
func (p *Provider) Fail(f ...Failure) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures = append(p.failures, f...)
}

// Hold makes the next streamed answer (a failure aside) stop after its
// first delta (its first piece of content, or its first tool call's id and
// name) until release is called, the client leaves or the provider closes;
// while it waits it sends SSE comments (": keep-alive"), as providers do,
// so that a client's idle time-out does not end it. held is closed when
// that answer stops there, before its first delta is sent: a client that
// has read the first delta and finds held closed knows the provider's turn
// had not ended. release may be called more than once.
func (p *Provider) Hold() (held <-chan struct{}, release func()) {
	h := &hold{held: make(chan struct{}), release: make(chan struct{})}
	p.mu.Lock()
	p.holds = append(p.holds, h)
	p.mu.Unlock()
	return h.held, func() { h.once.Do(func() { close(h.release) }) }
}

// Close stops the provider.
func (p *Provider) Close() {
	p.mu.Lock()
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	if p.active != nil {
		close(p.active.got) // ends the recall's goroutine
		p.active = nil
	}
	p.mu.Unlock()
	p.server.Close()
}

// Requests returns the requests so far.
func (p *Provider) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

// Recalls returns the recalls finished so far.
func (p *Provider) Recalls() []Recall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Recall(nil), p.recalls...)
}

func (p *Provider) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model         string          `json:"model"`
		Messages      json.RawMessage `json:"messages"`
		Tools         json.RawMessage `json:"tools"`
		Stream        bool            `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		openaifit.WriteError(w, http.StatusBadRequest, openaifit.ErrorDetail{Type: openaifit.TypeInvalidRequest, Message: err.Error()})
		return
	}
	msgs, err := openaifit.DecodeMessages(req.Messages)
	if err != nil || len(msgs) == 0 {
		openaifit.WriteError(w, http.StatusBadRequest, openaifit.ErrorDetail{Type: openaifit.TypeInvalidRequest, Message: "no messages"})
		return
	}
	p.mu.Lock()
	rec := Request{Messages: msgs, Tokens: conversation.Tokens(p.exact, msgs), Status: http.StatusOK, Stream: req.Stream}
	if len(req.Tools) > 0 {
		rec.ToolTokens = p.exact.Count(string(req.Tools))
	}
	for _, m := range msgs {
		if m.Role == conversation.RoleTool && isPlaceholder(m.Content) {
			rec.Placeholders++
		}
	}
	var cut *Failure
	if len(p.failures) > 0 && p.failures[0].MidStream && req.Stream {
		f := p.failures[0]
		p.failures = p.failures[1:]
		cut = &f
		rec.Status = cmp.Or(cut.Status, http.StatusInternalServerError)
	} else if len(p.failures) > 0 {
		f := p.failures[0]
		p.failures = p.failures[1:]
		if f.MidStream {
			f.Status = cmp.Or(f.Status, http.StatusInternalServerError)
		}
		rec.Status = f.Status
		if f.Hang {
			rec.Status = 0
		}
		p.requests = append(p.requests, rec)
		p.mu.Unlock()
		if f.Hang {
			select {
			case <-r.Context().Done():
			case <-p.closed:
			}
			return
		}
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		openaifit.WriteError(w, f.Status, openaifit.ErrorDetail{Type: openaifit.TypeServer,
			Message: fmt.Sprintf("openaifittest: a scripted failure (%d)", f.Status)})
		return
	}
	p.requests = append(p.requests, rec)
	answer := p.answer(msgs)
	answer.Role = conversation.RoleAssistant
	finish := "stop"
	if len(answer.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	resp := openaifit.ChatResponse{ID: fmt.Sprintf("chatcmpl-%d", len(p.requests)), Object: "chat.completion", Model: req.Model,
		Choices: []openaifit.Choice{{Message: answer, FinishReason: finish}},
		Usage:   &openaifit.Usage{PromptTokens: rec.Tokens, CompletionTokens: 5, TotalTokens: rec.Tokens + 5}}
	if !req.Stream {
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	var h *hold
	if cut == nil && len(p.holds) > 0 {
		h = p.holds[0]
		p.holds = p.holds[1:]
	}
	p.mu.Unlock()
	p.stream(w, r, resp, req.StreamOptions.IncludeUsage, h, cut)
}

// chunk is a chat.completion.chunk.
type chunk struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []chunkChoice    `json:"choices"`
	Usage   *openaifit.Usage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	FinishReason *string        `json:"finish_reason"`
}

// stream writes resp as server-sent events: the role, the content in
// pieces, each tool call's id and name, then its arguments in pieces, the
// finish reason, the usage when asked, and [DONE]. After the first delta
// it waits for h's release (h not nil), or ends with cut's error event (cut
// not nil).
func (p *Provider) stream(w http.ResponseWriter, r *http.Request, resp openaifit.ChatResponse, usage bool, h *hold, cut *Failure) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	event := func(data []byte) bool {
		_, err := fmt.Fprintf(w, "data: %s\n\n", data)
		return err == nil && rc.Flush() == nil
	}
	send := func(c chunk) bool {
		c.ID, c.Object, c.Model = resp.ID, "chat.completion.chunk", resp.Model
		if c.Choices == nil {
			c.Choices = []chunkChoice{}
		}
		b, _ := json.Marshal(c)
		return event(b)
	}
	delta := func(d map[string]any) chunk { return chunk{Choices: []chunkChoice{{Delta: d}}} }
	m := resp.Choices[0].Message
	deltas := []map[string]any{}
	for _, piece := range pieces(m.Content, " ") {
		deltas = append(deltas, map[string]any{"content": piece})
	}
	for i, tc := range m.ToolCalls {
		deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Function.Name, "arguments": ""}}}})
		for _, piece := range split(tc.Function.Arguments, 3) {
			deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": piece}}}})
		}
	}
	if !send(delta(map[string]any{"role": "assistant", "content": ""})) {
		return
	}
	for i, d := range deltas {
		if i == 0 && h != nil {
			close(h.held)
		}
		if !send(delta(d)) {
			return
		}
		if i > 0 {
			continue
		}
		if cut != nil {
			b, _ := json.Marshal(openaifit.ErrorBody{Error: openaifit.ErrorDetail{Type: openaifit.TypeServer,
				Message: fmt.Sprintf("openaifittest: a scripted failure mid-stream (%d)", cmp.Or(cut.Status, http.StatusInternalServerError))}})
			event(b)
			return
		}
		if h != nil && !p.wait(w, r, rc, h) {
			return
		}
	}
	finish := resp.Choices[0].FinishReason
	if !send(chunk{Choices: []chunkChoice{{Delta: map[string]any{}, FinishReason: &finish}}}) {
		return
	}
	if usage && !send(chunk{Usage: resp.Usage}) {
		return
	}
	event([]byte("[DONE]"))
}

// wait waits for h's release, sending a keep-alive comment now and then;
// it reports false when the client left or the provider closed.
func (p *Provider) wait(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, h *hold) bool {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-h.release:
			return true
		case <-r.Context().Done():
			return false
		case <-p.closed:
			return false
		case <-tick.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return false
			}
		}
	}
}

// pieces cuts s after each sep: "a b c" is "a ", "b ", "c".
func pieces(s, sep string) []string {
	var out []string
	for s != "" {
		i := strings.Index(s, sep)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+len(sep)])
		s = s[i+len(sep):]
	}
	return out
}

// split cuts s in n pieces or fewer, at rune boundaries, none empty.
func split(s string, n int) []string {
	var out []string
	size := max(len(s)/n, 1)
	for s != "" {
		i := min(size, len(s))
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

func isPlaceholder(s string) bool { return strings.HasPrefix(s, "[ctxfit] ") }

// answer decides the next message of the conversation msgs.
func (p *Provider) answer(msgs []conversation.Message) conversation.Message {
	for _, m := range msgs {
		if m.Role == conversation.RoleTool && !p.own[m.ToolCallID] && !isPlaceholder(m.Content) {
			if _, seen := p.originals[m.ToolCallID]; !seen {
				p.originals[m.ToolCallID] = m.Content
			}
		}
	}
	last := msgs[len(msgs)-1]
	if last.Role == conversation.RoleUser {
		// A new turn: the user's message is answered once the recalls
		// that the conversation's placeholders ask for are done.
		p.pending = &last.Content
	}
	if a := p.active; a != nil {
		// The answer to the recall's last call.
		var body []byte
		if last.Role == conversation.RoleTool && last.ToolCallID == a.last && !strings.HasPrefix(last.Content, "Error") {
			body = []byte(last.Content)
		}
		a.got <- body
		if m, ok := p.step(a); ok {
			return m
		}
	}
	for _, m := range msgs {
		if m.Role != conversation.RoleTool || !isPlaceholder(m.Content) || p.recalled[m.ToolCallID] {
			continue
		}
		if _, ok := p.originals[m.ToolCallID]; !ok || p.own[m.ToolCallID] {
			continue // a result the provider never read, or one of its recalls
		}
		args, err := placeholderCall(m.Content)
		p.recalled[m.ToolCallID] = true
		if err != nil {
			p.recalls = append(p.recalls, Recall{ToolCallID: m.ToolCallID, Original: p.originals[m.ToolCallID], Err: err})
			continue
		}
		a := &recall{id: m.ToolCallID, want: make(chan json.RawMessage), got: make(chan []byte), done: make(chan Recall, 1)}
		p.active = a
		go a.run(args, p.originals[m.ToolCallID])
		if m, ok := p.step(a); ok {
			return m
		}
	}
	if u := p.pending; u != nil {
		p.pending = nil
		if fn, args := p.script(*u); fn != "" {
			return p.call(fn, args, false)
		}
		return conversation.Message{Content: "Hello! Ask me to read something."}
	}
	return conversation.Message{Content: "Done: I read it."}
}

// step waits for the recall's next call, or its end.
func (p *Provider) step(a *recall) (conversation.Message, bool) {
	select {
	case args := <-a.want:
		a.calls++
		m := p.call("ctxfit_next", string(args), true)
		a.last = m.ToolCalls[0].ID
		return m, true
	case r := <-a.done:
		r.Calls = a.calls
		p.recalls = append(p.recalls, r)
		p.active = nil
		return conversation.Message{}, false
	}
}

// call is an assistant message that calls fn.
func (p *Provider) call(fn, args string, own bool) conversation.Message {
	p.next++
	id := fmt.Sprintf("call_%d", p.next)
	if own {
		p.own[id] = true
	}
	return conversation.Message{ToolCalls: []conversation.ToolCall{{ID: id, Type: "function", Function: conversation.FunctionCall{Name: fn, Arguments: args}}}}
}

// run follows a placeholder from its first call, and reports what it
// rebuilt.
func (a *recall) run(first json.RawMessage, original string) {
	call := func(args json.RawMessage) ([]byte, error) {
		a.want <- args
		body, ok := <-a.got
		if !ok {
			return nil, errors.New("openaifittest: the provider closed")
		}
		if body == nil {
			return nil, errors.New("openaifittest: ctxfit_next answered an error")
		}
		return body, nil
	}
	r := Recall{ToolCallID: a.id, Original: original}
	body, err := call(first)
	if err == nil {
		var out []byte
		if env := firstJSON(string(body)); env != nil {
			// A JSON object or array comes back in pages: follow them.
			out, _, err = follow.Rebuild(env, func(cursor string, part int64) ([]byte, error) {
				in := map[string]any{"cursor": cursor}
				if part != 0 {
					in["part"] = part
				}
				args, _ := json.Marshal(in)
				body, err := call(args)
				if err != nil {
					return nil, err
				}
				if env := firstJSON(string(body)); env != nil {
					return env, nil
				}
				return nil, errors.New("openaifittest: a page of a recall is not JSON")
			})
		} else {
			out, err = readText(body, call)
		}
		r.Rebuilt = string(out)
	}
	r.Err = err
	a.done <- r
}

// nextCall is the call a chunk's guidance line gives for the next chunk.
var nextCall = regexp.MustCompile(`For the next chunk call ctxfit_next with (\{"cursor":"[^"]*"\})\.$`)

// readText reads a text that comes back as text: each answer is a chunk
// of it, a newline and a guidance line that gives the call of the next
// chunk, or says that this is the last.
func readText(body []byte, call func(json.RawMessage) ([]byte, error)) ([]byte, error) {
	var out []byte
	for {
		i := bytes.LastIndexByte(body, '\n')
		if i < 0 {
			return nil, fmt.Errorf("openaifittest: an answer of a recall has no guidance line: %.200s", body)
		}
		line := body[i+1:]
		if !bytes.HasPrefix(line, []byte("Showing chunk ")) {
			return nil, fmt.Errorf("openaifittest: an answer of a recall ends with no guidance line: %.200s", line)
		}
		out = append(out, body[:i]...)
		m := nextCall.FindSubmatch(line)
		if m == nil {
			return out, nil // the last chunk
		}
		var err error
		if body, err = call(m[1]); err != nil {
			return nil, err
		}
	}
}

// placeholderCall reads the arguments of the call a placeholder names:
// "... call ctxfit_next with {...}."
func placeholderCall(text string) (json.RawMessage, error) {
	const with = " with "
	i := strings.LastIndex(text, with)
	if i < 0 || !strings.HasSuffix(text, ".") {
		return nil, fmt.Errorf("openaifittest: not a placeholder: %.100s", text)
	}
	args := json.RawMessage(strings.TrimSuffix(text[i+len(with):], "."))
	if !json.Valid(args) {
		return nil, fmt.Errorf("openaifittest: the placeholder's arguments are not JSON: %s", args)
	}
	return args, nil
}

// firstJSON returns the shaped body that starts an answer of a recall of
// a JSON object or array (a page; the guidance line follows it), nil when
// the answer does not start with one.
func firstJSON(text string) []byte {
	var v map[string]json.RawMessage
	var raw json.RawMessage
	if json.NewDecoder(strings.NewReader(text)).Decode(&raw) != nil || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	if _, ok := v["nextCursor"]; !ok {
		return nil
	}
	return raw
}
