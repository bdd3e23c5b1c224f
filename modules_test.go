package ctxfit_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heavy are the modules that only some users need: the MCP SDKs, Redis,
// the OpenTelemetry SDK and Prometheus, and the OpenAPI parser. They are
// required by the nested modules that use them (mcpfit, mcpgofit, proxy,
// store/redisstore, telemetry/otelsink, gateway, ...), never by the core
// module, so a program that imports only the core (httpfit, say) does not
// have their versions raised by ctxfit.
var heavy = []string{
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/mark3labs/mcp-go",
	"github.com/redis/go-redis/v9",
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/sdk/metric",
	"go.opentelemetry.io/otel/exporters/prometheus",
	"github.com/prometheus/client_golang",
	"github.com/getkin/kin-openapi",
}

func TestTheCoreModuleGraphHasNoHeavyModule(t *testing.T) {
	// go mod graph prints the graph the go command builds with (pruned as
	// the go.mod files' go versions allow): every module whose version a
	// user of the core could have raised. Unlike go list -m all, it needs
	// no go.mod file that building the core did not already fetch, so it
	// runs offline (GOPROXY=off): a test never waits on the network.
	out := goCommand(t, []string{"GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=readonly"}, "mod", "graph")
	mods := map[string]bool{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		for _, m := range strings.Fields(line) {
			path, _, _ := strings.Cut(m, "@")
			mods[path] = true
		}
	}
	require.True(t, mods["github.com/ctxfit/ctxfit"], "go mod graph names the core module: %s", out)
	require.True(t, mods["github.com/pkoukk/tiktoken-go"], "go mod graph names the core's requirements: %s", out)
	for _, h := range heavy {
		assert.False(t, mods[h], "the core module's graph must not hold %s: require it from a nested module", h)
	}
}

// goCommand runs the go command with args and env added to the test's
// environment, and returns its standard output. It skips the test without
// a go command, and stops the command after two minutes, so that a go
// command that waits (on a lock, on the network) fails the test instead
// of hanging the suite.
func goCommand(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s go %s: %s", strings.Join(env, " "), strings.Join(args, " "), stderr.String())
	return out
}

func TestEveryModuleOfTheRepositoryIsInTheWorkspace(t *testing.T) {
	work, err := os.ReadFile("go.work")
	require.NoError(t, err)
	var used []string
	inUse := false
	for _, line := range strings.Split(string(work), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "use (":
			inUse = true
		case line == ")":
			inUse = false
		case inUse && line != "":
			used = append(used, filepath.Clean(line))
		}
	}
	var mods []string
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// benchmarks/ is a module of its own on purpose: it compares ctxfit
		// with libraries ctxfit does not depend on, outside the workspace.
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || path == "benchmarks" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" {
			mods = append(mods, filepath.Dir(path))
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(mods)
	slices.Sort(used)
	assert.Equal(t, mods, used, "go.work's use list and the go.mod files of the tree (go work use -r . adds them)")
}
