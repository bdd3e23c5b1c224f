package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/examples/corpus"
	"github.com/ctxfit/ctxfit/internal/llmtest"
	"github.com/ctxfit/ctxfit/internal/redistest"
	"github.com/ctxfit/ctxfit/internal/syncbuf"
	"github.com/ctxfit/ctxfit/openaifit"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// doc is the text of document n: a few thousand tokens.
func doc(n int) string { return fmt.Sprintf("Document %d.\n\n%s", n, corpus.Prose(9000+100*n)) }

// docServer serves an MCP server over streamable HTTP with read_doc (a
// large text) and slow (never answers before its context ends).
func docServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	type docInput struct {
		N int `json:"n"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "read_doc", Description: "Read document n."}, func(_ context.Context, _ *mcp.CallToolRequest, in docInput) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: doc(in.N)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Never answers in time."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts
}

// script reads document N for "read N", runs slow for "slow", and answers
// anything else.
func script(user string) (string, string) {
	if n, ok := strings.CutPrefix(user, "read "); ok {
		return "read_doc", `{"n":` + n + `}`
	}
	if user == "slow" {
		return "slow", `{}`
	}
	return "", ""
}

// toolLines returns the "tool call" lines of a JSON log.
func toolLines(t *testing.T, logs *syncbuf.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
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

const (
	testContextTokens = 6000
	testReplyTokens   = 500
)

type fixture struct {
	agent    *agent
	url      string
	provider *llmtest.Provider
	logs     *syncbuf.Buffer
	mcp      *httptest.Server
}

func setup(t *testing.T, edit func(*settings)) *fixture {
	t.Helper()
	f := &fixture{provider: llmtest.New(script), logs: &syncbuf.Buffer{}, mcp: docServer(t)}
	t.Cleanup(f.provider.Close)
	s := settings{provider: f.provider.URL, servers: []serverSpec{{name: "docs", url: f.mcp.URL}},
		contextTokens: testContextTokens, replyTokens: testReplyTokens, maxSteps: 40, rate: 1000,
		callTimeout: time.Minute, healthInterval: time.Hour, logArguments: true}
	if edit != nil {
		edit(&s)
	}
	env := map[string]string{"CTXFIT_SECRET": "an agent test secret of 32 bytes or more", "CTXFIT_THRESHOLD": "800", "CTXFIT_HARD_CAP": "1500"}
	logger := slog.New(slog.NewJSONHandler(f.logs, nil))
	a, release, err := newAgent(context.Background(), s, func(k string) string { return env[k] }, logger)
	require.NoError(t, err)
	t.Cleanup(release)
	f.agent = a
	srv := httptest.NewServer(a.routes())
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// ask posts one user message, in session when it is not "".
func (f *fixture) ask(t *testing.T, session, content string) (*http.Response, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "scripted", "messages": []map[string]any{{"role": "user", "content": content}}})
	req, err := http.NewRequest(http.MethodPost, f.url+"/v1/chat/completions", bytes.NewReader(body))
	require.NoError(t, err)
	if session != "" {
		req.Header.Set(headerSession, session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp, b.Bytes()
}

func TestTheConversationStaysWithinTheBudgetAndEveryClearedResultIsReachable(t *testing.T) {
	f := setup(t, nil)
	resp, body := f.ask(t, "", "read 1")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	session := resp.Header.Get(headerSession)
	require.NotEmpty(t, session, "a new session")
	var cr openaifit.ChatResponse
	require.NoError(t, json.Unmarshal(body, &cr))
	assert.Equal(t, "chat.completion", cr.Object)
	assert.Equal(t, "Done: I read it.", cr.Choices[0].Message.Content)

	for n := 2; n <= 7; n++ {
		resp, body := f.ask(t, session, "read "+strconv.Itoa(n))
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.Equal(t, session, resp.Header.Get(headerSession))
	}

	// Every request to the provider was within the window, less the reply
	// and the tools.
	reqs := f.provider.Requests()
	placeholders := 0
	for i, r := range reqs {
		assert.LessOrEqual(t, r.Tokens, testContextTokens-testReplyTokens-r.ToolTokens, "request %d", i)
		assert.LessOrEqual(t, len(r.Messages), sessionMaxMessages, "request %d", i)
		placeholders += r.Placeholders
	}
	require.Positive(t, placeholders, "tool results were cleared")
	// The model recalled every cleared result, byte for byte.
	recalls := f.provider.Recalls()
	require.NotEmpty(t, recalls)
	for _, r := range recalls {
		require.NoError(t, r.Err, "recall of %s", r.ToolCallID)
		assert.Equal(t, r.Original, r.Rebuilt, "recall of %s", r.ToolCallID)
		assert.Positive(t, r.Calls)
	}

	t.Logf("%d requests to the provider, %d placeholders seen, %d results recalled", len(reqs), placeholders, len(recalls))

	// One log line per tool invocation.
	lines := toolLines(t, f.logs)
	require.NotEmpty(t, lines)
	reads := 0
	for _, l := range lines {
		for _, k := range []string{"request_id", "session_id", "tool", "server", "duration_ms", "status", "tokens_before", "tokens_after", "arguments"} {
			assert.Contains(t, l, k)
		}
		assert.Equal(t, session, l["session_id"])
		assert.Equal(t, statusSuccess, l["status"], "%v", l)
		if l["tool"] == "read_doc" {
			reads++
			assert.Greater(t, l["tokens_before"], l["tokens_after"], "the guard shaped the document")
			assert.LessOrEqual(t, l["tokens_after"], float64(1500))
		}
	}
	assert.Equal(t, 7, reads)

	// The session keeps at most 20 messages.
	sess, ok, err := f.agent.sessions.Get(context.Background(), session)
	require.NoError(t, err)
	require.True(t, ok)
	assert.LessOrEqual(t, len(sess.Messages), sessionMaxMessages)
}

func TestTheChatEndpointAnswersOpenAIStyleErrors(t *testing.T) {
	f := setup(t, func(s *settings) { s.rate = 0.001 })
	resp, body := f.ask(t, "sess_unknown", "hello")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	var e openaifit.ErrorBody
	require.NoError(t, json.Unmarshal(body, &e))
	assert.Equal(t, "session_not_found", e.Error.Code)

	req, _ := http.NewRequest(http.MethodPost, f.url+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	r, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusBadRequest, r.StatusCode)

	// Two requests went already; eight more fill the bucket of ten.
	for i := range 8 {
		resp, body := f.ask(t, "", "hello")
		require.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i, body)
	}
	resp, body = f.ask(t, "", "hello")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	require.NoError(t, json.Unmarshal(body, &e))
	assert.Equal(t, "rate_limit_exceeded", e.Error.Code)
}

func TestAToolThatDoesNotAnswerInTimeIsLoggedAsATimeout(t *testing.T) {
	f := setup(t, func(s *settings) { s.callTimeout = 50 * time.Millisecond })
	resp, body := f.ask(t, "", "slow")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	lines := toolLines(t, f.logs)
	require.Len(t, lines, 1)
	assert.Equal(t, "slow", lines[0]["tool"])
	assert.Equal(t, statusTimeout, lines[0]["status"])
	reqs := f.provider.Requests()
	last := reqs[len(reqs)-1].Messages
	assert.Contains(t, last[len(last)-1].Content, "did not answer in time", "the model reads what happened")
}

func TestAFailingServerOpensItsBreakerAndHealthSaysSo(t *testing.T) {
	f := setup(t, nil)
	res, err := f.agent.servers[0].call(context.Background(), "read_doc", []byte(`{"n":1}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	h, err := http.Get(f.url + "/healthz")
	require.NoError(t, err)
	h.Body.Close()
	assert.Equal(t, http.StatusOK, h.StatusCode)

	// The server goes away: the health check sees it and cannot reconnect.
	f.mcp.Listener.Close()
	f.mcp.CloseClientConnections() // Close would wait for the client's open event stream
	u := f.agent.servers[0]
	u.check(context.Background())
	assert.NotEqual(t, stateConnected, u.health().State)
	for range breakerFailures {
		_, err := u.call(context.Background(), "read_doc", []byte(`{"n":1}`))
		require.Error(t, err)
	}
	_, err = u.call(context.Background(), "read_doc", []byte(`{"n":1}`))
	assert.ErrorIs(t, err, gobreaker.ErrOpenState, "five failures open the breaker")
	h, err = http.Get(f.url + "/healthz")
	require.NoError(t, err)
	var health struct {
		Status  string
		Servers []serverHealth
	}
	require.NoError(t, json.NewDecoder(h.Body).Decode(&health))
	h.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, h.StatusCode)
	assert.Equal(t, "degraded", health.Status)
	assert.Equal(t, "open", health.Servers[0].Breaker)

	// The model reads why its call failed.
	resp, body := f.ask(t, "", "read 3")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	lines := toolLines(t, f.logs)
	assert.Equal(t, statusFailure, lines[len(lines)-1]["status"])
}

func TestSessionsExpireAnHourAfterTheirLastMessage(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	stores := map[string]SessionStore{"memory": newMemorySessions(sessionTTL, func() time.Time { return now })}
	rs, err := newRedisSessions(redistest.URL(t), sessionTTL)
	require.NoError(t, err)
	t.Cleanup(func() { rs.Close() })
	stores["redis"] = rs
	for name, st := range stores {
		t.Run(name, func(t *testing.T) {
			s := &Session{ID: newSessionID(), CreatedAt: now, UpdatedAt: now,
				Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi <there> & you"}}}
			require.NoError(t, st.Put(ctx, s))
			got, ok, err := st.Get(ctx, s.ID)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, s.Messages, got.Messages)
			assert.True(t, s.CreatedAt.Equal(got.CreatedAt))
			_, ok, err = st.Get(ctx, "sess_none")
			require.NoError(t, err)
			assert.False(t, ok)
		})
	}
	// Expiry, by the injected clock in memory and by the key's TTL in Redis.
	mem := stores["memory"]
	s := &Session{ID: "sess_a"}
	require.NoError(t, mem.Put(ctx, s))
	now = now.Add(sessionTTL - time.Second)
	_, ok, _ := mem.Get(ctx, "sess_a")
	assert.True(t, ok)
	now = now.Add(time.Second)
	_, ok, _ = mem.Get(ctx, "sess_a")
	assert.False(t, ok)
	require.NoError(t, rs.Put(ctx, &Session{ID: "sess_b"}))
	ttl, err := rs.client.PTTL(ctx, redisSessionPrefix+"sess_b").Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, time.Duration(0))
	assert.LessOrEqual(t, ttl, sessionTTL)
	_ = redis.Nil
}

func TestSettings(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}[k] }
	s, err := parseSettings([]string{"-mcp", "files=stdio:node server.js /data", "-mcp", "api=http://127.0.0.1:8080/mcp", "-rate-key", "X-Api-Key"}, getenv, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:11434/v1", s.provider)
	require.Len(t, s.servers, 2)
	assert.Equal(t, serverSpec{name: "files", command: []string{"node", "server.js", "/data"}}, s.servers[0])
	assert.Equal(t, serverSpec{name: "api", url: "http://127.0.0.1:8080/mcp"}, s.servers[1])
	assert.Equal(t, "X-Api-Key", s.rateKey)
	for _, bad := range [][]string{{"-mcp", "noequals"}, {"-mcp", "x=ftp://h"}, {"-mcp", "x=stdio:"}, {"-context-tokens", "10", "-reply-tokens", "20"}, {"extra"}} {
		_, err := parseSettings(bad, getenv, &bytes.Buffer{})
		assert.Error(t, err, "%v", bad)
	}
}
