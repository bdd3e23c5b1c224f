package budget_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goTool returns the go command, or skips the test without one or in short
// mode.
func goTool(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	return gobin
}

// TestWeight checks what counting tokens costs a program: budget depends on
// the standard library and ctxfit's own packages only, and a program that
// imports only budget (testdata/countonly) is at most 6 MB. It logs the size:
//
//	go test ./budget -run Weight -v
func TestWeight(t *testing.T) {
	gobin := goTool(t)
	t.Run("budget imports nothing outside the standard library and ctxfit", func(t *testing.T) {
		out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
		require.NoError(t, err)
		for _, pkg := range strings.Fields(string(out)) {
			assert.True(t, strings.HasPrefix(pkg, "github.com/ctxfit/ctxfit/"), "budget depends on %s", pkg)
		}
	})
	t.Run("a program that imports only budget is at most 6 MB", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "countonly")
		out, err := exec.Command(gobin, "build", "-o", bin, "./testdata/countonly").CombinedOutput()
		require.NoError(t, err, "%s", out)
		fi, err := os.Stat(bin)
		require.NoError(t, err)
		t.Logf("testdata/countonly: %d bytes (%.1f MB)", fi.Size(), float64(fi.Size())/1e6)
		assert.LessOrEqual(t, fi.Size(), int64(6_000_000))
	})
}
