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

func TestStreamingSendsTurnsAsServerSentEvents(t *testing.T) {
	f := startAgent(t)
	resp, b := f.post(t, `{"model":"scripted","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"call read {\"path\":\"x\"}"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var chunks []map[string]any
	var done bool
	for _, ev := range strings.Split(strings.TrimSpace(string(b)), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		require.True(t, ok, "%q", ev)
		if data == "[DONE]" {
			done = true
			continue
		}
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &c))
		assert.Equal(t, "chat.completion.chunk", c["object"])
		chunks = append(chunks, c)
	}
	assert.True(t, done)
	var content strings.Builder
	var toolCalls int
	var finish string
	for _, c := range chunks {
		for _, ch := range c["choices"].([]any) {
			ch := ch.(map[string]any)
			d := ch["delta"].(map[string]any)
			if s, ok := d["content"].(string); ok {
				content.WriteString(s)
			}
			if tcs, ok := d["tool_calls"].([]any); ok {
				toolCalls += len(tcs)
			}
			if r, ok := ch["finish_reason"].(string); ok {
				finish = r
				assert.Equal(t, "a", c["provider_used"])
				assert.Len(t, c["tool_calls"], 1)
			}
		}
	}
	assert.Equal(t, "Done: I read it.", content.String())
	assert.Equal(t, 1, toolCalls, "the tool call's delta")
	assert.Equal(t, "stop", finish)
	assert.Contains(t, chunks[len(chunks)-1], "usage")
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
