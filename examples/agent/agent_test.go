package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/openaifit"
	"github.com/ctxfit/ctxfit/openaifit/openaifittest"
	"github.com/ctxfit/ctxfit/store"
)

// envServer makes the test binary an MCP server over stdio (see
// TestMain), so that a test can kill it as a crash would.
const envServer = "AGENT_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(envServer) == "1" {
		serveStdio()
		return
	}
	os.Exit(m.Run())
}

// calls counts the calls the stdio server got, in its process.
var calls atomic.Int64

// serveStdio serves read (read-only), append (neither read-only nor
// idempotent) and echo (its input schema requires n, an integer) over
// stdio.
func serveStdio() {
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	type readIn struct {
		Path string `json:"path"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "read", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, readIn) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("the text, read in process %d", os.Getpid())}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "append"}, func(context.Context, *mcp.CallToolRequest, readIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "appended"}}}, nil, nil
	})
	type echoIn struct {
		N int `json:"n" jsonschema:"a number"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.N)}}}, nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// script: "call TOOL ARGS" calls TOOL with ARGS; anything else is answered.
func script(user string) (string, string) {
	if rest, ok := strings.CutPrefix(user, "call "); ok {
		tool, args, _ := strings.Cut(rest, " ")
		return tool, args
	}
	return "", ""
}

// testAgent is the agent with scripted providers and the stdio server.
type testAgent struct {
	url       string
	agent     *agent
	providers map[string]*openaifittest.Provider
	logs      *syncbuf.Buffer
}

// startAgent runs the agent with providers named a and b (a the default)
// and the test binary as the MCP server "local"; args are added to (and
// may override) the test's settings: tiny retry delays.
func startAgent(t *testing.T, args ...string) *testAgent {
	t.Helper()
	t.Setenv(envServer, "1")
	f := &testAgent{providers: map[string]*openaifittest.Provider{}, logs: &syncbuf.Buffer{}}
	all := []string{"-model", "scripted", "-rate", "1000", "-retry-base", "1ms", "-retry-max", "2ms", "-health-interval", "1h", "-log-arguments"}
	for _, name := range []string{"a", "b"} {
		p := openaifittest.New(script)
		t.Cleanup(p.Close)
		f.providers[name] = p
		all = append(all, "-provider", name+"="+p.URL)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	all = append(all, "-mcp", "local=stdio:"+exe)
	s, err := parseSettings(append(all, args...), func(k string) string {
		return map[string]string{"CTXFIT_THRESHOLD": "800", "CTXFIT_HARD_CAP": "1500"}[k]
	}, io.Discard)
	require.NoError(t, err)
	logger := slog.New(slog.NewJSONHandler(f.logs, nil))
	a, release, err := newAgent(context.Background(), s, func(string) string { return "" }, logger)
	require.NoError(t, err)
	t.Cleanup(release)
	srv := httptest.NewServer(a.routes())
	t.Cleanup(srv.Close)
	f.url, f.agent = srv.URL+"/v1", a
	return f
}

// post sends a chat request with body (a JSON object) and headers.
func (f *testAgent) post(t *testing.T, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// ask sends one user message, with headers.
func (f *testAgent) ask(t *testing.T, content string, headers ...string) (*http.Response, chatResponse) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "scripted", "messages": []map[string]any{{"role": "user", "content": content}}})
	resp, b := f.post(t, string(body), headers...)
	var cr chatResponse
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal(b, &cr), "%s", b)
	}
	return resp, cr
}

// toolLines returns the "tool call" lines of the log.
func (f *testAgent) toolLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(f.logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		if line["msg"] == "tool call" {
			out = append(out, line)
		}
	}
	return out
}

func TestProviderFailuresAreRetriedWithinTheRequestsDeadline(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures []openaifittest.Failure
	}{
		{"a 500 then a 503 are retried", []openaifittest.Failure{{Status: 500}, {Status: 503}}},
		{"a 429 with Retry-After: 0 is retried", []openaifittest.Failure{{Status: 429, RetryAfter: "0"}}},
		{"a provider that does not answer in time is retried", []openaifittest.Failure{{Hang: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startAgent(t, "-provider-timeout", "300ms")
			f.providers["a"].Fail(tc.failures...)
			resp, cr := f.ask(t, "hello")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, "Hello! Ask me to read something.", cr.Choices[0].Message.Content)
			assert.Equal(t, "a", cr.ProviderUsed, "retried at the same provider")
			assert.Len(t, f.providers["a"].Requests(), len(tc.failures)+1)
			assert.Empty(t, f.providers["b"].Requests())
		})
	}
}

func TestAProviders429ThatIsNotRetriedReachesTheClientAs429(t *testing.T) {
	f := startAgent(t, "-request-timeout", "1m")
	// Retry-After beyond the request's deadline: no retry at a, and b
	// limits us too.
	f.providers["a"].Fail(openaifittest.Failure{Status: 429, RetryAfter: "3600"})
	f.providers["b"].Fail(openaifittest.Failure{Status: 429, RetryAfter: "120"})
	resp, b := f.post(t, `{"model":"scripted","messages":[{"role":"user","content":"hello"}]}`)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s", b)
	assert.Equal(t, "120", resp.Header.Get("Retry-After"), "the shortest wait the providers gave")
	var e openaifit.ErrorBody
	require.NoError(t, json.Unmarshal(b, &e))
	assert.Equal(t, "provider_rate_limited", e.Error.Code)
	assert.Len(t, f.providers["a"].Requests(), 1)
	assert.Len(t, f.providers["b"].Requests(), 1)

	// 429s do not count toward the breaker: after three, the provider is
	// still called.
	for range 3 {
		f.providers["a"].Fail(openaifittest.Failure{Status: 429, RetryAfter: "3600"})
		f.providers["b"].Fail(openaifittest.Failure{Status: 429, RetryAfter: "3600"})
		resp, _ := f.ask(t, "hello")
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	}
	for _, p := range f.agent.providers.list {
		assert.Equal(t, "closed", p.breaker.State().String(), "provider %s", p.name)
	}
	resp, cr := f.ask(t, "hello")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "a", cr.ProviderUsed)
}

func TestProvidersByNameWithADefaultPreferencesAndFallback(t *testing.T) {
	f := startAgent(t)
	t.Run("the default answers a request that prefers none", func(t *testing.T) {
		resp, cr := f.ask(t, "hello")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "a", cr.ProviderUsed)
	})
	t.Run("X-Provider picks the provider of a request", func(t *testing.T) {
		resp, cr := f.ask(t, "hello", headerProvider, "b")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "b", cr.ProviderUsed)
	})
	t.Run("the provider field picks it too, and the session keeps the preference", func(t *testing.T) {
		resp, b := f.post(t, `{"model":"scripted","provider":"b","messages":[{"role":"user","content":"hello"}]}`)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var cr chatResponse
		require.NoError(t, json.Unmarshal(b, &cr))
		assert.Equal(t, "b", cr.ProviderUsed)
		session := resp.Header.Get(headerSession)
		resp, cr = f.ask(t, "hello", headerSession, session)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "b", cr.ProviderUsed, "the session's preference")
	})
	t.Run("a provider that fails after its retries falls back to the next", func(t *testing.T) {
		f.providers["a"].Fail(openaifittest.Failure{Status: 502}, openaifittest.Failure{Status: 502}, openaifittest.Failure{Status: 502})
		before := len(f.providers["a"].Requests())
		resp, cr := f.ask(t, "hello")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "b", cr.ProviderUsed)
		assert.Len(t, f.providers["a"].Requests(), before+3, "the first try and two retries")
	})
	t.Run("an unknown provider is a 400 that names the known ones", func(t *testing.T) {
		resp, b := f.post(t, `{"model":"scripted","messages":[{"role":"user","content":"hello"}]}`, headerProvider, "nope")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, string(b), "invalid_provider")
		assert.Contains(t, string(b), "a, b")
	})
	t.Run("/v1/models lists the providers, the default first", func(t *testing.T) {
		resp, err := http.Get(f.url + "/models")
		require.NoError(t, err)
		defer resp.Body.Close()
		var list struct {
			Data []struct {
				ID      string `json:"id"`
				Default bool   `json:"default"`
			} `json:"data"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
		var ids []string
		for _, m := range list.Data {
			ids = append(ids, m.ID)
		}
		assert.Equal(t, []string{"scripted", "a", "b"}, ids)
		assert.True(t, list.Data[1].Default)
	})
}

func TestAReadOnlyToolCallOnADeadConnectionReconnectsAndRetriesOnce(t *testing.T) {
	f := startAgent(t)
	resp, cr := f.ask(t, `call read {"path":"x"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, cr.ToolCalls, 1)
	require.Equal(t, statusSuccess, cr.ToolCalls[0].Status)

	kill := func() {
		u := f.agent.servers[0]
		u.mu.Lock()
		proc := u.proc
		u.mu.Unlock()
		require.NotNil(t, proc)
		require.NoError(t, proc.Kill())
		_, _ = proc.Wait()
	}
	kill()
	resp, cr = f.ask(t, `call read {"path":"x"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, cr.ToolCalls, 1)
	assert.Equal(t, statusSuccess, cr.ToolCalls[0].Status, "reconnected and called again: %+v", cr.ToolCalls[0])

	kill()
	resp, cr = f.ask(t, `call append {"path":"x"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, cr.ToolCalls, 1)
	assert.Equal(t, statusFailure, cr.ToolCalls[0].Status, "a tool that may not run twice is not called again")
	reqs := f.providers["a"].Requests()
	last := reqs[len(reqs)-1].Messages
	assert.Contains(t, last[len(last)-1].Content, "Error:", "the model reads that the call failed")
}

func TestToolArgumentsAreCheckedAgainstTheInputSchema(t *testing.T) {
	f := startAgent(t)
	resp, cr := f.ask(t, `call echo {"n":"seven"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, cr.ToolCalls, 1)
	assert.Equal(t, statusFailure, cr.ToolCalls[0].Status)
	assert.Contains(t, cr.ToolCalls[0].Error, "INVALID_ARGUMENTS")
	reqs := f.providers["a"].Requests()
	last := reqs[len(reqs)-1].Messages
	got := last[len(last)-1].Content
	assert.Contains(t, got, "INVALID_ARGUMENTS: the arguments of echo do not match its input schema")
	assert.Contains(t, got, `"n"`, "the message names what is wrong and shows the schema")
	assert.Contains(t, got, "Call echo again with arguments that match")

	resp, cr = f.ask(t, `call echo {"n":7}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, statusSuccess, cr.ToolCalls[0].Status)
}

func TestTheResponseHasTheSeedsFieldsAndRecords(t *testing.T) {
	f := startAgent(t)
	resp, b := f.post(t, `{"model":"scripted","messages":[{"role":"user","content":"call read {\"path\":\"x\",\"password\":\"hunter2\"}"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &raw))
	for _, k := range []string{"tool_calls", "provider_used", "duration_ms"} {
		assert.Contains(t, raw, k)
	}
	var cr chatResponse
	require.NoError(t, json.Unmarshal(b, &cr))
	require.Len(t, cr.ToolCalls, 1)
	rec := cr.ToolCalls[0]
	assert.Equal(t, "call_1", rec.ID, "the model's tool_call id")
	assert.Equal(t, "read", rec.ToolName)
	assert.Equal(t, "local", rec.Server)
	assert.False(t, rec.StartedAt.IsZero())
	assert.False(t, rec.CompletedAt.Before(rec.StartedAt))
	assert.NotContains(t, string(rec.Arguments), "hunter2")

	lines := f.toolLines(t)
	require.Len(t, lines, 1)
	assert.Equal(t, "call_1", lines[0]["tool_call_id"])
	assert.NotEmpty(t, lines[0]["started_at"])
	assert.NotContains(t, lines[0]["arguments"], "hunter2", "secrets are redacted from the logged arguments")
	assert.Contains(t, lines[0]["arguments"], `"path":"x"`)
}

func TestAResentHistoryIsNotAddedTwice(t *testing.T) {
	f := startAgent(t)
	resp, b := f.post(t, `{"model":"scripted","messages":[{"role":"user","content":"hello"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	session := resp.Header.Get(headerSession)
	var cr chatResponse
	require.NoError(t, json.Unmarshal(b, &cr))
	// The client sends the whole conversation again, as chat clients do.
	body, _ := json.Marshal(map[string]any{"model": "scripted", "messages": []map[string]any{
		{"role": "user", "content": "hello"}, {"role": "assistant", "content": cr.Choices[0].Message.Content}, {"role": "user", "content": "hello again"}}})
	resp, _ = f.post(t, string(body), headerSession, session)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	reqs := f.providers["a"].Requests()
	got := reqs[len(reqs)-1].Messages
	assert.Len(t, got, 3, "3 messages sent, 3 reach the provider: %+v", got)

	// New messages only are added as they are.
	resp, _ = f.ask(t, "hello", headerSession, session)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	reqs = f.providers["a"].Requests()
	assert.Len(t, reqs[len(reqs)-1].Messages, 5)
}

func TestAppendNew(t *testing.T) {
	u := func(s string) conversation.Message {
		return conversation.Message{Role: conversation.RoleUser, Content: s}
	}
	as := func(s string) conversation.Message {
		return conversation.Message{Role: conversation.RoleAssistant, Content: s}
	}
	call := conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c1"}}}
	result := conversation.Message{Role: conversation.RoleTool, ToolCallID: "c1", Content: "r"}
	stored := []conversation.Message{u("hi"), call, result, as("done"), u("and?"), as("more")}
	for _, tc := range []struct {
		name string
		req  []conversation.Message
		want int // messages added
	}{
		{"a new message alone is added", []conversation.Message{u("next")}, 1},
		{"the whole visible history resent adds only what follows it", []conversation.Message{u("hi"), as("done"), u("and?"), as("more"), u("next")}, 1},
		{"the history's tail resent adds only what follows it", []conversation.Message{as("more"), u("next")}, 1},
		{"a history that does not end as the session's is added whole", []conversation.Message{u("hi"), as("other"), u("next")}, 3},
		{"a repeated question is a new message", []conversation.Message{u("more")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := appendNew(stored, tc.req)
			assert.Len(t, got, len(stored)+tc.want)
			assert.Equal(t, tc.req[len(tc.req)-tc.want:], got[len(stored):])
		})
	}
}

// events reads a chat stream's server-sent events one at a time.
type events struct {
	resp *http.Response
	sc   *bufio.Scanner
}

// stream posts a streamed chat request with body (a JSON object), within
// 30 s at most; the response is closed when the test ends.
func (f *testAgent) stream(t *testing.T, body string) *events {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return &events{resp: resp, sc: bufio.NewScanner(resp.Body)}
}

// next returns the data of the next event; false at the end of the
// stream.
func (e *events) next(t *testing.T) (string, bool) {
	t.Helper()
	for e.sc.Scan() {
		data, ok := strings.CutPrefix(e.sc.Text(), "data: ")
		if ok {
			return data, true
		}
		require.True(t, e.sc.Text() == "" || strings.HasPrefix(e.sc.Text(), ":"), "%q", e.sc.Text())
	}
	require.NoError(t, e.sc.Err())
	return "", false
}

// streamed is what a client adds up of a chat stream.
type streamed struct {
	content   strings.Builder
	toolCalls map[int]*conversation.ToolCall // by index
	deltas    int                            // tool-call deltas
	finish    string
	last      map[string]any // the chunk with the finish reason
	usage     bool
	done      bool                   // data: [DONE]
	err       *openaifit.ErrorDetail // an error event
}

// add adds one event up; it reports whether it was a content delta.
func (s *streamed) add(t *testing.T, data string) bool {
	t.Helper()
	if data == "[DONE]" {
		s.done = true
		return false
	}
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Delta struct {
				Content   *string `json:"content"`
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
	require.NoError(t, json.Unmarshal([]byte(data), &c), "%s", data)
	if c.Error != nil {
		s.err = c.Error
		return false
	}
	assert.Equal(t, "chat.completion.chunk", c.Object)
	s.usage = s.usage || c.Usage != nil
	isContent := false
	for _, ch := range c.Choices {
		if ch.Delta.Content != nil && *ch.Delta.Content != "" {
			s.content.WriteString(*ch.Delta.Content)
			isContent = true
		}
		for _, d := range ch.Delta.ToolCalls {
			s.deltas++
			if s.toolCalls == nil {
				s.toolCalls = map[int]*conversation.ToolCall{}
			}
			tc := s.toolCalls[d.Index]
			if tc == nil {
				tc = &conversation.ToolCall{}
				s.toolCalls[d.Index] = tc
			}
			tc.ID += d.ID
			tc.Function.Name += d.Function.Name
			tc.Function.Arguments += d.Function.Arguments
		}
		if ch.FinishReason != nil {
			s.finish = *ch.FinishReason
			require.NoError(t, json.Unmarshal([]byte(data), &s.last))
		}
	}
	return isContent
}

// readAll adds up the events to the end of the stream.
func (s *streamed) readAll(t *testing.T, e *events) {
	t.Helper()
	for {
		data, ok := e.next(t)
		if !ok {
			return
		}
		s.add(t, data)
	}
}

func TestStreamingRelaysTheProvidersContentAsItComes(t *testing.T) {
	f := startAgent(t)
	held, release := f.providers["a"].Hold()
	defer release()
	e := f.stream(t, `{"model":"scripted","stream":true,"messages":[{"role":"user","content":"hello"}]}`)
	require.Equal(t, http.StatusOK, e.resp.StatusCode)
	assert.Equal(t, "text/event-stream", e.resp.Header.Get("Content-Type"))
	var s streamed
	for {
		data, ok := e.next(t)
		require.True(t, ok, "the stream ended before its first content delta")
		if s.add(t, data) {
			break
		}
	}
	select {
	case <-held:
	default:
		t.Fatal("the first content delta came, but the provider never held a streamed answer: the agent did not stream from the provider")
	}
	first := s.content.String()
	assert.NotEqual(t, "Hello! Ask me to read something.", first, "only the first delta came while the provider held its turn")
	assert.True(t, strings.HasPrefix("Hello! Ask me to read something.", first), "%q", first)

	release() // the provider's turn goes on, and ends
	s.readAll(t, e)
	assert.Equal(t, "Hello! Ask me to read something.", s.content.String())
	assert.Equal(t, "stop", s.finish)
	assert.True(t, s.done)
	reqs := f.providers["a"].Requests()
	require.Len(t, reqs, 1)
	assert.True(t, reqs[0].Stream, "the agent asked the provider to stream")
}

func TestStreamingRunsToolCallsBetweenStreamedTurns(t *testing.T) {
	f := startAgent(t)
	e := f.stream(t, `{"model":"scripted","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"call read {\"path\":\"x\"}"}]}`)
	require.Equal(t, http.StatusOK, e.resp.StatusCode)
	assert.Equal(t, "text/event-stream", e.resp.Header.Get("Content-Type"))
	var s streamed
	s.readAll(t, e)
	assert.True(t, s.done)
	assert.Equal(t, "Done: I read it.", s.content.String())
	require.Len(t, s.toolCalls, 1)
	tc := s.toolCalls[0]
	assert.Equal(t, "call_1", tc.ID)
	assert.Equal(t, "read", tc.Function.Name)
	assert.JSONEq(t, `{"path":"x"}`, tc.Function.Arguments, "the pieces of the arguments add up")
	assert.Greater(t, s.deltas, 1, "the tool call came as the provider streamed it: its id and name, then its arguments in pieces")
	assert.Equal(t, "stop", s.finish)
	assert.Equal(t, "a", s.last["provider_used"])
	require.Len(t, s.last["tool_calls"], 1)
	rec := s.last["tool_calls"].([]any)[0].(map[string]any)
	assert.Equal(t, statusSuccess, rec["status"], "the tool ran with the arguments put together: %v", rec)
	assert.JSONEq(t, `{"path":"x"}`, string(must(json.Marshal(rec["arguments"]))))
	assert.True(t, s.usage, "stream_options.include_usage: a usage chunk")

	reqs := f.providers["a"].Requests()
	require.Len(t, reqs, 2, "a turn, the tool call, the next turn")
	for i, r := range reqs {
		assert.True(t, r.Stream, "request %d was streamed", i)
	}
	last := reqs[1].Messages
	assert.Equal(t, `{"path":"x"}`, last[len(last)-2].ToolCalls[0].Function.Arguments, "the call as the model made it goes back to the model")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestStreamingAndProviderFailures(t *testing.T) {
	t.Run("a provider that fails mid-stream ends the stream with an error event, neither retried nor replaced", func(t *testing.T) {
		f := startAgent(t)
		f.providers["a"].Fail(openaifittest.Failure{Status: 500, MidStream: true})
		e := f.stream(t, `{"model":"scripted","stream":true,"messages":[{"role":"user","content":"hello"}]}`)
		require.Equal(t, http.StatusOK, e.resp.StatusCode)
		var s streamed
		s.readAll(t, e)
		assert.Equal(t, "Hello! ", s.content.String(), "the delta that came before the failure")
		require.NotNil(t, s.err, "an error event as OpenAI sends one")
		assert.Equal(t, "provider_unavailable", s.err.Code)
		assert.Contains(t, s.err.Message, "mid-stream")
		assert.False(t, s.done, "no [DONE] after an error")
		assert.Len(t, f.providers["a"].Requests(), 1, "not retried after a delta reached the client")
		assert.Empty(t, f.providers["b"].Requests(), "no other provider")

		// The session goes on.
		resp, cr := f.ask(t, "hello")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "a", cr.ProviderUsed)
	})
	t.Run("a provider that fails before its first delta is retried, then replaced", func(t *testing.T) {
		f := startAgent(t)
		f.providers["a"].Fail(openaifittest.Failure{Status: 503}, openaifittest.Failure{Status: 500}, openaifittest.Failure{Status: 502})
		e := f.stream(t, `{"model":"scripted","stream":true,"messages":[{"role":"user","content":"hello"}]}`)
		require.Equal(t, http.StatusOK, e.resp.StatusCode)
		var s streamed
		s.readAll(t, e)
		assert.Nil(t, s.err)
		assert.True(t, s.done)
		assert.Equal(t, "Hello! Ask me to read something.", s.content.String())
		assert.Equal(t, "b", s.last["provider_used"])
		assert.Len(t, f.providers["a"].Requests(), 3)
	})
	t.Run("providers that limit us before the first byte: 429 with Retry-After, not a stream", func(t *testing.T) {
		f := startAgent(t, "-request-timeout", "1m") // waits past it are not made
		f.providers["a"].Fail(openaifittest.Failure{Status: 429, RetryAfter: "3600"})
		f.providers["b"].Fail(openaifittest.Failure{Status: 429, RetryAfter: "120"})
		resp, b := f.post(t, `{"model":"scripted","stream":true,"messages":[{"role":"user","content":"hello"}]}`)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s", b)
		assert.Equal(t, "120", resp.Header.Get("Retry-After"))
	})
}

func TestEveryDroppedTurnLeavesAPlaceholderTheModelCanRecall(t *testing.T) {
	f := startAgent(t)
	var session string
	for i := range 14 {
		headers := []string{}
		if session != "" {
			headers = []string{headerSession, session}
		}
		resp, _ := f.ask(t, fmt.Sprintf("message %d", i), headers...)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		session = resp.Header.Get(headerSession)
		sess, ok, err := f.agent.sessions.Get(context.Background(), session)
		require.NoError(t, err)
		require.True(t, ok)
		assert.LessOrEqual(t, len(sess.Messages), sessionMaxMessages, "the session keeps the fitted conversation, its answer included (message %d)", i)
	}
	reqs := f.providers["a"].Requests()
	last := reqs[len(reqs)-1].Messages
	require.LessOrEqual(t, len(last), sessionMaxMessages)
	require.NotEmpty(t, last)
	require.Equal(t, conversation.RoleSystem, last[0].Role)
	assert.True(t, strings.HasPrefix(last[0].Content, droppedPrefix), "%s", last[0].Content)
	assert.Contains(t, last[0].Content, "call ctxfit_next with")

	// Reading it back gives the last turns dropped and the placeholder of
	// those dropped before, and so on back to the first message.
	ctx := store.WithSubject(context.Background(), "anonymous "+session) // as the agent binds its cursors
	recall := regexp.MustCompile(`call ctxfit_next with (\{[^}]*\})\.`)
	text, seen := last[0].Content, map[int]bool{}
	for range 20 {
		m := recall.FindStringSubmatch(text)
		require.NotNil(t, m, "%s", text)
		res, err := f.agent.cg.CallTool(ctx, "ctxfit_next", json.RawMessage(m[1]))
		require.NoError(t, err)
		require.False(t, res.IsError, "%s", textOf(res))
		text = textOf(res) // the transcript as text, then a guidance line
		assert.NotContains(t, text, `\n`, "the transcript is not escaped again")
		for i := range 14 {
			if strings.Contains(text, fmt.Sprintf("user: message %d\n", i)) {
				seen[i] = true
			}
		}
		if seen[0] {
			break
		}
	}
	for i := range 14 {
		inWindow := false
		for _, m := range last {
			inWindow = inWindow || m.Content == fmt.Sprintf("message %d", i)
		}
		assert.True(t, seen[i] || inWindow, "message %d is in the window or behind a placeholder", i)
	}
}

func TestRetryDelaysDoubleWithJitterAndHonourRetryAfter(t *testing.T) {
	r := retryPolicy{retries: 5, base: 100 * time.Millisecond, max: time.Second}
	for _, tc := range []struct {
		name     string
		n        int
		after    time.Duration
		min, max time.Duration
	}{
		{"the first retry waits between half the base and the base", 0, 0, 50 * time.Millisecond, 100 * time.Millisecond},
		{"the third waits between half of four bases and four bases", 2, 0, 200 * time.Millisecond, 400 * time.Millisecond},
		{"a late retry waits at most the maximum (with jitter)", 10, 0, 500 * time.Millisecond, time.Second},
		{"a Retry-After longer than the backoff is the wait", 0, 3 * time.Second, 3 * time.Second, 3 * time.Second},
		{"a Retry-After shorter than the backoff leaves it", 2, time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range 200 {
				d := r.delay(tc.n, tc.after)
				assert.GreaterOrEqual(t, d, tc.min)
				assert.LessOrEqual(t, d, tc.max)
				seen[d] = true
			}
			if tc.min != tc.max {
				assert.Greater(t, len(seen), 1, "jitter: the waits differ")
			}
		})
	}
}

func TestTurnsTheBudgetDropsLeaveAPlaceholderTheModelCanRecall(t *testing.T) {
	f := startAgent(t, "-context-tokens", "4000", "-reply-tokens", "100")
	long := func(i int) string { return fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 400)) }
	var session string
	const n = 7 // 14 messages: within the session's 20, over the budget
	for i := range n {
		headers := []string{}
		if session != "" {
			headers = []string{headerSession, session}
		}
		resp, _ := f.ask(t, long(i), headers...)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		session = resp.Header.Get(headerSession)
	}
	reqs := f.providers["a"].Requests()
	last := reqs[len(reqs)-1].Messages
	require.Less(t, len(last), 2*n, "turns were dropped")
	require.Equal(t, conversation.RoleSystem, last[0].Role)
	require.True(t, strings.HasPrefix(last[0].Content, droppedPrefix), "%s", last[0].Content)

	// Every call the placeholder and what it leads to name, followed: each
	// dropped message comes back.
	ctx := store.WithSubject(context.Background(), "anonymous "+session)
	call := regexp.MustCompile(`call ctxfit_next with (\{[^}]*\})\.`)
	queue, visited, read := []string{last[0].Content}, map[string]bool{}, ""
	for len(queue) > 0 && len(visited) < 50 {
		text := queue[0]
		queue = queue[1:]
		for _, m := range call.FindAllStringSubmatch(text, -1) {
			if visited[m[1]] {
				continue
			}
			visited[m[1]] = true
			res, err := f.agent.cg.CallTool(ctx, "ctxfit_next", json.RawMessage(m[1]))
			require.NoError(t, err)
			require.False(t, res.IsError, "%s", textOf(res))
			read += textOf(res)
			queue = append(queue, textOf(res))
		}
	}
	for i := range n {
		inWindow := false
		for _, m := range last {
			inWindow = inWindow || m.Content == long(i)
		}
		assert.True(t, inWindow || strings.Contains(read, "user: "+long(i)), "message %d is in the window or behind a placeholder", i)
	}
}

func TestAnInputSchemaThatLoopsWithoutReadingAValueIsNotUsedToCheckArguments(t *testing.T) {
	// jsonschema-go would recurse on it until the stack overflows, a fatal
	// error that ends the agent; such a tool's arguments go unchecked.
	tools := []*mcp.Tool{
		{Name: "loops", InputSchema: json.RawMessage(`{"type":"object","allOf":[{"$ref":"#"}]}`)},
		{Name: "recursive", InputSchema: json.RawMessage(`{"type":"object","properties":{"child":{"$ref":"#"}}}`)},
	}
	resolved, _ := resolveSchemas(tools)
	assert.NotContains(t, resolved, "loops")
	require.Contains(t, resolved, "recursive", "a schema that reads a property on each turn is kept")
	assert.Error(t, resolved["recursive"].Validate(map[string]any{"child": map[string]any{"child": 1}}))
}
