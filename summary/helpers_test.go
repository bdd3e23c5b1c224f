package summary_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/summary"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func exactCounter(tb testing.TB) budget.Counter {
	tb.Helper()
	c, err := budget.Exact(budget.O200KBase)
	require.NoError(tb, err)
	return c
}

func newSummarizer(tb testing.TB, opts *summary.Options) *summary.Summarizer {
	tb.Helper()
	s, err := summary.New(opts)
	require.NoError(tb, err)
	return s
}

// decode decodes JSON into a generic value, numbers as json.Number.
func decode(tb testing.TB, data []byte) any {
	tb.Helper()
	var v any
	dec := json.NewDecoder(bytesReader(data))
	dec.UseNumber()
	require.NoError(tb, dec.Decode(&v), "%s", data)
	return v
}

// checkGolden compares got with testdata/golden/name, rewriting it with
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create the golden file")
	assert.Equal(t, string(want), string(got))
}

// indent returns data indented, with a final newline, for golden files.
func indent(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var v json.RawMessage = data
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(tb, err)
	return append(b, '\n')
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// truncatedText matches the marker automatic selection appends to long text.
var truncatedText = regexp.MustCompile(`^(?s)(.*)… \[[0-9,]+ more characters; fields=.*\]$`)

// partOf reports whether the decoded JSON value part holds only fields of
// whole: objects have a subset of the keys, with values part of whole's;
// array elements are each part of some element of whole's array; scalars
// are equal, except a string cut by automatic selection, which is a prefix
// of whole's followed by the marker. It returns the path of the first
// difference.
func partOf(part, whole any, path string) (string, bool) {
	switch p := part.(type) {
	case map[string]any:
		w, ok := whole.(map[string]any)
		if !ok {
			return path, false
		}
		for k, v := range p {
			wv, ok := w[k]
			if !ok {
				return path + "." + k, false
			}
			if at, ok := partOf(v, wv, path+"."+k); !ok {
				return at, false
			}
		}
		return "", true
	case []any:
		w, ok := whole.([]any)
		if !ok {
			return path, false
		}
		for i, v := range p {
			found := false
			for _, wv := range w {
				if _, ok := partOf(v, wv, path); ok {
					found = true
					break
				}
			}
			if !found {
				return fmt.Sprintf("%s[%d]", path, i), false
			}
		}
		return "", true
	case string:
		w, ok := whole.(string)
		if !ok {
			return path, false
		}
		if p == w {
			return "", true
		}
		if m := truncatedText.FindStringSubmatch(p); m != nil && strings.HasPrefix(w, m[1]) {
			return "", true
		}
		return path, false
	default:
		if reflect.DeepEqual(part, whole) {
			return "", true
		}
		return path, false
	}
}

func assertPartOf(t *testing.T, part, whole any) {
	t.Helper()
	at, ok := partOf(part, whole, "$")
	assert.True(t, ok, "the summary holds %s, which is not in the input", at)
}
