package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// demo runs `ctxfit demo` with its defaults once for the tests that read its
// output, each a part of it (the whole demo is the slowest thing these tests
// run, most of all under -race).
func demo() (code int, stdout, stderr string) {
	r := demoRun()
	return r.code, r.stdout, r.stderr
}

var demoRun = sync.OnceValue(func() (r struct {
	code           int
	stdout, stderr string
}) {
	var out, errOut bytes.Buffer
	r.code = run([]string{"demo"}, strings.NewReader(""), &out, &errOut)
	r.stdout, r.stderr = out.String(), errOut.String()
	return r
})

func TestCount(t *testing.T) {
	text := corpus.Prose(4000)
	file := filepath.Join(t.TempDir(), "in.txt")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
	want := func(enc string) string {
		c, err := budget.Exact(enc)
		require.NoError(t, err)
		return strconv.Itoa(c.Count(text)) + "\n"
	}

	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"a file is counted with o200k_base by default", "", []string{"count", file}, want("o200k_base")},
		{"standard input is counted when no file is given", text, []string{"count"}, want("o200k_base")},
		{"a dash reads standard input", text, []string{"count", "-"}, want("o200k_base")},
		{"the encoding flag picks cl100k_base", "", []string{"count", "--encoding", "cl100k_base", file}, want("cl100k_base")},
		{"empty input counts zero", "", []string{"count"}, "0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, tt.args...)
			assert.Equal(t, 0, code, errOut)
			assert.Equal(t, tt.want, out)
		})
	}
}

func TestCountRefusesBadInvocations(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"an unknown encoding is a usage error", []string{"count", "--encoding", "p50k_base"}, 2, `unknown encoding "p50k_base"`},
		{"two files are a usage error", []string{"count", "a", "b"}, 2, "at most one FILE"},
		{"a missing file is an error", []string{"count", "/nonexistent/file"}, 1, "no such file"},
		{"an unknown command is a usage error", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"no command prints the usage", nil, 2, "Usage:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tt.args...)
			assert.Equal(t, tt.wantCode, code)
			assert.Contains(t, errOut, tt.wantErr)
		})
	}
}

func TestDemoPagesEveryItemExactlyOnceAndRejectsBadCursors(t *testing.T) {
	code, out, errOut := demo()
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "500 of 500 items recovered, 500 exactly once, in order: true")
	assert.Contains(t, out, "rejected: pagination: cursor: invalid:")
	assert.Contains(t, out, "rejected: pagination: cursor: mismatch:")
	assert.Contains(t, out, "rejected: pagination: cursor: expired:")
	m := regexp.MustCompile(`Largest page: (\d+) tokens \(threshold 4000`).FindStringSubmatch(out)
	require.Len(t, m, 2, out)
	largest, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.LessOrEqual(t, largest, 4000, "no page is over the threshold")
}

func TestDemoWithASmallListIssuesNoCursor(t *testing.T) {
	code, out, errOut := runCLI(t, "", "demo", "-items", "3")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "3 of 3 items recovered")
	assert.Contains(t, out, "no cursor was issued")
}

func TestDemoRefusesBadFlags(t *testing.T) {
	code, _, errOut := runCLI(t, "", "demo", "-threshold", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "threshold 0 must be > 0")
}

func TestDemoSummarizesTheBookingAndRecoversItThroughTheDrillDown(t *testing.T) {
	code, out, errOut := demo()
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "== Summary: one verbose booking")
	assert.Regexp(t, `Summary: \d+ tokens \((7\d|8\d|9\d)% fewer\)`, out, "a summary cuts at least 70%")
	assert.Contains(t, out, "Drill-down: /api/v1/bookings/BK12345")
	assert.Contains(t, out, "identical to the original: true")
}

func TestDemoChunksTheLogAndRecoversItByteForByte(t *testing.T) {
	code, out, errOut := demo()
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "== Chunks: a 10,000-line log")
	assert.Contains(t, out, "kind detected: log")
	assert.Contains(t, out, "the chunks put together are the log byte for byte: true")
	assert.Regexp(t, `Largest chunk: (1\d{3}|2000|\d{1,3}) tokens \(limit 2000\)`, out)
}

func TestDemoWalksTheHTTPExampleAndAnMCPToolResult(t *testing.T) {
	code, out, errOut := demo()
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "== HTTP: the example bookings API behind httpfit, on http://127.0.0.1:")
	for _, strategy := range []string{"200 pagination", "200 summary", "200 chunking", "400 cursor_mismatch"} {
		assert.Contains(t, out, strategy)
	}
	assert.Contains(t, out, "== MCP: a tool result shaped and continued")
	assert.Regexp(t, `Showing items 1-\d+ of 500 .* For the next page call ctxfit_next with \{"cursor":"`, out)
	assert.Regexp(t, `Showing items \d+-\d+ of 500`, out)
}

func TestDemoFindsInTwoCallsWhatPagingNeedsDozensFor(t *testing.T) {
	code, out, errOut := demo()
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "== Find, don't page")
	for _, question := range []string{`last line about a locked booking \(10000-line log\)`, `how many of the 500 bookings are confirmed`} {
		m := regexp.MustCompile(question + `\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+.*\((true|false)\)`).FindStringSubmatch(out)
		require.Len(t, m, 6, "%s in:\n%s", question, out)
		pagedCalls, _ := strconv.Atoi(m[1])
		pagedTokens, _ := strconv.Atoi(m[2])
		findCalls, _ := strconv.Atoi(m[3])
		findTokens, _ := strconv.Atoi(m[4])
		assert.Equal(t, 2, findCalls, question)
		assert.Greater(t, pagedCalls, 10, question)
		assert.Less(t, findTokens, pagedTokens/5, question)
		assert.Equal(t, "true", m[5], "%s: the answer is right", question)
	}
}
