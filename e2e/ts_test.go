package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTheTypeScriptClientAcceptsShapedResults runs e2e/ts (node --test)
// against the binaries built here. It needs Node 20 or later and the npm
// dependencies installed: (cd e2e/ts && npm ci --no-audit --no-fund),
// which test.sh does. Without node it is skipped, except under CI=true,
// where it fails.
func TestTheTypeScriptClientAcceptsShapedResults(t *testing.T) {
	node, dir := nodeAndTS(t)
	bins := binaries(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "mcp.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(),
		"CTXFIT_E2E_CTXFIT="+bins["ctxfit"],
		"CTXFIT_E2E_MCPSERVER="+bins["mcpserver"],
		"CTXFIT_E2E_MCPGOSERVER="+bins["mcpgoserver"], // empty without examples/mcpgoserver
		"CTXFIT_E2E_PROXY_CONFIG="+writeProxyConfig(t),
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", out)
	t.Logf("node --test:\n%s", out)
}

// nodeAndTS returns node and the e2e/ts directory, skipping the test
// without node (failing under CI=true) and failing without the npm
// dependencies.
func nodeAndTS(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed; the TypeScript end-to-end tests need Node 20 or later")
		}
		t.Skip("node is not installed")
	}
	dir, err = filepath.Abs("ts")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	require.NoError(t, err, "the npm dependencies are missing: run (cd e2e/ts && npm ci --no-audit --no-fund), as test.sh does")
	return node, dir
}
