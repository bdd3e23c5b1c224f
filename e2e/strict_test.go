package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheStrictClientAcceptsEveryResultWithEveryStrategyForced runs
// e2e/ts/strict.test.mjs: every tool of the examples and of the npm
// servers through the proxy, with every strategy forced, accepted by the
// TypeScript client's output-schema checks; a huge original read through
// its ctxfit:// link in ranges; an MCP App page passed unchanged. This side
// counts every result the client read through the proxy against the hard
// cap (3,000 tokens), as a client would (see clientTokens).
func TestTheStrictClientAcceptsEveryResultWithEveryStrategyForced(t *testing.T) {
	t.Parallel() // as TestTheClientGuardKeepsBothPromisesWithRealServers
	node, dir := nodeAndTS(t)
	bins := binaries(t)
	fixtures := t.TempDir()
	writeFixtures(t, fixtures)
	require.NoError(t, os.WriteFile(filepath.Join(fixtures, "notes.txt"), []byte("a short note\n"), 0o644))
	outFile := filepath.Join(t.TempDir(), "results.jsonl")

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-concurrency=1", "strict.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(),
		"CTXFIT_E2E_CTXFIT="+bins["ctxfit"],
		"CTXFIT_E2E_MCPSERVER="+bins["mcpserver"],
		"CTXFIT_E2E_MCPGOSERVER="+bins["mcpgoserver"],
		"CTXFIT_E2E_FIXTURES="+fixtures,
		"CTXFIT_E2E_MEMORY="+filepath.Join(t.TempDir(), "memory.jsonl"),
		"CTXFIT_E2E_TMP="+t.TempDir(),
		"CTXFIT_E2E_OUT="+outFile,
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", out)

	f, err := os.Open(outFile)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		var line struct {
			Case   string `json:"case"`
			Media  bool   `json:"media"`
			Result result `json:"result"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		n++
		if line.Media {
			continue // media are counted as a model reads them, by the shaper
		}
		assert.LessOrEqual(t, clientTokens(t, line.Result), 3000, "%s: a result over the hard cap", line.Case)
	}
	require.NoError(t, sc.Err())
	require.Positive(t, n)
	t.Logf("%d results counted", n)
}
