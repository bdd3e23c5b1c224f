package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/redistest"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// proxyInstance runs `ctxfit proxy -- mcpserver -raw` over stdio with the
// test environment plus env (later entries win: CTXFIT_SECRET,
// CTXFIT_PREVIOUS_SECRETS, CTXFIT_REDIS_URL) and connects to it; its
// standard error is shown when the test fails.
func proxyInstance(t *testing.T, bins map[string]string, env ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bins["ctxfit"], "proxy", "--", bins["mcpserver"], "-raw")
	cmd.Env = append(cleanEnv(), env...)
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "stderr: %s", stderr)
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("ctxfit proxy %v stderr:\n%s", env, stderr)
		}
	})
	return cs
}

// followAcross calls tool with args on the first session and then follows
// every cursor with the continuation tool, asking the sessions in turn,
// and returns the shaped bodies. No result may be an error or exceed the
// default hard cap.
func followAcross(t *testing.T, tool string, args any, sessions ...*mcp.ClientSession) []string {
	t.Helper()
	var bodies []string
	res := mcpfittest.Call(t, sessions[0], tool, args)
	for n := 1; ; n++ {
		require.Less(t, n, 2000, "too many continuations")
		require.False(t, res.IsError, "result is an error: %v", mcpfittest.Texts(t, res))
		assert.LessOrEqual(t, mcpfittest.Tokens(t, res), ctxfit.DefaultHardCap, "a result exceeds the hard cap")
		bodies = append(bodies, mcpfittest.Body(t, res))
		next := mcpfittest.NextCursor(res)
		if next == "" {
			return bodies
		}
		res = mcpfittest.Call(t, sessions[n%len(sessions)], mcpcore.DefaultNextTool, map[string]any{"cursor": next})
	}
}

// rebuildAcross rebuilds the original of the shaped result first, opening
// its continuations on sessions in turn.
func rebuildAcross(t *testing.T, first *mcp.CallToolResult, sessions ...*mcp.ClientSession) (string, int) {
	t.Helper()
	n := 0
	call := func(cursor string, part int64) ([]byte, error) {
		args := map[string]any{"cursor": cursor}
		if part != 0 {
			args["part"] = part
		}
		res := mcpfittest.Call(t, sessions[n%len(sessions)], mcpcore.DefaultNextTool, args)
		n++
		require.False(t, res.IsError, "result is an error: %v", mcpfittest.Texts(t, res))
		assert.LessOrEqual(t, mcpfittest.Tokens(t, res), ctxfit.DefaultHardCap, "a result exceeds the hard cap")
		return []byte(mcpfittest.Body(t, res)), nil
	}
	out, _, err := follow.Rebuild([]byte(mcpfittest.Body(t, first)), call)
	require.NoError(t, err)
	return string(out), n
}

// toolError returns the structured error of an isError result.
func toolError(t *testing.T, res *mcp.CallToolResult) mcpcore.Error {
	t.Helper()
	require.True(t, res.IsError, "want a tool error, got %v", mcpfittest.Texts(t, res))
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var e mcpcore.Error
	require.NoError(t, json.Unmarshal(b, &e), "structured content: %s", b)
	return e
}

// firstToolCursor returns the cursor of tool's first shaped result on cs.
func firstToolCursor(t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	res := mcpfittest.Call(t, cs, tool, nil)
	require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
	next := mcpfittest.NextCursor(res)
	require.NotEmpty(t, next, "%s is not shaped", tool)
	return next
}

// jsonObject decodes text as a JSON object, by value.
func jsonObject(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &v), "not a JSON object: %.200s", text)
	return v
}

func redisEnv(srv *redistest.Server, secret string, previous ...string) []string {
	// A patient store deadline: these tests are about cursors across
	// instances, not about a slow Redis on a loaded machine.
	env := []string{"CTXFIT_REDIS_URL=" + srv.URL(), "CTXFIT_SECRET=" + secret, "CTXFIT_STORE_TIMEOUT=30s"}
	for _, p := range previous {
		env = append(env, "CTXFIT_PREVIOUS_SECRETS="+p)
	}
	return env
}

func TestProxiesSharingASecretAndARedisHonourEachOthersCursors(t *testing.T) {
	bins := binaries(t)
	srv := redistest.Start(t)
	// A booking (about 3,200 tokens) is summarized, and its drill-downs come
	// in parts with cursors, which the two proxies must share.
	cfg := filepath.Join(t.TempDir(), "ctxfit.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("endpoints:\n  - match: get_booking\n    threshold: 2000\n    hardCap: 2500\n"), 0o600))
	env := append(redisEnv(srv, oldSecret), "CTXFIT_CONFIG="+cfg)
	a := proxyInstance(t, bins, env...)
	b := proxyInstance(t, bins, env...)
	raw, _ := connect(t, bins["mcpserver"], "-raw")

	t.Run("list_bookings pages followed across both proxies reproduce the list", func(t *testing.T) {
		bodies := followAcross(t, "list_bookings", nil, a, b)
		require.Greater(t, len(bodies), 1)
		assert.Equal(t, mcpfittest.Texts(t, mcpfittest.Call(t, raw, "list_bookings", nil))[0], mcpfittest.JoinItems(t, bodies, "items"))
	})
	t.Run("read_log chunks followed across both proxies reproduce the log byte for byte", func(t *testing.T) {
		bodies := followAcross(t, "read_log", nil, b, a)
		require.Greater(t, len(bodies), 10)
		assert.Equal(t, mcpfittest.Texts(t, mcpfittest.Call(t, raw, "read_log", nil))[0], mcpfittest.JoinChunks(t, bodies))
	})
	t.Run("a get_booking summary from one proxy is drilled into on the other and reassembles the booking", func(t *testing.T) {
		args := map[string]any{"id": "BK00007"}
		rawText := mcpfittest.Texts(t, mcpfittest.Call(t, raw, "get_booking", args))[0]
		want := jsonObject(t, rawText)

		res := mcpfittest.Call(t, a, "get_booking", args)
		require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
		require.Equal(t, "summary", res.Meta[mcpcore.MetaStrategy])
		texts := mcpfittest.Texts(t, res)
		require.Len(t, texts, 2, "a summary and its guidance line")
		assert.LessOrEqual(t, mcpfittest.Tokens(t, res), ctxfit.DefaultHardCap, "the summary exceeds the hard cap")
		assert.Less(t, mcpfittest.Tokens(t, res), mcpfittest.Count(rawText), "the summary is not smaller than the booking")
		var shaped struct {
			Summary map[string]any
			Meta    struct {
				Kind             string
				DetailsAvailable *struct{ Parameters map[string]string }
			}
		}
		require.NoError(t, json.Unmarshal([]byte(texts[0]), &shaped), texts[0])
		require.Equal(t, "preview", shaped.Meta.Kind)
		require.NotNil(t, shaped.Meta.DetailsAvailable, texts[0])
		leftOut := shaped.Meta.DetailsAvailable.Parameters["fields"]
		require.NotEmpty(t, leftOut, texts[0])
		assert.NotEqual(t, want, shaped.Summary, "the summary is the whole booking")

		call := regexp.MustCompile(`call ` + mcpcore.DefaultDetailsTool + ` with (\{.*\}) \(or`).FindStringSubmatch(texts[1])
		require.NotNil(t, call, texts[1])
		in := jsonObject(t, call[1])
		assert.Equal(t, map[string]any{"cursor": mcpfittest.DetailsCursor(res), "fields": leftOut}, in)

		// The left-out fields are over the hard cap: pages and parts with
		// cursors, from b then alternately a and b.
		drill := mcpfittest.Call(t, b, mcpcore.DefaultDetailsTool, in)
		require.False(t, drill.IsError, "%v", mcpfittest.Texts(t, drill))
		rebuilt, calls := rebuildAcross(t, drill, a, b)
		require.Positive(t, calls, "the drill-down came whole: the test no longer crosses proxies")
		whole := jsonObject(t, rebuilt)
		for k, v := range shaped.Summary {
			if !slices.Contains(strings.Split(leftOut, ","), k) {
				whole[k] = v // kept whole in the summary
			}
		}
		assert.Equal(t, want, whole, "summary from one proxy + left-out fields from both")

		in["fields"] = "all"
		all := mcpfittest.Call(t, a, mcpcore.DefaultDetailsTool, in)
		require.False(t, all.IsError, "%v", mcpfittest.Texts(t, all))
		rebuilt, calls = rebuildAcross(t, all, b, a)
		require.Positive(t, calls)
		assert.Equal(t, rawText, rebuilt, "the whole booking, byte for byte")
	})
}

func TestARotatedSecretKeepsAProxysOldCursorsValidAndARemovedOneIsRejected(t *testing.T) {
	bins := binaries(t)
	srv := redistest.Start(t)
	before := proxyInstance(t, bins, redisEnv(srv, oldSecret)...)
	old := map[string]string{}
	for _, tool := range []string{"list_bookings", "read_log"} {
		old[tool] = firstToolCursor(t, before, tool)
	}

	rotated := proxyInstance(t, bins, redisEnv(srv, newSecret, oldSecret)...)
	t.Run("cursors signed with the previous secret are honoured by the rotated proxy", func(t *testing.T) {
		for tool, cursor := range old {
			res := mcpfittest.Call(t, rotated, mcpcore.DefaultNextTool, map[string]any{"cursor": cursor})
			assert.False(t, res.IsError, "%s: %v", tool, mcpfittest.Texts(t, res))
			assert.NotEmpty(t, mcpfittest.NextCursor(res), tool)
		}
	})
	t.Run("a cursor signed with the new secret is honoured by another rotated proxy", func(t *testing.T) {
		other := proxyInstance(t, bins, redisEnv(srv, newSecret, oldSecret)...)
		res := mcpfittest.Call(t, other, mcpcore.DefaultNextTool, map[string]any{"cursor": firstToolCursor(t, rotated, "list_bookings")})
		assert.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
	})

	removed := proxyInstance(t, bins, redisEnv(srv, newSecret)...)
	t.Run("cursors signed with a removed secret are a cursor_invalid tool error", func(t *testing.T) {
		for tool, cursor := range old {
			res := mcpfittest.Call(t, removed, mcpcore.DefaultNextTool, map[string]any{"cursor": cursor})
			assert.Equal(t, "cursor_invalid", toolError(t, res).Code, tool)
		}
	})
}

func TestWhenRedisGoesDownAProxysContinuationsAreRetryableToolErrorsAndTheProxyRecovers(t *testing.T) {
	bins := binaries(t)
	srv := redistest.Start(t)
	cs := proxyInstance(t, bins, redisEnv(srv, oldSecret)...)
	raw, _ := connect(t, bins["mcpserver"], "-raw")
	cursor := firstToolCursor(t, cs, "list_bookings")

	require.NoError(t, srv.Stop())
	assertStoreUnavailable := func(t *testing.T, res *mcp.CallToolResult) {
		t.Helper()
		e := toolError(t, res)
		assert.Equal(t, "store_unavailable", e.Code)
		assert.Contains(t, e.Data.Suggestion, "Retry")
		assert.Positive(t, e.Data.RetryAfter)
	}
	t.Run("a result to shape is a store_unavailable tool error, not an over-budget pass-through", func(t *testing.T) {
		assertStoreUnavailable(t, mcpfittest.Call(t, cs, "list_bookings", nil))
	})
	t.Run("a continuation is a store_unavailable tool error", func(t *testing.T) {
		assertStoreUnavailable(t, mcpfittest.Call(t, cs, mcpcore.DefaultNextTool, map[string]any{"cursor": cursor}))
	})
	t.Run("a small result needs no store and passes through", func(t *testing.T) {
		args := map[string]any{"status": "unknown"}
		res := mcpfittest.Call(t, cs, "list_bookings", args)
		require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
		assert.Equal(t, mcpfittest.Texts(t, mcpfittest.Call(t, raw, "list_bookings", args)), mcpfittest.Texts(t, res))
	})

	require.NoError(t, srv.Restart())
	t.Run("the proxy recovers by itself once Redis is back on the same port", func(t *testing.T) {
		require.Eventually(t, func() bool {
			return !mcpfittest.Call(t, cs, "list_bookings", nil).IsError
		}, 10*time.Second, 50*time.Millisecond)
		bodies := followAcross(t, "list_bookings", nil, cs)
		assert.Equal(t, mcpfittest.Texts(t, mcpfittest.Call(t, raw, "list_bookings", nil))[0], mcpfittest.JoinItems(t, bodies, "items"))
	})
}
