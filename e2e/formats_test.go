package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/summary"
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

	metricsFile, logFile := filepath.Join(t.TempDir(), "metrics.jsonl"), filepath.Join(t.TempDir(), "transformations.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "formats.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(),
		"CTXFIT_E2E_CTXFIT="+bins["ctxfit"],
		"CTXFIT_E2E_CONFIG="+config,
		"CTXFIT_E2E_MEMORY="+filepath.Join(t.TempDir(), "memory.jsonl"),
		"CTXFIT_METRICS_FILE="+metricsFile,
		"CTXFIT_FORMAT_LOG_FILE="+logFile,
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", out)
	logSavings(t, out)
	checkMetricsAndLogAgree(t, metricsFile, logFile)
}

// checkMetricsAndLogAgree holds the proxy's metrics file and its
// transformation log to issue 28's point 4: a metrics line for every
// formatted response, and every log entry agreeing with the metrics line of
// its run (same timestamp) on every field they share.
func checkMetricsAndLogAgree(t *testing.T, metricsFile, logFile string) {
	t.Helper()
	metrics := readJSONLines[summary.Metrics](t, metricsFile)
	require.NotEmpty(t, metrics, "a metrics line a formatted response")
	sent := 0
	for _, m := range metrics {
		assert.NotEmpty(t, m.Operation)
		assert.Positive(t, m.RawBytes)
		if !m.UsedFallback {
			sent++
			assert.Positive(t, m.CompactTokens, "exact tokens of the rendering sent")
			assert.Less(t, m.CompactBytes, m.RawBytes, "a rendering is sent only when smaller")
		}
	}
	assert.Positive(t, sent, "some renderings were sent")
	var entries []summary.TransformationLog
	if _, err := os.Stat(logFile); err == nil {
		entries = readJSONLines[summary.TransformationLog](t, logFile)
	}
	t.Logf("%d metrics lines (%d renderings sent), %d transformation log entries", len(metrics), sent, len(entries))
	for _, e := range entries {
		i := slices.IndexFunc(metrics, func(m summary.Metrics) bool { return m.Timestamp.Equal(e.Timestamp) && m.Operation == e.Operation })
		require.GreaterOrEqual(t, i, 0, "the log entry %+v has the metrics line of its run", e)
		m := metrics[i]
		assert.Equal(t, m.RawBytes, e.InputSize, "the log and the metrics agree")
		assert.Equal(t, m.ProcessingTimeMs, e.ProcessingTimeMs, "the log and the metrics agree")
		assert.Equal(t, m.UsedFallback, e.UsedFallback, "the log and the metrics agree")
	}
}

// readJSONLines decodes a JSON Lines file.
func readJSONLines[T any](t *testing.T, path string) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []T
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var v T
		require.NoError(t, json.Unmarshal([]byte(line), &v), line)
		out = append(out, v)
	}
	return out
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
