package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

func bigList(n int) string {
	var items []string
	for i := range n {
		items = append(items, fmt.Sprintf(`{"id":%d,"name":"item %d","notes":"%s"}`, i, i, strings.Repeat("lorem ipsum ", 8)))
	}
	return "[" + strings.Join(items, ",") + "]"
}

func bigObject() string {
	sections := map[string]any{"id": "BK1", "status": "confirmed"}
	for i := range 40 {
		sections[fmt.Sprintf("section%02d", i)] = map[string]any{"text": strings.Repeat("details of the booking ", 20), "n": i}
	}
	b, _ := json.Marshal(sections)
	return string(b)
}

func TestShapeSaysWhenTheTokensBeforeAreAnEstimate(t *testing.T) {
	list := bigList(400)
	exact, err := budget.Exact(budget.O200KBase)
	require.NoError(t, err)
	code, _, errOut := runCLI(t, list, "shape", "--threshold", "500", "--hard-cap", "1000")
	require.Equal(t, 0, code, errOut)
	require.Greater(t, exact.Count(list), 1000, "over the hard cap, where the guard estimates")
	assert.Regexp(t, `^pagination: about \d+ \(estimated; ctxfit count gives the exact figure\) -> `, errOut)

	code, _, errOut = runCLI(t, bigList(20), "shape", "--threshold", "500", "--hard-cap", "100000")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `^pagination: \d+ -> `, errOut, "under the hard cap the count is exact")
}

func TestShapePrintsWhatTheGuardWouldReturn(t *testing.T) {
	exact, err := budget.Exact(budget.O200KBase)
	require.NoError(t, err)
	list := bigList(400)
	file := filepath.Join(t.TempDir(), "list.json")
	require.NoError(t, os.WriteFile(file, []byte(list), 0o600))

	tests := []struct {
		name         string
		stdin        string
		args         []string
		wantStrategy string
		check        func(t *testing.T, out string)
	}{
		{"a JSON list from a file is paged", "", []string{"shape", "--threshold", "1000", "--hard-cap", "2000", file}, "pagination",
			func(t *testing.T, out string) {
				var page struct {
					Items      []json.RawMessage `json:"items"`
					NextCursor string            `json:"nextCursor"`
				}
				require.NoError(t, json.Unmarshal([]byte(out), &page))
				assert.NotEmpty(t, page.Items)
				assert.NotEmpty(t, page.NextCursor)
				assert.LessOrEqual(t, exact.Count(out), 2000)
			}},
		{"a JSON list from standard input is paged", list, []string{"shape", "--threshold", "1000"}, "pagination", nil},
		{"a large object is summarized", bigObject(), []string{"shape", "--threshold", "1000"}, "summary",
			func(t *testing.T, out string) { assert.Contains(t, out, "detailsAvailable") }},
		{"text is chunked", corpus.Prose(20000), []string{"shape", "--threshold", "1000", "-"}, "chunking",
			func(t *testing.T, out string) { assert.Contains(t, out, `"content"`) }},
		{"JSON read as text when the content type says so", list, []string{"shape", "--threshold", "1000", "--content-type", "text/plain"}, "chunking", nil},
		{"a small response passes through byte for byte", `{"ok": true}`, []string{"shape"}, "passthrough",
			func(t *testing.T, out string) { assert.Equal(t, `{"ok": true}`, out) }},
		{"cl100k_base counts differently", list, []string{"shape", "--threshold", "1000", "--encoding", "cl100k_base"}, "pagination", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, tt.args...)
			require.Equal(t, 0, code, errOut)
			assert.Regexp(t, `^`+tt.wantStrategy+`: (\d+|about \d+ \(estimated; ctxfit count gives the exact figure\)) -> \d+ tokens \(threshold \d+, hard cap \d+\)`, errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line of summary: %q", errOut)
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

func TestShapeRefusesBadInvocations(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"an unknown encoding is a usage error", []string{"shape", "--encoding", "p50k_base"}, 2, "encoding"},
		{"a hard cap under the threshold is a usage error", []string{"shape", "--threshold", "5000", "--hard-cap", "10"}, 2, "hardCap 10 must be >= threshold 5000"},
		{"a negative threshold is a usage error", []string{"shape", "--threshold", "-1"}, 2, "threshold -1 must be >= 0"},
		{"two files are a usage error", []string{"shape", "a", "b"}, 2, "at most one FILE"},
		{"an unknown flag is a usage error", []string{"shape", "--frobnicate"}, 2, "flag provided but not defined"},
		{"a missing file is an error", []string{"shape", "/nonexistent/file.json"}, 1, "no such file"},
		{"a missing settings file is a usage error", []string{"shape", "--config", "/nonexistent/ctxfit.yaml"}, 2, "/nonexistent/ctxfit.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "{}", tt.args...)
			assert.Equal(t, tt.wantCode, code, errOut)
			assert.Contains(t, errOut, tt.wantErr)
		})
	}
}
