package httpfit_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/shapes"
)

// TestEveryShapeKeepsBothPromisesOverHTTP serves generated responses of
// every shape through the middleware on a real listener, with random
// settings, filters of up to 20 KB and line ranges, and follows every
// cursor and part over HTTP: nothing over the hard cap, everything back
// byte for byte, bad parameters a 400 problem within the cap.
func TestEveryShapeKeepsBothPromisesOverHTTP(t *testing.T) {
	exact, err := budget.Exact("")
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(20, 20))
	sizes := shapes.Sizes(8000, 120000)
	for i := range len(sizes) * len(shapes.Shapes) {
		resp := shapes.Generate(r, i, sizes[i/len(shapes.Shapes)])
		cfg := ctxfit.Config{Secret: secret, Threshold: 500 + r.IntN(3000), ChunkTokens: 200 + r.IntN(2000),
			Mode:         []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay}[r.IntN(2)],
			ShapeTimeout: ctxfit.Duration(time.Hour)} // a test of what is sent, not of when
		cfg.HardCap = cfg.Threshold + ctxfit.MinHardCap + r.IntN(2000)
		t.Run(fmt.Sprintf("%s of %d bytes, %s mode", resp.Name, len(resp.Body), cfg.Mode), func(t *testing.T) {
			g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			mux := http.NewServeMux()
			mux.HandleFunc("GET /data", func(w http.ResponseWriter, _ *http.Request) {
				if resp.ContentType != "" {
					w.Header().Set("Content-Type", resp.ContentType)
				}
				_, _ = w.Write(resp.Body)
			})
			srv := httptest.NewServer(httpfit.Middleware(g, nil)(mux))
			t.Cleanup(srv.Close)
			filters := url.Values{"q": {strings.Repeat("f", r.IntN(20000))}, "bad": {"\xff"}}
			get := func(extra url.Values) (*http.Response, []byte) {
				q := url.Values{}
				for k, v := range filters {
					q[k] = v
				}
				for k, v := range extra {
					q[k] = v
				}
				res, err := http.Get(srv.URL + "/data?" + q.Encode())
				require.NoError(t, err)
				body, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				res.Body.Close()
				assert.LessOrEqual(t, exact.Count(string(body)), cfg.HardCap, "nothing over the hard cap: %d %.200s", res.StatusCode, body)
				return res, body
			}
			first, body := get(nil)
			require.Equal(t, http.StatusOK, first.StatusCode, "%s", body)
			if first.Header.Get("Ctxfit-Strategy") == "" {
				assert.Equal(t, resp.Body, body, "a pass-through is the response itself")
			} else {
				if first.Header.Get("Ctxfit-Strategy") == "summary" {
					var all *http.Response
					if all, body = get(url.Values{"fields": {"all"}}); all.Header.Get("Ctxfit-Strategy") == "" {
						assert.Equal(t, string(resp.Body), string(body), "fields=all is the whole object")
						return
					}
				}
				call := func(cursor string, part int64) ([]byte, error) {
					extra := url.Values{"cursor": {cursor}}
					if part != 0 {
						extra.Set("part", strconv.FormatInt(part, 10))
					}
					res, b := get(extra)
					if res.StatusCode != http.StatusOK {
						return nil, fmt.Errorf("status %d: %s", res.StatusCode, b)
					}
					return b, nil
				}
				got, _, err := follow.Rebuild(body, call)
				require.NoError(t, err)
				assert.Equal(t, string(resp.Body), string(got), "nothing lost, byte for byte, over HTTP")
			}
			for _, bad := range []url.Values{
				{"startLine": {"0"}}, {"startLine": {"9"}, "endLine": {"3"}}, {"limit": {"-1"}}, {"limit": {"100000"}},
				{"cursor": {"not-a-cursor"}}, {"part": {"12"}}, {"fields": {strings.Repeat("nope,", 2000)}},
			} {
				res, b := get(bad)
				if res.StatusCode != http.StatusOK {
					assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%v: %s", bad, b)
					assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
					assert.Less(t, len(b), 2000, "an error does not echo its input without bound")
				}
			}
		})
	}
}
