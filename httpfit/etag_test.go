package httpfit_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// versioned is an API whose list is version 1 of the data or, once
// switched, version 2 (the same list with one item changed at its end),
// and which also serves a log and a wide object.
type versioned struct {
	v2 atomic.Bool
}

func (v *versioned) handler() http.Handler {
	changed := corpus.Items(500)
	changed[499].Notes = "changed"
	v2JSON, err := json.Marshal(changed)
	if err != nil {
		panic(err)
	}
	wide := map[string]string{}
	for i := range 3000 {
		wide[strings.Repeat("k", i%7+1)+string(rune('a'+i%26))+strings.Repeat("x", i/26)] = "value"
	}
	wideJSON, err := json.Marshal(wide)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/bookings", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"handler"`)
		if v.v2.Load() {
			_, _ = w.Write(v2JSON)
			return
		}
		_, _ = w.Write(itemsJSON)
	})
	mux.Handle("GET /api/log", body([]byte(logText), "text/plain; charset=utf-8", nil))
	mux.Handle("GET /api/wide", body(wideJSON, "application/json", nil))
	return mux
}

// fetch makes a request with the given header lines ("Name: value").
func fetch(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for _, line := range header {
		name, value, _ := strings.Cut(line, ": ")
		req.Header.Add(name, value)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestAPagesETagIsTheSameForTheSamePageOfTheSameDataAndDiffersOtherwise(t *testing.T) {
	// Each case makes two responses, a and b, from a fresh server whose
	// clock starts at the beginning of a half cursor lifetime (5 minutes).
	type env struct {
		f      *fixture
		v      *versioned
		get    func(target string, header ...string) *httptest.ResponseRecorder
		cursor string // a cursor case a leaves for case b
	}
	tests := []struct {
		name string
		same bool
		a, b func(t *testing.T, e *env) *httptest.ResponseRecorder
	}{
		{"the first page asked twice at once", true,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings") },
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings") }},
		{"the first page asked again a few minutes later, with fresh cursors", true,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings") },
			func(_ *testing.T, e *env) *httptest.ResponseRecorder {
				e.f.clock.Advance(4*time.Minute + 59*time.Second)
				return e.get("/api/bookings")
			}},
		{"the first page asked by another client with the same parameters", true,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings?status=x&limit=20") },
			func(_ *testing.T, e *env) *httptest.ResponseRecorder {
				return e.get("/api/bookings?status=x&limit=20", "User-Agent: another")
			}},
		{"the second page asked twice with its cursor, a second apart", true,
			func(t *testing.T, e *env) *httptest.ResponseRecorder {
				e.cursor = nextCursor(t, e.get("/api/bookings"))
				return e.get(target("/api/bookings", e.cursor))
			},
			func(t *testing.T, e *env) *httptest.ResponseRecorder {
				before := e.get(target("/api/bookings", e.cursor))
				e.f.clock.Advance(time.Second)
				b := e.get(target("/api/bookings", e.cursor))
				assert.NotEqual(t, nextCursor(t, before), nextCursor(t, b),
					"not a digest of the body: the cursors in it differ by the second they were issued")
				return b
			}},
		{"the first page and the second", false,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings") },
			func(t *testing.T, e *env) *httptest.ResponseRecorder {
				return e.get(target("/api/bookings", nextCursor(t, e.get("/api/bookings"))))
			}},
		{"the first chunk of a log and the second", false,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/log") },
			func(t *testing.T, e *env) *httptest.ResponseRecorder {
				return e.get(target("/api/log", nextCursor(t, e.get("/api/log"))))
			}},
		{"the first members of a wide object and the next", false,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/wide") },
			func(t *testing.T, e *env) *httptest.ResponseRecorder {
				return e.get(target("/api/wide", nextCursor(t, e.get("/api/wide"))))
			}},
		{"the first page of data that changed after it, where the page did not", false,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings") },
			func(_ *testing.T, e *env) *httptest.ResponseRecorder {
				e.v.v2.Store(true)
				return e.get("/api/bookings")
			}},
		{"the first page with another limit", false,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings?limit=20") },
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings?limit=21") }},
		{"the first page with other filters", false,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings?status=a") },
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings?status=b") }},
		{"the first page for another subject, whose cursors it cannot use", false,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder {
				return e.get("/api/bookings", "Authorization: Bearer alice")
			},
			func(_ *testing.T, e *env) *httptest.ResponseRecorder {
				return e.get("/api/bookings", "Authorization: Bearer bob")
			}},
		{"the first page half a cursor lifetime later", false,
			func(_ *testing.T, e *env) *httptest.ResponseRecorder { return e.get("/api/bookings") },
			func(_ *testing.T, e *env) *httptest.ResponseRecorder {
				e.f.clock.Advance(5 * time.Minute)
				return e.get("/api/bookings")
			}},
	}
	for _, tt := range tests {
		verb := "differ"
		if tt.same {
			verb = "are the same"
		}
		t.Run("the tags of "+tt.name+" "+verb, func(t *testing.T) {
			f := newFixture(t, ctxfit.Options{})
			require.Zero(t, f.clock.Now().Unix()%300, "the clock starts a half cursor lifetime")
			v := &versioned{}
			h := httpfit.Middleware(f.guard, &httpfit.Options{Now: f.clock.Now})(v.handler())
			e := &env{f: f, v: v, get: func(target string, header ...string) *httptest.ResponseRecorder {
				return fetch(h, "GET", target, header...)
			}}
			a, b := tt.a(t, e), tt.b(t, e)
			for _, rec := range []*httptest.ResponseRecorder{a, b} {
				require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
				require.NotEmpty(t, rec.Header().Get("Ctxfit-Strategy"), "shaped")
				assert.Regexp(t, `^W/"[A-Za-z0-9_-]{22}"$`, rec.Header().Get("ETag"), "a weak tag of 128 bits")
			}
			if tt.same {
				assert.Equal(t, a.Header().Get("ETag"), b.Header().Get("ETag"))
			} else {
				assert.NotEqual(t, a.Header().Get("ETag"), b.Header().Get("ETag"))
			}
		})
	}
}

// getWith is a GET with If-None-Match lines over a real listener.
func getWith(t *testing.T, url string, ifNoneMatch ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	require.NoError(t, err)
	for _, v := range ifNoneMatch {
		req.Header.Add("If-None-Match", v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, b
}

func TestAMatchingIfNoneMatchGets304WithNoBody(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	v := &versioned{}
	srv := httptest.NewServer(httpfit.Middleware(f.guard, &httpfit.Options{Now: f.clock.Now})(v.handler()))
	t.Cleanup(srv.Close)
	url := srv.URL + "/api/bookings?status=x"
	first, body := getWith(t, url)
	require.Equal(t, http.StatusOK, first.StatusCode)
	tag := first.Header.Get("ETag")
	require.NotEmpty(t, tag)
	strong := strings.TrimPrefix(tag, "W/")

	tests := []struct {
		name        string
		ifNoneMatch []string
		want        int
	}{
		{"its tag", []string{tag}, http.StatusNotModified},
		{"its tag without W/ (the weak comparison)", []string{strong}, http.StatusNotModified},
		{"a list holding its tag", []string{`"other", ` + tag + `, W/"more"`}, http.StatusNotModified},
		{"its tag on a second field line", []string{`"other"`, tag}, http.StatusNotModified},
		{"a list with empty elements", []string{` , ,` + tag + `,`}, http.StatusNotModified},
		{"*", []string{"*"}, http.StatusNotModified},
		{"another tag", []string{`W/"other"`}, http.StatusOK},
		{"the handler's own tag, which no longer describes the body", []string{`"handler"`}, http.StatusOK},
		{"a malformed list, ignored", []string{tag + ` junk`}, http.StatusOK},
		{"its tag without quotes, ignored", []string{strings.Trim(strong, `"`)}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run("If-None-Match with "+tt.name+" gets "+http.StatusText(tt.want), func(t *testing.T) {
			res, b := getWith(t, url, tt.ifNoneMatch...)
			require.Equal(t, tt.want, res.StatusCode, "%s", b)
			assert.Equal(t, tag, res.Header.Get("ETag"))
			assert.Equal(t, "pagination", res.Header.Get("Ctxfit-Strategy"))
			link := nextOf(t, res)
			assert.Contains(t, link, "/api/bookings?status=x&cursor=", "the next link, with a fresh cursor")
			if tt.want == http.StatusNotModified {
				assert.Empty(t, b, "no body")
				assert.Empty(t, res.Header.Get("Content-Type"))
				assert.Empty(t, res.Header.Values("Content-Length"))
				// The link of a 304 leads on as the cached body's would.
				next, nb := getWith(t, link)
				require.Equal(t, http.StatusOK, next.StatusCode, "%s", nb)
			} else {
				assert.Equal(t, len(body), len(b))
			}
		})
	}

	t.Run("a continuation page answers its own tag with 304", func(t *testing.T) {
		link := nextOf(t, first)
		page2, _ := getWith(t, link)
		require.Equal(t, http.StatusOK, page2.StatusCode)
		tag2 := page2.Header.Get("ETag")
		require.NotEmpty(t, tag2)
		assert.NotEqual(t, tag, tag2)
		again, b := getWith(t, link, tag2)
		assert.Equal(t, http.StatusNotModified, again.StatusCode)
		assert.Empty(t, b)
		again, _ = getWith(t, link, tag)
		assert.Equal(t, http.StatusOK, again.StatusCode, "the first page's tag is not the second's")
	})
	t.Run("after the data changed, the old tag gets the new page", func(t *testing.T) {
		v.v2.Store(true)
		t.Cleanup(func() { v.v2.Store(false) })
		res, b := getWith(t, url, tag)
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.NotEmpty(t, b)
		assert.NotEqual(t, tag, res.Header.Get("ETag"))
	})
	t.Run("half a cursor lifetime later, the old tag gets a page with fresh cursors", func(t *testing.T) {
		f.clock.Advance(5 * time.Minute)
		res, b := getWith(t, url, tag)
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.NotEmpty(t, b)
	})
}

func TestETagsAreLeftToTheHandlerWhereCtxfitDidNotMakeTheBody(t *testing.T) {
	f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{Endpoints: []ctxfit.Endpoint{
		{Match: "GET /api/bookings/{id}", Threshold: 2000},
	}}})
	var ran atomic.Int32
	small := []byte(`{"id":1}`)
	mux := api(&ran)
	mux.HandleFunc("GET /small", func(w http.ResponseWriter, r *http.Request) {
		ran.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"small-v1"`)
		if r.Header.Get("If-None-Match") == `"small-v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write(small)
	})
	h := httpfit.Middleware(f.guard, &httpfit.Options{Now: f.clock.Now})(mux)

	t.Run("a response under the threshold keeps the handler's tag", func(t *testing.T) {
		rec := fetch(h, "GET", "/small")
		assert.Equal(t, small, rec.Body.Bytes())
		assert.Equal(t, `"small-v1"`, rec.Header().Get("ETag"))
	})
	t.Run("and the handler's own 304 passes through", func(t *testing.T) {
		rec := fetch(h, "GET", "/small", `If-None-Match: "small-v1"`)
		assert.Equal(t, http.StatusNotModified, rec.Code)
		assert.Empty(t, rec.Body.Bytes())
	})
	t.Run("and If-None-Match: * is the handler's to answer", func(t *testing.T) {
		rec := fetch(h, "GET", "/small", `If-None-Match: *`)
		assert.Equal(t, http.StatusOK, rec.Code, "this handler ignores it")
		assert.Equal(t, small, rec.Body.Bytes())
	})
	t.Run("fields=all, the handler's body as it wrote it, keeps the handler's tag", func(t *testing.T) {
		rec := fetch(h, "GET", "/api/bookings/BK1?fields=all")
		assert.Equal(t, bookingJSON, rec.Body.Bytes())
		assert.Equal(t, `"v1"`, rec.Header().Get("ETag"))
	})
	t.Run("a shaped response to a POST has no tag", func(t *testing.T) {
		post := http.NewServeMux()
		post.Handle("POST /search", body(itemsJSON, "application/json", nil))
		rec := fetch(httpfit.Middleware(f.guard, nil)(post), "POST", "/search", "If-None-Match: *")
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, "pagination", rec.Header().Get("Ctxfit-Strategy"))
		assert.Empty(t, rec.Header().Get("ETag"))
	})
	t.Run("a HEAD is the handler's", func(t *testing.T) {
		rec := fetch(h, "HEAD", "/api/bookings")
		assert.Equal(t, `"v1"`, rec.Header().Get("ETag"))
	})
}

func TestAPageFromTheResponseCacheHasTheTagOfThePageFromTheHandler(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	c := cache.New(&cache.Options{Now: f.clock.Now})
	t.Cleanup(func() { _ = c.Close() })
	var ran atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/bookings", func(w http.ResponseWriter, _ *http.Request) {
		ran.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=600")
		_, _ = w.Write(itemsJSON)
	})
	h := httpfit.Middleware(f.guard, &httpfit.Options{Cache: c, Now: f.clock.Now})(mux)
	miss := fetch(h, "GET", "/api/bookings")
	hit := fetch(h, "GET", "/api/bookings")
	require.Equal(t, int32(1), ran.Load(), "the second came from the cache")
	require.NotEmpty(t, miss.Header().Get("ETag"))
	assert.Equal(t, miss.Header().Get("ETag"), hit.Header().Get("ETag"))
	assert.Equal(t, http.StatusNotModified, fetch(h, "GET", "/api/bookings", "If-None-Match: "+miss.Header().Get("ETag")).Code)
}
