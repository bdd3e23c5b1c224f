package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/internal/testing/redistest"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/openaifit"
	"github.com/ctxfit/ctxfit/openaifit/openaifittest"
)

// The tests of this file run examples/agent with a scripted provider
// (openaifit/openaifittest) and an MCP server of documents in this process, and
// talk to it over HTTP as its clients do. They need neither node nor a
// model.

// Settings of the scripted agent: a small window, so that a few documents
// fill it.
const (
	scriptedContextTokens = 4000
	scriptedReplyTokens   = 500
	scriptedHardCap       = 1500
	// scriptedThreshold shapes each read_doc result (about 2,000 tokens)
	// to a chunk, the whole result counted; the 20-message cap keeps five
	// turns, and five such results overflow the 4,000-token window, so
	// they are cleared (in 5,000 tokens they fit since a chunk travels as
	// text, not escaped in its envelope).
	scriptedThreshold = 800
)

// The agent's session header and the Redis keys of its sessions.
const (
	agentSessionHeader = "X-Session-ID"
	agentSessionPrefix = "agent:session:"
)

// runAgent runs examples/agent on a free port with args (after -listen)
// and env, until the test ends, and returns the URL it logs
// (http://HOST:PORT/v1) and its standard error, the JSON log, as it is
// written.
func runAgent(ctx context.Context, t *testing.T, env []string, args ...string) (string, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, binaries(t)["agent"], append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	logs := &syncbuf.Buffer{}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			logs.Write(append(sc.Bytes(), '\n'))
			var line struct{ Msg, URL string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "agent: serving" {
				ready <- line.URL
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("agent stderr:\n%s", logs)
		}
	})
	select {
	case url := <-ready:
		return url, logs
	case <-ctx.Done():
		t.Fatalf("the agent did not start:\n%s", logs)
		return "", nil
	}
}

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

// scriptedAgent is examples/agent with the scripted provider and the
// document server.
type scriptedAgent struct {
	url      string
	provider *openaifittest.Provider
	logs     *syncbuf.Buffer
	mcp      *httptest.Server
}

// startScriptedAgent runs the agent with the test's settings; args are
// added to (and may override) them.
func startScriptedAgent(t *testing.T, args ...string) *scriptedAgent {
	t.Helper()
	f := &scriptedAgent{provider: openaifittest.New(script), mcp: docServer(t)}
	t.Cleanup(f.provider.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	all := append([]string{"-provider", f.provider.URL, "-mcp", "docs=" + f.mcp.URL,
		"-context-tokens", strconv.Itoa(scriptedContextTokens), "-reply-tokens", strconv.Itoa(scriptedReplyTokens),
		"-max-steps", "40", "-rate", "1000", "-call-timeout", "1m", "-health-interval", "1h", "-log-arguments", "-redis="}, args...)
	url, logs := runAgent(ctx, t, append(cleanEnv(), "CTXFIT_THRESHOLD="+strconv.Itoa(scriptedThreshold), "CTXFIT_HARD_CAP="+strconv.Itoa(scriptedHardCap)), all...)
	f.url, f.logs = strings.TrimSuffix(url, "/v1"), logs
	return f
}

// ask posts one user message, in session when it is not "".
func (f *scriptedAgent) ask(t *testing.T, session, content string) (*http.Response, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "scripted", "messages": []map[string]any{{"role": "user", "content": content}}})
	req, err := http.NewRequest(http.MethodPost, f.url+"/v1/chat/completions", bytes.NewReader(body))
	require.NoError(t, err)
	if session != "" {
		req.Header.Set(agentSessionHeader, session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp, b.Bytes()
}

// health returns the agent's GET /healthz: its status code and body.
func (f *scriptedAgent) health(t *testing.T) (int, agentHealth) {
	t.Helper()
	resp, err := http.Get(f.url + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var h agentHealth
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	return resp.StatusCode, h
}

// agentHealth is what the agent's GET /healthz says.
type agentHealth struct {
	Status  string
	Servers []struct {
		State   string
		Breaker string
	}
}

func TestTheConversationStaysWithinTheBudgetAndEveryClearedResultIsReachable(t *testing.T) {
	for _, sessions := range []string{"memory", "redis"} {
		t.Run("with sessions in "+sessions, func(t *testing.T) {
			var rdb *redis.Client
			var f *scriptedAgent
			if sessions == "redis" {
				srv := redistest.Start(t)
				opts, err := redis.ParseURL(srv.URL())
				require.NoError(t, err)
				rdb = redis.NewClient(opts)
				t.Cleanup(func() { rdb.Close() })
				f = startScriptedAgent(t, "-redis", srv.URL())
			} else {
				f = startScriptedAgent(t)
			}

			resp, body := f.ask(t, "", "read 1")
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			session := resp.Header.Get(agentSessionHeader)
			require.NotEmpty(t, session, "a new session")
			var cr openaifit.ChatResponse
			require.NoError(t, json.Unmarshal(body, &cr))
			assert.Equal(t, "chat.completion", cr.Object)
			assert.Equal(t, "Done: I read it.", cr.Choices[0].Message.Content)

			for n := 2; n <= 7; n++ {
				resp, body := f.ask(t, session, "read "+strconv.Itoa(n))
				require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
				assert.Equal(t, session, resp.Header.Get(agentSessionHeader))
			}

			// Every request to the provider was within the window, less the
			// reply and the tools.
			reqs := f.provider.Requests()
			placeholders := 0
			for i, r := range reqs {
				assert.LessOrEqual(t, r.Tokens, scriptedContextTokens-scriptedReplyTokens-r.ToolTokens, "request %d", i)
				assert.LessOrEqual(t, len(r.Messages), conversation.DefaultMaxMessages, "request %d", i)
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
				assert.Equal(t, "success", l["status"], "%v", l)
				if l["tool"] == "read_doc" {
					reads++
					assert.Greater(t, l["tokens_before"], l["tokens_after"], "the guard shaped the document")
					assert.LessOrEqual(t, l["tokens_after"], float64(scriptedHardCap))
				}
			}
			assert.Equal(t, 7, reads)

			if rdb == nil {
				return
			}
			// The session, as Redis keeps it: at most 20 messages, the
			// user's text as sent, for an hour after its last message.
			resp, body = f.ask(t, session, "hi <there> & you")
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			ctx := context.Background()
			data, err := rdb.Get(ctx, agentSessionPrefix+session).Bytes()
			require.NoError(t, err)
			var stored struct {
				ID       string                 `json:"id"`
				Messages []conversation.Message `json:"messages"`
			}
			require.NoError(t, json.Unmarshal(data, &stored))
			assert.Equal(t, session, stored.ID)
			assert.LessOrEqual(t, len(stored.Messages), conversation.DefaultMaxMessages)
			assert.Contains(t, stored.Messages, conversation.Message{Role: conversation.RoleUser, Content: "hi <there> & you"})
			ttl, err := rdb.PTTL(ctx, agentSessionPrefix+session).Result()
			require.NoError(t, err)
			assert.Greater(t, ttl, time.Duration(0))
			assert.LessOrEqual(t, ttl, time.Hour)
			resp, _ = f.ask(t, "sess_none", "hello")
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a session Redis does not have")
		})
	}
}

func TestTheChatEndpointAnswersOpenAIStyleErrors(t *testing.T) {
	f := startScriptedAgent(t, "-rate", "0.001")
	resp, body := f.ask(t, "sess_unknown", "hello")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	var e openaifit.ErrorBody
	require.NoError(t, json.Unmarshal(body, &e))
	assert.Equal(t, "session_not_found", e.Error.Code)

	req, _ := http.NewRequest(http.MethodPost, f.url+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Provider", "nope")
	r, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(r.Body).Decode(&e))
	r.Body.Close()
	assert.Equal(t, http.StatusBadRequest, r.StatusCode)
	assert.Equal(t, "invalid_provider", e.Error.Code)

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
	f := startScriptedAgent(t, "-call-timeout", "50ms")
	resp, body := f.ask(t, "", "slow")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	lines := toolLines(t, f.logs)
	require.Len(t, lines, 1)
	assert.Equal(t, "slow", lines[0]["tool"])
	assert.Equal(t, "timeout", lines[0]["status"])
	reqs := f.provider.Requests()
	last := reqs[len(reqs)-1].Messages
	assert.Contains(t, last[len(last)-1].Content, "did not answer in time", "the model reads what happened")
}

func TestAFailingServerOpensItsBreakerAndHealthSaysSo(t *testing.T) {
	f := startScriptedAgent(t, "-health-interval", "100ms")
	resp, body := f.ask(t, "", "read 1")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	lines := toolLines(t, f.logs)
	require.Len(t, lines, 1)
	assert.Equal(t, "success", lines[0]["status"])
	code, _ := f.health(t)
	assert.Equal(t, http.StatusOK, code)

	// The server goes away: the health check sees it and cannot reconnect.
	f.mcp.Listener.Close()
	f.mcp.CloseClientConnections() // Close would wait for the client's open event stream
	require.Eventually(t, func() bool {
		_, h := f.health(t)
		return len(h.Servers) == 1 && h.Servers[0].State != "connected"
	}, 30*time.Second, 50*time.Millisecond, "the health check sees the server gone")
	const breakerFailures = 5 // examples/agent's
	for i := range breakerFailures {
		resp, body := f.ask(t, "", "read 1")
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		lines := toolLines(t, f.logs)
		require.Len(t, lines, 2+i)
		assert.Equal(t, "failure", lines[len(lines)-1]["status"], "call %d", i+1)
		assert.NotEqual(t, gobreaker.ErrOpenState.Error(), lines[len(lines)-1]["error"], "call %d", i+1)
	}
	code, health := f.health(t)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "degraded", health.Status)
	require.Len(t, health.Servers, 1)
	assert.Equal(t, "open", health.Servers[0].Breaker, "five failures open the breaker")

	// The next call does not reach the server, and the model reads why it
	// failed.
	resp, body = f.ask(t, "", "read 3")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	lines = toolLines(t, f.logs)
	last := lines[len(lines)-1]
	assert.Equal(t, "failure", last["status"])
	assert.Equal(t, gobreaker.ErrOpenState.Error(), last["error"])
	reqs := f.provider.Requests()
	msgs := reqs[len(reqs)-1].Messages
	assert.Contains(t, msgs[len(msgs)-1].Content, "is failing; the agent stopped calling it")
}
