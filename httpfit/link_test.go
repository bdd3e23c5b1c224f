package httpfit_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/shapes"
)

// linkNext matches a Link field value with one rel="next" link.
var linkNext = regexp.MustCompile(`^<([^>]*)>; rel="next"$`)

// nextOf returns the URL of the rel="next" Link of res, "" when it has
// none.
func nextOf(t *testing.T, res *http.Response) string {
	t.Helper()
	links := res.Header.Values("Link")
	if len(links) == 0 {
		return ""
	}
	require.Len(t, links, 1, "one Link field")
	m := linkNext.FindStringSubmatch(links[0])
	require.NotNil(t, m, "a Link field of RFC 8288's form: %q", links[0])
	return m[1]
}

// withoutCursor is the raw query q without its cursor parameter.
func withoutCursor(q string) string {
	var kept []string
	for seg := range strings.SplitSeq(q, "&") {
		if !strings.HasPrefix(seg, "cursor=") {
			kept = append(kept, seg)
		}
	}
	return strings.Join(kept, "&")
}

// TestFollowingLinkHeadersAloneWalksEveryPageAndRebuildsTheOriginal serves
// every shape of response through the middleware on a real listener, and
// rebuilds each original by following the Link headers: a next page,
// chunk or member page is only ever requested at the URL of the previous
// response's rel="next" link (the test never builds one); only a held-back
// part, which is no next page, is opened with cursor and part.
func TestFollowingLinkHeadersAloneWalksEveryPageAndRebuildsTheOriginal(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 8288))
	// The API's own parameters, byte for byte as a client may write them.
	const query = "status=confirmed&q=a%2Bb+c&empty=&tag=x&tag=y&z=%E2%9C%93"
	for i, s := range shapes.Shapes {
		resp := shapes.Generate(r, i, 60000)
		for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
			t.Run(fmt.Sprintf("%s, %s mode", s.Name, mode), func(t *testing.T) {
				f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{Mode: mode, Threshold: 1000, HardCap: 2000, ChunkTokens: 600}})
				mux := http.NewServeMux()
				mux.HandleFunc("GET /v1/data", func(w http.ResponseWriter, _ *http.Request) {
					if resp.ContentType != "" {
						w.Header().Set("Content-Type", resp.ContentType)
					}
					_, _ = w.Write(resp.Body)
				})
				srv := httptest.NewServer(httpfit.Middleware(f.guard, nil)(mux))
				t.Cleanup(srv.Close)

				links := map[string]string{} // a response's nextCursor -> its Link URL
				get := func(u string) []byte {
					t.Helper()
					res, err := http.Get(u)
					require.NoError(t, err)
					defer res.Body.Close()
					b, err := io.ReadAll(res.Body)
					require.NoError(t, err)
					require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", u, b)
					var env struct {
						NextCursor string `json:"nextCursor"`
					}
					_ = json.Unmarshal(b, &env)
					link := nextOf(t, res)
					if env.NextCursor == "" || res.Header.Get("Ctxfit-Strategy") == "" {
						assert.Empty(t, link, "a Link only where there is a next cursor")
						return b
					}
					require.NotEmpty(t, link, "a response with a nextCursor has a Link: %.200s", b)
					lu, err := url.Parse(link)
					require.NoError(t, err)
					assert.Equal(t, srv.URL, lu.Scheme+"://"+lu.Host, "the server's own scheme and host")
					assert.Equal(t, "/v1/data", lu.EscapedPath())
					assert.Equal(t, env.NextCursor, lu.Query().Get("cursor"), "the Link's cursor is the body's")
					assert.Equal(t, query, withoutCursor(lu.RawQuery), "the other parameters byte for byte")
					links[env.NextCursor] = link
					return b
				}

				first := get(srv.URL + "/v1/data?" + query)
				if !strings.Contains(string(first), `"nextCursor"`) {
					// The one shape not paged: a record, summarized (no next).
					assert.True(t, strings.HasPrefix(string(first), `{"summary":`), "%.200s", first)
					return
				}
				call := func(cursor string, part int64) ([]byte, error) {
					if part != 0 {
						// A held-back value: opened by its part number.
						return get(srv.URL + "/v1/data?" + query + "&cursor=" + url.QueryEscape(cursor) + "&part=" + strconv.FormatInt(part, 10)), nil
					}
					link, ok := links[cursor]
					if !ok {
						return nil, fmt.Errorf("no response linked to cursor %.20s…", cursor)
					}
					return get(link), nil
				}
				got, stats, err := follow.Rebuild(first, call)
				require.NoError(t, err)
				assert.Equal(t, string(resp.Body), string(got), "nothing lost, byte for byte, following Link headers")
				assert.Greater(t, stats.Responses, 1)
				assert.NotEmpty(t, links, "some response was linked")
			})
		}
	}
}

func TestALinkIsSentForGETOnlyAndKeepsTheHandlersOwn(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	mux := http.NewServeMux()
	mux.HandleFunc("/api/bookings", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Link", `</api/bookings?page=2>; rel="next"`)
		_, _ = w.Write(itemsJSON)
	})
	h := httpfit.Middleware(f.guard, nil)(mux)

	rec := do(h, "GET", "http://example.com/api/bookings?limit=10")
	require.Equal(t, http.StatusOK, rec.Code)
	p := decodePage(t, rec)
	require.NotEmpty(t, p.NextCursor)
	assert.Equal(t, []string{
		`</api/bookings?page=2>; rel="next"`,
		`<http://example.com/api/bookings?limit=10&cursor=` + p.NextCursor + `>; rel="next"`,
	}, rec.Header().Values("Link"), "the handler's Link fields are kept; ctxfit's follows them")

	rec = do(h, "POST", "http://example.com/api/bookings?limit=10")
	require.Equal(t, http.StatusOK, rec.Code)
	require.NotEmpty(t, decodePage(t, rec).NextCursor)
	assert.Equal(t, []string{`</api/bookings?page=2>; rel="next"`}, rec.Header().Values("Link"),
		"no link for a POST: following it would be a GET, which the cursor is not bound to")

	last := decodePage(t, do(h, "GET", "http://example.com/api/bookings?limit=200"))
	for last.NextCursor != "" {
		rec = do(h, "GET", target("http://example.com/api/bookings?limit=200", last.NextCursor))
		last = decodePage(t, rec)
	}
	assert.Empty(t, rec.Header().Values("Link"), "the last page, from the store, has no next link")
}

func TestBaseURLGivesTheLinksSchemeAndHost(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	// Behind a proxy that serves this API at https://example.com/bookings-api/.
	h := httpfit.Middleware(f.guard, &httpfit.Options{BaseURL: func(r *http.Request) string {
		return r.Header.Get("X-Forwarded-Proto") + "://" + r.Header.Get("X-Forwarded-Host") + "/bookings-api"
	}})(api(nil))
	req := httptest.NewRequest("GET", "http://10.0.0.7:8080/api/bookings?status=x", nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("X-Forwarded-Host", "example.com")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	p := decodePage(t, rec)
	assert.Equal(t, `<https://example.com/bookings-api/api/bookings?status=x&cursor=`+p.NextCursor+`>; rel="next"`, rec.Header().Get("Link"))
}

func TestAQueryTheMiddlewareBindsAsSentCanBeFollowed(t *testing.T) {
	// A parameter of the handler's that is not URL-encoded correctly binds
	// cursors to the query's raw bytes; empty segments are no part of them.
	f := newFixture(t, ctxfit.Options{})
	h := httpfit.Middleware(f.guard, nil)(api(nil))
	for _, query := range []string{"q=%zz", "q=%zz&&b", "&q=%zz&", "a=1&&q=%zz&limit=20&"} {
		first := do(h, "GET", "http://example.com/api/bookings?"+query)
		cursor := nextCursor(t, first)
		tests := []struct{ name, target string }{
			{"the query with &cursor= appended", "http://example.com/api/bookings?" + query + "&cursor=" + cursor},
			{"the Link", strings.TrimSuffix(strings.TrimPrefix(first.Header().Get("Link"), "<"), `>; rel="next"`)},
		}
		for _, tt := range tests {
			t.Run(query+", following "+tt.name, func(t *testing.T) {
				require.NotEmpty(t, tt.target)
				rec := do(h, "GET", tt.target)
				assert.Equal(t, http.StatusOK, rec.Code, "%s: %s", tt.target, rec.Body.String())
			})
		}
	}
}
