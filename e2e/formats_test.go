package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTheKnowledgeGraphFormatsThroughTheProxy runs e2e/ts/formats.test.mjs:
// examples/knowledgegraph/memory.yaml's output formats through ctxfit proxy
// in front of @modelcontextprotocol/server-memory, with the TypeScript SDK
// client validating every result against the tool's outputSchema.
func TestTheKnowledgeGraphFormatsThroughTheProxy(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed; the end-to-end tests need Node 20 or later")
		}
		t.Skip("node is not installed")
	}
	bins := binaries(t)
	dir, err := filepath.Abs("ts")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "node_modules", ".bin", "mcp-server-memory"))
	require.NoError(t, err, "mcp-server-memory is missing: run (cd e2e/ts && npm ci --no-audit --no-fund), as test.sh does")
	config, err := filepath.Abs(filepath.Join("..", "examples", "knowledgegraph", "memory.yaml"))
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "formats.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(),
		"CTXFIT_E2E_CTXFIT="+bins["ctxfit"],
		"CTXFIT_E2E_CONFIG="+config,
		"CTXFIT_E2E_MEMORY="+filepath.Join(t.TempDir(), "memory.jsonl"),
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", out)
	logSavings(t, out)
}

// TestTheKnowledgeGraphFormatsThroughMcpfit runs
// e2e/ts/formats_mcpfit.test.mjs: examples/knowledgegraph/memory.yaml's
// output formats through mcpfit installed on a Go server with
// server-memory's graph tools (this test binary, see runGraphServer), with
// the TypeScript SDK client validating every result against the tool's
// outputSchema.
func TestTheKnowledgeGraphFormatsThroughMcpfit(t *testing.T) {
	node, dir := nodeAndTS(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	config, err := graphServerConfig()
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "formats_mcpfit.test.mjs")
	cmd.Dir = dir
	log := filepath.Join(t.TempDir(), "transformations.jsonl")
	cmd.Env = append(cleanEnv(), "CTXFIT_E2E_GRAPHSERVER="+exe, "CTXFIT_E2E_CONFIG="+config, graphLogEnv+"="+log)
	out, err := cmd.CombinedOutput()
	logged, _ := os.ReadFile(log)
	require.NoError(t, err, "node --test:\n%s\nthe transformation log:\n%s", out, logged)
	logSavings(t, out)
}

// logSavings logs the savings per format the node tests report (their
// "savings of format" diagnostics), for go test -v.
func logSavings(t *testing.T, out []byte) {
	t.Helper()
	for line := range strings.SplitSeq(string(out), "\n") {
		if _, s, ok := strings.Cut(line, "# savings of format "); ok {
			t.Log("savings of format " + s)
		}
	}
}
