package httpfit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// maxProblem bounds a problem document: its detail holds at most 600 bytes
// of an error message (ctxfit.ProblemOf), which JSON may escape to six
// bytes each, beside a title, an expectation and a suggestion.
const maxProblem = 4096

// ctxfitParams are the parameters the middleware reads (the defaults).
var ctxfitParams = []string{"cursor", "limit", "fields", "startLine", "endLine", "part", "search", "searchPath", "searchContext", "jq", "format"}

// parsing is the middleware in front of four responses of different
// shapes, with a threshold low enough that all but one are shaped, and a
// cursor issued for each path. It records what the handler was given.
type parsing struct {
	h       http.Handler
	paths   []string
	bodies  map[string][]byte
	cursors map[string]string

	mu   sync.Mutex
	seen []string // the raw queries the handler got
}

func newParsing(tb testing.TB, mode ctxfit.Mode) *parsing {
	tb.Helper()
	list, err := json.Marshal(corpus.Items(60))
	require.NoError(tb, err)
	p := &parsing{
		paths: []string{"/list", "/object", "/text", "/small"},
		bodies: map[string][]byte{
			"/list": list, "/object": bookingJSON, "/text": []byte(corpus.Log(300)), "/small": []byte(`{"id":1}`),
		},
		cursors: map[string]string{},
	}
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret, Threshold: 500, HardCap: 500 + ctxfit.MinHardCap,
		ChunkTokens: 300, Mode: mode, ShapeTimeout: ctxfit.Duration(time.Hour)}})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = g.Close() })
	mux := http.NewServeMux()
	for path, b := range p.bodies {
		ct := "application/json"
		if path == "/text" {
			ct = "text/plain; charset=utf-8"
		}
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			p.seen = append(p.seen, r.URL.RawQuery)
			p.mu.Unlock()
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write(b)
		})
	}
	p.h = httpfit.Middleware(g, nil)(mux)
	for _, path := range p.paths[:3] {
		rec := p.serve(path, "")
		var v struct {
			NextCursor string `json:"nextCursor"`
		}
		require.NoError(tb, json.Unmarshal(rec.Body.Bytes(), &v), path)
		if v.NextCursor == "" { // a summary: its fields continue in a page of members
			continue
		}
		p.cursors[path] = v.NextCursor
	}
	require.NotEmpty(tb, p.cursors["/list"])
	require.NotEmpty(tb, p.cursors["/text"])
	return p
}

// serve sends GET path?rawQuery, the query exactly as given.
func (p *parsing) serve(path, rawQuery string) *httptest.ResponseRecorder {
	p.mu.Lock()
	p.seen = p.seen[:0]
	p.mu.Unlock()
	req := httptest.NewRequest("GET", path, nil)
	req.URL.RawQuery = rawQuery
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, req)
	return rec
}

// check asserts that rec is the handler's response, shaped or not, or a
// 400 problem of bounded size, and that the handler, if it ran, got none
// of ctxfit's parameters.
func (p *parsing) check(t *testing.T, path string, rec *httptest.ResponseRecorder) {
	t.Helper()
	b := rec.Body.Bytes()
	switch rec.Code {
	case http.StatusOK:
		if cl := rec.Header().Get("Content-Length"); cl != "" {
			assert.Equal(t, len(b), atoi(t, cl))
		}
		if rec.Header().Get("Ctxfit-Strategy") == "" {
			assert.Equal(t, string(p.bodies[path]), string(b), "unshaped is the handler's response itself")
		} else {
			assert.True(t, json.Valid(b), "a shaped response is JSON")
		}
	case http.StatusBadRequest:
		assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
		assert.LessOrEqual(t, len(b), maxProblem, "a problem echoes a short prefix of its input at most")
		var prob ctxfit.Problem
		require.NoError(t, json.Unmarshal(b, &prob), "%.300s", b)
		assert.Equal(t, http.StatusBadRequest, prob.Status)
		assert.NotEmpty(t, prob.Code)
		assert.NotEmpty(t, prob.Suggestion)
		if prob.Parameter != "" {
			assert.Contains(t, ctxfitParams, prob.Parameter, "only ctxfit's own parameters are bad input")
		}
	default:
		t.Fatalf("status %d: %.300s", rec.Code, b)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, raw := range p.seen {
		for seg := range strings.SplitSeq(raw, "&") {
			k, _, _ := strings.Cut(seg, "=")
			if key, err := url.QueryUnescape(k); err == nil {
				assert.NotContains(t, ctxfitParams, key, "the handler never sees ctxfit's parameters")
			}
		}
	}
}

// FuzzTheMiddlewareAnswersAnyQuery sends arbitrary query strings, "$CURSOR"
// standing for a cursor issued for the path (or another path's, by the
// cursorOf byte), in store or replay mode: every answer is the handler's
// response or a 400 problem of bounded size, never a 500, never a panic.
func FuzzTheMiddlewareAnswersAnyQuery(f *testing.F) {
	seeds := []struct {
		path, cursorOf uint8
		query          string
	}{
		{0, 0, ""},
		{0, 0, "cursor=$CURSOR"},
		{0, 0, "cursor=$CURSOR&limit=5&q=%zz"},
		{0, 2, "cursor=$CURSOR"},
		{0, 0, "limit=0&limit=9&order=a&sort=b&x=1&x=2"},
		{0, 0, "limit=-1"},
		{0, 0, "limit=99999999999999999999"},
		{0, 0, "cursor=%zz&q=1"},
		{0, 0, "q=%&%zz=%&=&&&"},
		{0, 0, "cursor=$CURSOR&part=1"},
		{0, 0, "part=0&cursor=$CURSOR"},
		{0, 0, "part=9223372036854775807&cursor=$CURSOR"},
		{1, 0, "fields=all"},
		{1, 0, "fields=guest.name,priceBreakdown"},
		{1, 0, "fields=..,a..b,.,%2C%2C"},
		{1, 0, "fields=nosuch&fields=all"},
		{1, 0, "fields=" + strings.Repeat("nope,", 1000)},
		{2, 0, "startLine=3&endLine=5"},
		{2, 0, "startLine=5&endLine=3"},
		{2, 0, "startLine=0"},
		{2, 0, "endLine=999999"},
		{2, 0, "startLine=1&endLine=-1"},
		{2, 2, "cursor=$CURSOR&startLine=2"},
		{2, 2, "cursor=$CURSOR&limit=3"},
		{3, 0, "fields=all&limit=1&startLine=1"},
		{3, 0, "q=%ff&q=%fe&order=%80"},
		{3, 0, "cursor=" + strings.Repeat("A", 3000)},
	}
	for i, s := range seeds {
		f.Add(i%3 == 0, s.path, s.cursorOf, s.query)
	}
	modes := map[bool]*parsing{false: newParsing(f, ctxfit.ModeStore), true: newParsing(f, ctxfit.ModeReplay)}
	f.Fuzz(func(t *testing.T, replay bool, pathIndex, cursorOf uint8, query string) {
		p := modes[replay]
		path := p.paths[int(pathIndex)%len(p.paths)]
		c := p.cursors[p.paths[int(cursorOf)%len(p.paths)]]
		query = strings.ReplaceAll(query, "$CURSOR", url.QueryEscape(c))
		p.check(t, path, p.serve(path, query))
	})
}

// FuzzTheMiddlewareReadsItsParameters sends well-encoded values of every
// ctxfit parameter, with or without a cursor issued for the path: the same
// outcomes as any query.
func FuzzTheMiddlewareReadsItsParameters(f *testing.F) {
	type seed struct {
		path                                    uint8
		withCursor                              bool
		fields, startLine, endLine, limit, part string
	}
	for _, s := range []seed{
		{0, false, "", "", "", "", ""},
		{0, false, "", "", "", "10", ""},
		{0, true, "", "", "", "3", ""},
		{0, false, "", "", "", " 1", ""},
		{0, false, "", "", "", "+1", ""},
		{0, false, "", "", "", "0x10", ""},
		{0, true, "", "", "", "", "1"},
		{0, true, "", "", "", "", "-5"},
		{0, false, "id,status", "", "", "", ""},
		{1, false, "all", "", "", "", ""},
		{1, false, "guest.address.city", "", "", "", ""},
		{1, false, "guest..name", "", "", "", ""},
		{1, false, "\xff\xfe", "", "", "", ""},
		{1, false, strings.Repeat("x", 5000), "", "", "", ""},
		{1, false, strings.Repeat("a.", 2000), "", "", "", ""},
		{2, false, "", "1", "1", "", ""},
		{2, false, "", "300", "", "", ""},
		{2, false, "", "301", "", "", ""},
		{2, false, "", "", "1e3", "", ""},
		{2, false, "", "2147483648", "4294967296", "", ""},
		{2, true, "", "10", "20", "", ""},
		{2, true, "all", "", "", "", "2"},
		{3, false, "all", "1", "1", "1", "1"},
	} {
		f.Add(s.path, s.withCursor, s.fields, s.startLine, s.endLine, s.limit, s.part)
	}
	p := newParsing(f, ctxfit.ModeStore)
	f.Fuzz(func(t *testing.T, pathIndex uint8, withCursor bool, fields, startLine, endLine, limit, part string) {
		path := p.paths[int(pathIndex)%len(p.paths)]
		q := url.Values{}
		for name, v := range map[string]string{"fields": fields, "startLine": startLine, "endLine": endLine, "limit": limit, "part": part} {
			if v != "" {
				q.Set(name, v)
			}
		}
		if withCursor && p.cursors[path] != "" {
			q.Set("cursor", p.cursors[path])
		}
		p.check(t, path, p.serve(path, q.Encode()))
	})
}

func TestAHugeParameterGivesASmallProblem(t *testing.T) {
	p := newParsing(t, ctxfit.ModeStore)
	huge := strings.Repeat("nope,", 1<<20/5) // 1 MB
	tests := []struct {
		name, path, query string
		code              string
	}{
		{"a 1 MB fields value on an object", "/object", "fields=" + huge, "fields_invalid"},
		{"a 1 MB fields value of one name", "/object", "fields=" + strings.Repeat("n", 1<<20), "fields_invalid"},
		{"a 1 MB dotted path", "/object", "fields=" + strings.Repeat("a.", 1<<19) + "b", "fields_invalid"},
		{"a 1 MB limit", "/list", "limit=" + strings.Repeat("9", 1<<20), "limit_invalid"},
		{"a 1 MB start line", "/text", "startLine=" + strings.Repeat("x", 1<<20), "line_range_invalid"},
		{"a 1 MB end line", "/text", "endLine=" + strings.Repeat("7", 1<<20), "line_range_invalid"},
		{"a 1 MB part", "/list", "part=" + strings.Repeat("1", 1<<20) + "&cursor=" + url.QueryEscape(p.cursors["/list"]), "part_invalid"},
		{"a 1 MB cursor", "/list", "cursor=" + strings.Repeat("A", 1<<20), "cursor_invalid"},
		{"a 1 MB cursor that is not URL-encoded", "/list", "cursor=" + strings.Repeat("%", 1<<20), "parameter_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is a 400 "+tt.code+" of a few hundred bytes", func(t *testing.T) {
			rec := p.serve(tt.path, tt.query)
			p.check(t, tt.path, rec)
			require.Equal(t, http.StatusBadRequest, rec.Code, "%.300s", rec.Body.String())
			var prob ctxfit.Problem
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &prob))
			assert.Equal(t, tt.code, prob.Code)
			assert.Less(t, rec.Body.Len(), 2048)
		})
	}
}
