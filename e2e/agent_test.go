package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
