package budget_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// BenchmarkCountOnlyStartup runs testdata/countonly, built once, to count a
// 6-byte file: the wall time from process start to exit of a program that
// imports only budget, its CPU time, and the size of its binary (MB):
//
//	go test ./budget -run '^$' -bench CountOnlyStartup
func BenchmarkCountOnlyStartup(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "countonly")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/countonly").CombinedOutput()
	require.NoError(b, err, "go build: %s", out)
	fi, err := os.Stat(bin)
	require.NoError(b, err)
	file := filepath.Join(dir, "tiny.txt")
	require.NoError(b, os.WriteFile(file, []byte("hello\n"), 0o600))
	var cpu time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, file)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("countonly: %v: %s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/run")
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/run") // the process's user and system time
	b.ReportMetric(loadAverage(), "load-avg")                                  // what the time was measured beside
	b.ReportMetric(float64(fi.Size())/1e6, "MB")
}

// loadAverage is the machine's load average over the last minute
// (/proc/loadavg), 0 where it cannot be read: start-up times grow with it,
// so docs/benchmarks.md shows it beside them.
func loadAverage() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(raw) + " 0")[0], 64)
	return f
}
