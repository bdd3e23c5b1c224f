package httpfit_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
)

func TestAnEndpointsOutputFormatIsAppliedAndItsCursorGivesTheOriginal(t *testing.T) {
	search, err := json.Marshal(map[string]any{"query": "all", "total": 60, "results": items[:60]})
	require.NoError(t, err)
	f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{Endpoints: []ctxfit.Endpoint{{
		Match: "GET /api/search",
		OutputFormat: &ctxfit.OutputFormat{
			FormatID:      "search",
			Template:      "{{.total}} bookings for {{.query}}:\n{{range .results}}- {{.id}} {{.status}} {{.guestName}}\n{{end}}",
			ExtractFields: []string{"query", "total", "results.id", "results.status", "results.guestName"},
		},
	}}}})
	mux := http.NewServeMux()
	mux.Handle("GET /api/search", body(search, "application/json", nil))
	h := httpfit.Middleware(f.guard, nil)(mux)

	rec := do(h, "GET", "/api/search")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "format", rec.Header().Get("Ctxfit-Strategy"))
	assert.Equal(t, rec.Body.Len(), atoi(t, rec.Header().Get("Content-Length")))
	assert.Less(t, rec.Body.Len(), len(search)/2, "the compact rendering is smaller")
	var got struct {
		Text string `json:"text"`
		Meta struct {
			Format          string `json:"format"`
			DetailsCursor   string `json:"detailsCursor"`
			EstimatedTokens int    `json:"estimatedTokens"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, "search", got.Meta.Format)
	assert.Regexp(t, `^60 bookings for all:\n- BK\d+ \w+ \w+ \w+\n`, got.Text)
	assert.LessOrEqual(t, got.Meta.EstimatedTokens, f.guard.Config().HardCap)
	require.NotEmpty(t, got.Meta.DetailsCursor)

	full := do(h, "GET", "/api/search?fields=all&cursor="+url.QueryEscape(got.Meta.DetailsCursor))
	require.Equal(t, http.StatusOK, full.Code, full.Body.String())
	assert.Equal(t, string(search), full.Body.String(), "the cursor with fields=all gives the original, byte for byte")
}
