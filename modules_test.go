package ctxfit_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(goTool, "list", "-m", "all")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "GOWORK=off go list -m all: %s", out)
	var mods []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		mods = append(mods, strings.Fields(line)[0])
	}
	require.Contains(t, mods, "github.com/ctxfit/ctxfit")
	for _, h := range heavy {
		assert.NotContains(t, mods, h, "the core module's graph must not hold %s: require it from a nested module", h)
	}
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
