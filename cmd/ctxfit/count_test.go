package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkCountStartup runs the ctxfit binary, built once, to count a
// 6-byte file with each encoding: the wall time from process start to exit,
// as a user sees it, and the process's CPU time, which a loaded machine
// inflates less, with `ctxfit help` and `ctxfit version` (no tokenizer)
// beside it as the floor of starting the process:
//
//	go test ./cmd/ctxfit -run '^$' -bench CountStartup
func BenchmarkCountStartup(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "ctxfit")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(b, err, "go build: %s", out)
	file := filepath.Join(dir, "tiny.txt")
	require.NoError(b, os.WriteFile(file, []byte("hello\n"), 0o600))
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"help", []string{"help"}},
		{"version", []string{"version"}},
		{"count/o200k_base", []string{"count", file}},
		{"count/cl100k_base", []string{"count", "--encoding", "cl100k_base", file}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(bin, bc.args...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("ctxfit %v: %v: %s", bc.args, err, out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/run")
			// The process's CPU time (user and system): on a loaded
			// machine, wall time measures the neighbours too.
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/run")
			b.ReportMetric(loadAverage(), "load-avg") // what the time was measured beside
		})
	}
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
