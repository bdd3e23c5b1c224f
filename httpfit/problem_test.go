package httpfit_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/pagination"
	"github.com/ctxfit/ctxfit/summary"
)

// repoRoot is the repository's root, seen from this package's directory,
// where go test runs.
const repoRoot = ".."

// problemCodes returns every code ctxfit.ProblemOf can give, read from its
// source, so that a code added there without documentation fails the test.
func problemCodes(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "problem.go"))
	require.NoError(t, err)
	var codes []string
	for _, m := range regexp.MustCompile(`Code:\s*"([^"]+)"|codeInternal\s*=\s*"([^"]+)"`).FindAllSubmatch(src, -1) {
		codes = append(codes, string(m[1])+string(m[2]))
	}
	require.NotEmpty(t, codes, "problem.go names its codes")
	slices.Sort(codes)
	return slices.Compact(codes)
}

// docSection is a section of a Markdown file under a "## " heading.
type docSection struct {
	heading string
	body    string
}

// markdownSections reads the "## " sections of a Markdown file, by the
// anchors GitHub gives their headings.
func markdownSections(t *testing.T, path string) map[string]docSection {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sections := map[string]docSection{}
	var cur string
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if h, ok := strings.CutPrefix(line, "## "); ok && !fenced {
			cur = githubAnchor(h)
			require.NotContains(t, sections, cur, "two headings with one anchor in %s", path)
			sections[cur] = docSection{heading: h}
			continue
		}
		if cur != "" {
			s := sections[cur]
			s.body += line + "\n"
			sections[cur] = s
		}
	}
	require.NoError(t, sc.Err())
	return sections
}

// githubAnchor is the fragment GitHub gives a heading: lower case, spaces
// as hyphens, punctuation other than hyphens and underscores dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// docOf splits a problem type URI into the repository file it names and
// the fragment, the anchor of a heading in it.
func docOf(t *testing.T, uri string) (path, anchor string) {
	t.Helper()
	const repo = "https://github.com/ctxfit/ctxfit/blob/main/"
	rest, ok := strings.CutPrefix(uri, repo)
	require.True(t, ok, "%s is a page of the repository's main branch", uri)
	file, anchor, ok := strings.Cut(rest, "#")
	require.True(t, ok, "%s has a fragment", uri)
	return filepath.Join(repoRoot, filepath.FromSlash(file)), anchor
}

func TestEveryProblemCodeHasATypeThatResolvesToItsSectionOfTheDocs(t *testing.T) {
	codes := problemCodes(t)
	assert.Subset(t, codes, []string{"cursor_expired", "cursor_mismatch", "cursor_invalid", "cursor_stale",
		"limit_invalid", "fields_invalid", "line_range_invalid", "part_invalid", "parameter_invalid",
		"shaping_timeout", "shaping_busy", "store_unavailable", "internal"}, "the codes are read from problem.go")

	// The status of each code, from ProblemOf itself.
	statuses := map[string]int{}
	for _, err := range []error{
		cursor.ErrExpired, cursor.ErrMismatch, cursor.ErrInvalid, cursor.ErrMalformed,
		ctxfit.ErrSnapshotGone, ctxfit.ErrDataChanged, pagination.ErrInvalidLimit, summary.ErrUnknownField,
		chunk.ErrLineRange, ctxfit.ErrPart, ctxfit.ErrBadRequest, ctxfit.ErrShapeTimeout, ctxfit.ErrBusy,
		ctxfit.ErrStoreUnavailable, ctxfit.ErrResponseTooLarge, ctxfit.ErrResponseEncoding, errors.New("anything else"),
	} {
		p := ctxfit.ProblemOf(err, ctxfit.Params{})
		statuses[p.Code] = p.Status
	}
	assert.ElementsMatch(t, codes, keysOf(statuses), "every code is reached by one of the errors above")

	var doc string
	documented := map[string]bool{}
	for _, code := range codes {
		t.Run(code+" has a documented type", func(t *testing.T) {
			uri := httpfit.ProblemType(code)
			path, anchor := docOf(t, uri)
			if doc == "" {
				doc = path
			}
			assert.Equal(t, doc, path, "every type is a section of one page")
			sections := markdownSections(t, path)
			s, ok := sections[anchor]
			require.True(t, ok, "%s: no heading with anchor %q in %s", uri, anchor, path)
			documented[anchor] = true
			assert.Equal(t, code, s.heading, "the heading is the code")
			if status, ok := statuses[code]; ok {
				assert.Contains(t, s.body, fmt.Sprintf("**%d", status), "the section states the status")
			}
			assert.Contains(t, s.body, "- Client:", "the section says what a client does")
		})
	}
	if doc != "" {
		for anchor := range markdownSections(t, doc) {
			assert.True(t, documented[anchor], "the section %q documents no code ctxfit has", anchor)
		}
	}
}

func TestProblemDocumentsCarryTheTypeOfTheirCode(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	h := httpfit.Middleware(f.guard, nil)(api(nil))
	tests := []struct {
		name, target, code string
	}{
		{"a tampered cursor", "/api/bookings?cursor=nonsense", "cursor_invalid"},
		{"a limit over the maximum", "/api/bookings?limit=5000", "limit_invalid"},
		{"a part without a cursor", "/api/bookings?part=3", "part_invalid"},
		{"a ctxfit parameter that is not URL-encoded", "/api/bookings?fields=%zz", "parameter_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is a "+tt.code+" problem with its type first", func(t *testing.T) {
			rec := do(h, "GET", tt.target)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
			assert.Equal(t, rec.Body.Len(), atoi(t, rec.Header().Get("Content-Length")))
			var doc map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
			assert.Equal(t, tt.code, doc["code"])
			assert.Equal(t, httpfit.ProblemType(tt.code), doc["type"])
			assert.True(t, strings.HasPrefix(rec.Body.String(), `{"type":"https://`), rec.Body.String())
		})
	}
}

func TestProblemTypeOfNoCodeIsEmpty(t *testing.T) {
	assert.Empty(t, httpfit.ProblemType(""))
	assert.Equal(t, "https://github.com/ctxfit/ctxfit/blob/main/docs/problems.md#cursor_stale", httpfit.ProblemType("cursor_stale"))
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
