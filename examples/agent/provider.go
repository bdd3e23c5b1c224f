package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/openaifit"
)

// Circuit breaker of a provider: 3 consecutive failed requests (each after
// its retries) open it for 60 s.
const (
	providerBreakerFailures = 3
	providerBreakerOpen     = 60 * time.Second
)

// retryPolicy says how a provider's failures are retried: a 5xx, a 429, a
// time-out or a connection error is tried again up to retries times, after
// a delay of base doubled at each retry, at most max, with full jitter
// (a random delay between half of it and all of it); a 429's Retry-After,
// when it is longer, is the delay. A retry that would end after the
// request's deadline is not made.
//
// The zero value makes no retries.
type retryPolicy struct {
	retries   int
	base, max time.Duration
}

// delay returns the time to wait before retry n (0 for the first), at
// least after, the Retry-After of a 429.
func (r retryPolicy) delay(n int, after time.Duration) time.Duration {
	d := r.base << min(n, 20)
	if d > r.max || d <= 0 {
		d = r.max
	}
	d = d/2 + rand.N(d/2+1)
	return max(d, after)
}

// provider calls an OpenAI-compatible chat-completions API at a base URL
// (https://api.openai.com/v1, http://localhost:11434/v1, ...).
type provider struct {
	name    string
	base    string
	key     string
	client  *http.Client
	timeout time.Duration // of one attempt
	retry   retryPolicy
	breaker *gobreaker.CircuitBreaker[*openaifit.ChatResponse]
}

func newProvider(name, base, key string, timeout time.Duration, retry retryPolicy) *provider {
	return &provider{
		name:    name,
		base:    strings.TrimSuffix(base, "/"),
		key:     key,
		client:  &http.Client{},
		timeout: timeout,
		retry:   retry,
		breaker: gobreaker.NewCircuitBreaker[*openaifit.ChatResponse](gobreaker.Settings{
			Name:         "provider " + name,
			MaxRequests:  1,
			Timeout:      providerBreakerOpen,
			ReadyToTrip:  func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= providerBreakerFailures },
			IsSuccessful: func(err error) bool { return !providerFailed(err) },
		}),
	}
}

// providerFailed reports whether err says the provider is failing (a
// 5xx, a time-out, no connection), which counts toward its breaker; a
// 429 (the provider works, and limits us), a 4xx (the request's fault)
// and a client that left do not.
func providerFailed(err error) bool {
	var pe *providerError
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return false
	case errors.As(err, &pe):
		return pe.status >= 500
	}
	return true
}

// retryable reports whether an attempt that failed with err may be made
// again: a 5xx, a 429, a time-out of the attempt, a connection error or a
// broken stream (made again only when none of it reached the client).
func retryable(err error) bool {
	var pe *providerError
	if errors.As(err, &pe) {
		return pe.status >= 500 || pe.status == http.StatusTooManyRequests
	}
	var se *streamError
	if errors.As(err, &se) {
		return true
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errAttemptTimeout) || errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// errAttemptTimeout: one attempt took longer than the provider's time-out.
var errAttemptTimeout = errors.New("the provider did not answer in time")

// providerError is a provider's answer other than 200.
type providerError struct {
	provider   string
	status     int
	detail     openaifit.ErrorDetail
	retryAfter time.Duration // of a 429 or 503; 0 when absent
}

func (e *providerError) Error() string {
	return fmt.Sprintf("the provider %s answered %d: %s", e.provider, e.status, e.detail.Message)
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// chat sends one chat-completions request, retried by the provider's
// policy within ctx's deadline, through its circuit breaker: a request
// and its retries count as one outcome. With ts, the provider is asked to
// stream ("stream": true) and its deltas are relayed through ts as they
// come; an attempt that failed after a delta reached the client is not
// made again.
func (p *provider) chat(ctx context.Context, req openaifit.ChatRequest, ts *turnStream) (*openaifit.ChatResponse, error) {
	req.Stream = ts != nil
	var body []byte
	var err error
	if ts != nil {
		body, err = json.Marshal(struct {
			openaifit.ChatRequest
			StreamOptions map[string]bool `json:"stream_options"`
		}{req, map[string]bool{"include_usage": true}})
	} else {
		body, err = json.Marshal(req)
	}
	if err != nil {
		return nil, err
	}
	return p.breaker.Execute(func() (*openaifit.ChatResponse, error) {
		for n := 0; ; n++ {
			resp, err := p.attempt(ctx, body, ts)
			if err == nil || n >= p.retry.retries || !retryable(err) || (ts != nil && ts.sent) {
				return resp, err
			}
			var after time.Duration
			var pe *providerError
			if errors.As(err, &pe) {
				after = pe.retryAfter
			}
			wait := p.retry.delay(n, after)
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
				return nil, err // the retry would end after the request's deadline
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, err
			case <-t.C:
			}
		}
	})
}

// attempt makes one request. The provider's time-out bounds the wait for
// its answer and, when it streams, each wait for the next line of the
// stream.
func (p *provider) attempt(ctx context.Context, body []byte, ts *turnStream) (*openaifit.ChatResponse, error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(p.timeout, func() { cancel(errAttemptTimeout) })
	defer timer.Stop()
	alive := func() { timer.Reset(p.timeout) }
	timedOut := func(err error) error {
		if ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
			return fmt.Errorf("%w (%s, provider %s)", errAttemptTimeout, p.timeout, p.name)
		}
		return err
	}
	hr, err := http.NewRequestWithContext(actx, http.MethodPost, p.base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if p.key != "" {
		hr.Header.Set("Authorization", "Bearer "+p.key)
	}
	resp, err := p.client.Do(hr)
	if err != nil {
		return nil, timedOut(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && ts != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		alive()
		out, err := p.readStream(resp.Body, ts, alive)
		if err != nil {
			return nil, timedOut(err)
		}
		return out, nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, timedOut(err)
	}
	if resp.StatusCode != http.StatusOK {
		var eb openaifit.ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error.Message == "" {
			eb.Error.Message = strings.TrimSpace(string(data[:min(len(data), 300)]))
		}
		return nil, &providerError{provider: p.name, status: resp.StatusCode, detail: eb.Error,
			retryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	var out openaifit.ChatResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("the answer of the provider %s is not a chat completion: %w", p.name, err)
	}
	if len(out.Choices) == 0 {
		return nil, fmt.Errorf("the answer of the provider %s has no choices", p.name)
	}
	ts.message(out.Choices[0].Message) // a provider that did not stream: its turn whole
	return &out, nil
}

// streamChunk is what the agent reads of an event of a provider's stream:
// a chat.completion.chunk, or an error.
type streamChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openaifit.Usage       `json:"usage"`
	Error *openaifit.ErrorDetail `json:"error"`
}

// streamError is a provider's stream that broke: an error event, or an
// end before the turn's.
type streamError struct {
	provider string
	message  string
}

func (e *streamError) Error() string {
	return fmt.Sprintf("the stream of the provider %s broke: %s", e.provider, e.message)
}

// maxStreamLine is the longest line of a provider's stream the agent reads.
const maxStreamLine = 16 << 20

// readStream reads a provider's stream of server-sent events, relays each
// content and tool-call delta of its first choice through ts as it comes,
// and returns the turn assembled: the content, each tool call whole (its
// arguments the pieces put together, in the order of their indices), the
// finish reason and the usage. alive is called at each line.
func (p *provider) readStream(r io.Reader, ts *turnStream, alive func()) (*openaifit.ChatResponse, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxStreamLine)
	var content strings.Builder
	var calls []conversation.ToolCall
	at := map[int]int{} // the provider's index -> calls
	var finish string
	var usage *openaifit.Usage
	done := false
	for !done && sc.Scan() {
		alive()
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue // a comment (a keep-alive), an event name, an id
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			done = true
			continue
		}
		var c streamChunk
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, &streamError{provider: p.name, message: "an event is not a chat.completion.chunk: " + err.Error()}
		}
		if c.Error != nil {
			return nil, &streamError{provider: p.name, message: c.Error.Message}
		}
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			content.WriteString(ch.Delta.Content)
			ts.text(ch.Delta.Content)
			for _, d := range ch.Delta.ToolCalls {
				i, ok := at[d.Index]
				if !ok {
					i = len(calls)
					at[d.Index] = i
					calls = append(calls, conversation.ToolCall{Type: "function"})
				}
				tc := &calls[i]
				// As the openai clients do: an id or a name a delta repeats
				// replaces it; the arguments' pieces add up.
				tc.ID = cmpOr(d.ID, tc.ID)
				tc.Function.Name = cmpOr(d.Function.Name, tc.Function.Name)
				tc.Function.Arguments += d.Function.Arguments
				ts.toolCall(d.Index, d.ID, d.Function.Name, d.Function.Arguments)
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				finish = *ch.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !done && finish == "" {
		return nil, &streamError{provider: p.name, message: "it ended before the turn did (no finish_reason, no [DONE])"}
	}
	for _, tc := range calls {
		if tc.ID == "" || tc.Function.Name == "" {
			return nil, &streamError{provider: p.name, message: "a tool call came without its id or name"}
		}
	}
	m := conversation.Message{Role: conversation.RoleAssistant, Content: content.String(), ToolCalls: calls}
	return &openaifit.ChatResponse{Object: "chat.completion", Choices: []openaifit.Choice{{Message: m, FinishReason: finish}}, Usage: usage}, nil
}

// providers are the providers the agent knows, by name, in the order they
// were given; the first is the default unless -default-provider names
// another.
type providers struct {
	list []*provider
	def  string
}

// byName returns the provider named name.
func (ps *providers) byName(name string) (*provider, bool) {
	if ps == nil {
		return nil, false
	}
	for _, p := range ps.list {
		if p.name == name {
			return p, true
		}
	}
	return nil, false
}

// names returns the providers' names, in order.
func (ps *providers) names() []string {
	out := make([]string, len(ps.list))
	for i, p := range ps.list {
		out[i] = p.name
	}
	return out
}

// order returns the providers to try for a request that prefers
// preferred ("" for none): it first, then the default, then the others in
// their order.
func (ps *providers) order(preferred string) []*provider {
	out := make([]*provider, 0, len(ps.list))
	seen := map[string]bool{}
	add := func(name string) {
		if p, ok := ps.byName(name); ok && !seen[name] {
			seen[name] = true
			out = append(out, p)
		}
	}
	add(preferred)
	add(ps.def)
	for _, p := range ps.list {
		add(p.name)
	}
	return out
}

// fallsBack reports whether a request that failed at one provider with
// err goes on to the next: any failure but a request the provider found
// malformed (400, 404 of a model, 413, 422), which another would refuse
// too, and a client that left.
func fallsBack(err error) bool {
	var pe *providerError
	if errors.As(err, &pe) {
		switch pe.status {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			return false
		}
		return true
	}
	return !errors.Is(err, context.Canceled)
}

// chat sends req to the providers in the order preferred gives, going on
// to the next when one fails (after its retries) before a delta of its
// turn reached the client (ts), and returns the answer and the name of the
// provider that gave it. When every one fails, the
// error is the first provider's when it was a 429 (its Retry-After the
// smallest the providers gave), the last one's otherwise.
func (ps *providers) chat(ctx context.Context, preferred string, req openaifit.ChatRequest, ts *turnStream) (*openaifit.ChatResponse, string, error) {
	var errs []error
	var limited *providerError
	for _, p := range ps.order(preferred) {
		resp, err := p.chat(ctx, req, ts)
		if err == nil {
			return resp, p.name, nil
		}
		if ts != nil && ts.sent {
			return nil, p.name, err // a part of the turn reached the client: no other provider can go on with it
		}
		errs = append(errs, err)
		var pe *providerError
		if errors.As(err, &pe) && pe.status == http.StatusTooManyRequests && (limited == nil || pe.retryAfter < limited.retryAfter) {
			limited = pe
		}
		if !fallsBack(err) || ctx.Err() != nil {
			break
		}
	}
	if limited != nil && len(errs) == len(ps.list) {
		return nil, "", limited
	}
	return nil, "", errs[len(errs)-1]
}
