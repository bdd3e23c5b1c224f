package e2e

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/openaifit/openaifittest"
)

// Budget of the agent under test: a small window, so that a few file
// reads fill it.
const (
	agentContextTokens = 7000
	agentReplyTokens   = 1000
	agentHardCap       = 1500
)

// TestTheOpenAIClientDrivesTheAgent runs examples/agent with the npm
// server-filesystem over stdio and a scripted provider (openaifit/openaifittest),
// and drives it with the official openai npm client (e2e/ts/agent.test.mjs:
// a session of file reads, a long history sent at once, an unknown
// session, the rate limit). Then it checks what the provider got: every
// request within the window less the reply and the tools, by exact count,
// and at most 20 messages; tool results cleared along the way; and every
// cleared result the model recalled with ctxfit_next rebuilt byte for byte.
// And that the agent logged one line per tool invocation.
func TestTheOpenAIClientDrivesTheAgent(t *testing.T) {
	bin := npmServers(t)
	node, err := exec.LookPath("node")
	require.NoError(t, err)
	dir, err := filepath.Abs("ts")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json"))
	require.NoError(t, err, "the openai client is missing: run (cd e2e/ts && npm ci --no-audit --no-fund), as test.sh does")
	fixtures := t.TempDir()
	writeFixtures(t, fixtures)

	provider := openaifittest.New(func(user string) (string, string) {
		if p, ok := strings.CutPrefix(user, "read "); ok {
			args, _ := json.Marshal(map[string]string{"path": p})
			return "read_text_file", string(args)
		}
		return "", ""
	})
	defer provider.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	url, logs := runAgent(ctx, t, append(cleanEnv(), "CTXFIT_THRESHOLD=800", "CTXFIT_HARD_CAP=1500"),
		"-provider", provider.URL, "-model", "scripted",
		"-mcp", "files=stdio:"+filepath.Join(bin, "mcp-server-filesystem")+" "+fixtures,
		"-context-tokens", "7000", "-reply-tokens", "1000", "-rate", "0.0001", "-rate-key", "X-Client-ID", "-log-arguments")

	run := exec.CommandContext(ctx, node, "--test", "agent.test.mjs")
	run.Dir = dir
	run.Env = append(cleanEnv(), "CTXFIT_E2E_AGENT_URL="+url, "CTXFIT_E2E_FIXTURES="+fixtures)
	out, err := run.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", out)

	reqs := provider.Requests()
	require.NotEmpty(t, reqs)
	placeholders := 0
	for i, r := range reqs {
		assert.Positive(t, r.ToolTokens, "request %d has the tools", i)
		assert.LessOrEqual(t, r.Tokens, agentContextTokens-agentReplyTokens-r.ToolTokens, "request %d is within the window less the reply and the tools", i)
		assert.LessOrEqual(t, len(r.Messages), 20, "request %d", i)
		placeholders += r.Placeholders
	}
	assert.Positive(t, placeholders, "tool results were cleared")
	recalls := provider.Recalls()
	require.NotEmpty(t, recalls, "the model recalled cleared results")
	for _, r := range recalls {
		require.NoError(t, r.Err, "recall of %s", r.ToolCallID)
		sameBytes(t, r.Original, r.Rebuilt, "recall of "+r.ToolCallID)
	}
	t.Logf("%d requests to the provider, %d placeholders seen, %d results recalled", len(reqs), placeholders, len(recalls))

	reads, nexts := 0, 0
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Msg, Tool, Status, Arguments string
			SessionID                    string `json:"session_id"`
			RequestID                    string `json:"request_id"`
			TokensBefore                 int    `json:"tokens_before"`
			TokensAfter                  int    `json:"tokens_after"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Msg != "tool call" {
			continue
		}
		assert.Equal(t, "success", l.Status, "%s", sc.Text())
		assert.NotEmpty(t, l.RequestID)
		assert.NotEmpty(t, l.SessionID)
		assert.NotEmpty(t, l.Arguments)
		assert.LessOrEqual(t, l.TokensAfter, agentHardCap, "%s", sc.Text())
		switch l.Tool {
		case "read_text_file":
			reads++
			assert.Greater(t, l.TokensBefore, l.TokensAfter, "the guard shaped the file")
		case "ctxfit_next":
			nexts++
		}
	}
	assert.Equal(t, 7, reads, "one line per read")
	assert.Positive(t, nexts)
}

// TestTheOpenAIClientStreamsAndSurvivesProviderAndServerFailures runs
// examples/agent with two scripted providers (a, the default, and b) and
// the npm server-filesystem over stdio, and drives it with the official
// openai npm client (e2e/ts/agent_providers.test.mjs): streaming and not
// (the first delta of a turn reaching the client while the provider holds
// its turn open, tool calls between streamed turns, a provider failing
// mid-stream), /v1/models, a 500 and a time-out retried, a provider
// failing over to the next, X-Provider and the provider field (kept by
// the session), a 429 passed on with its Retry-After, the MCP server
// killed mid-session (a read-only tool: reconnected and called again), a
// history resent with X-Session-ID added once, arguments checked against
// the tool's input schema, and turns the 20-message cap drops behind a
// placeholder. The node side makes the failures happen
// and holds and releases the providers' streams through a control
// endpoint of this test. Retry delays are tiny; nothing is timed.
func TestTheOpenAIClientStreamsAndSurvivesProviderAndServerFailures(t *testing.T) {
	bin := npmServers(t)
	node, err := exec.LookPath("node")
	require.NoError(t, err)
	dir, err := filepath.Abs("ts")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json"))
	require.NoError(t, err, "the openai client is missing: run (cd e2e/ts && npm ci --no-audit --no-fund), as test.sh does")
	fixtures := t.TempDir()
	writeFixtures(t, fixtures)

	readScript := func(user string) (string, string) {
		if user == "read with a wrong argument" {
			return "read_text_file", `{"path":7}`
		}
		if p, ok := strings.CutPrefix(user, "read "); ok {
			args, _ := json.Marshal(map[string]string{"path": p})
			return "read_text_file", string(args)
		}
		return "", ""
	}
	providers := map[string]*openaifittest.Provider{"a": openaifittest.New(readScript), "b": openaifittest.New(readScript)}
	for _, p := range providers {
		defer p.Close()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /fail", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		p := providers[q.Get("provider")]
		status, _ := strconv.Atoi(q.Get("status"))
		times, _ := strconv.Atoi(cmp.Or(q.Get("times"), "1"))
		if p == nil || times < 1 {
			http.Error(w, "want provider=a|b, status or hang=1, times", http.StatusBadRequest)
			return
		}
		for range times {
			p.Fail(openaifittest.Failure{Status: status, RetryAfter: q.Get("retry_after"), Hang: q.Get("hang") == "1", MidStream: q.Get("mid_stream") == "1"})
		}
		w.WriteHeader(http.StatusNoContent)
	})
	// A provider's next streamed answer stops after its first delta until
	// /release, which answers 204 when the answer was held there (its
	// provider's turn had not ended) and 409 when no streamed answer
	// reached the hold.
	type heldStream struct {
		held    <-chan struct{}
		release func()
	}
	var mu sync.Mutex
	holds := map[string]heldStream{}
	mux.HandleFunc("POST /hold", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("provider")
		p := providers[name]
		if p == nil {
			http.Error(w, "want provider=a|b", http.StatusBadRequest)
			return
		}
		held, release := p.Hold()
		mu.Lock()
		holds[name] = heldStream{held, release}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h, ok := holds[r.URL.Query().Get("provider")]
		delete(holds, r.URL.Query().Get("provider"))
		mu.Unlock()
		if !ok {
			http.Error(w, "no /hold of this provider", http.StatusBadRequest)
			return
		}
		h.release()
		select {
		case <-h.held:
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, "no streamed answer of the provider was held: the agent did not stream from it", http.StatusConflict)
		}
	})
	mux.HandleFunc("GET /last", func(w http.ResponseWriter, r *http.Request) {
		p := providers[r.URL.Query().Get("provider")]
		if p == nil || len(p.Requests()) == 0 {
			http.Error(w, "want provider=a|b, one that got a request", http.StatusBadRequest)
			return
		}
		reqs := p.Requests()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reqs[len(reqs)-1].Messages)
	})
	mux.HandleFunc("POST /kill", func(w http.ResponseWriter, _ *http.Request) {
		pids := processesWith(fixtures)
		if len(pids) == 0 {
			http.Error(w, "no MCP server process found", http.StatusInternalServerError)
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ctl := httptest.NewServer(mux)
	defer ctl.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	url, logs := runAgent(ctx, t, append(cleanEnv(), "CTXFIT_THRESHOLD=800", "CTXFIT_HARD_CAP=1500"),
		"-provider", "a="+providers["a"].URL, "-provider", "b="+providers["b"].URL, "-model", "scripted",
		"-mcp", "files=stdio:"+filepath.Join(bin, "mcp-server-filesystem")+" "+fixtures,
		"-context-tokens", "7000", "-reply-tokens", "1000", "-rate", "1000", "-health-interval", "1h",
		"-retry-base", "1ms", "-retry-max", "2ms", "-provider-timeout", "3s", "-request-timeout", "2m")

	run := exec.CommandContext(ctx, node, "--test", "--test-concurrency=1", "agent_providers.test.mjs")
	run.Dir = dir
	run.Env = append(cleanEnv(), "CTXFIT_E2E_AGENT_URL="+url, "CTXFIT_E2E_CONTROL_URL="+ctl.URL, "CTXFIT_E2E_FIXTURES="+fixtures)
	out, err := run.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", out)
	assert.Contains(t, logs.String(), "reconnecting and calling again", "the read after the kill was retried on a new connection")
}

// processesWith returns the ids of this machine's processes whose command
// line holds s (a test's temporary directory: the MCP server it started),
// but the agent's own (-mcp NAME=stdio:... s).
func processesWith(s string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) && !strings.Contains(string(cmdline), "\x00-mcp\x00") && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}
