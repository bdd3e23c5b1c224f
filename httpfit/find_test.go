package httpfit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
)

// The find-don't-page parameters over a real listener: search finds
// every matching line of the log, with its number, following Link headers
// alone; jq answers a question about the list in one request.
func TestSearchAndJqAnswerWhatPagingNeedsManyRequestsFor(t *testing.T) {
	f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{Threshold: 1000, HardCap: 2000}})
	srv := httptest.NewServer(httpfit.Middleware(f.guard, nil)(api(nil)))
	t.Cleanup(srv.Close)

	re := regexp.MustCompile(`(?i)error`)
	var want []int
	for i, line := range strings.Split(strings.TrimSuffix(logText, "\n"), "\n") {
		if re.MatchString(line) {
			want = append(want, i+1)
		}
	}
	require.NotEmpty(t, want)

	var got []int
	next := srv.URL + "/api/log?search=" + url.QueryEscape("(?i)error") + "&searchContext=1"
	requests := 0
	for next != "" {
		resp, err := srv.Client().Get(next)
		require.NoError(t, err)
		var page struct {
			Matches []struct {
				Line int    `json:"line"`
				Text string `json:"text"`
			} `json:"matches"`
			Meta struct{ TotalMatches int } `json:"meta"`
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
		_ = resp.Body.Close()
		assert.Equal(t, len(want), page.Meta.TotalMatches)
		for _, m := range page.Matches {
			got = append(got, m.Line)
			assert.Regexp(t, re, m.Text)
		}
		next = nextLink(resp.Header.Get("Link"))
		requests++
	}
	assert.Equal(t, want, got, "every matching line once, in order, by the Link headers alone")

	resp, err := srv.Client().Get(srv.URL + "/api/bookings?jq=" + url.QueryEscape(`map(select(.id|tostring|endswith("7")))|length`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var answer []int
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer))
	require.Len(t, answer, 1)
	assert.Positive(t, answer[0])

	bad, err := srv.Client().Get(srv.URL + "/api/bookings?jq=" + url.QueryEscape(".["))
	require.NoError(t, err)
	defer bad.Body.Close()
	assert.Equal(t, http.StatusBadRequest, bad.StatusCode)
}

// nextLink returns the target of a Link header's rel="next", or "".
func nextLink(h string) string {
	for _, l := range strings.Split(h, ",") {
		if strings.Contains(l, `rel="next"`) {
			return strings.Trim(strings.TrimSpace(strings.Split(l, ";")[0]), "<>")
		}
	}
	return ""
}
