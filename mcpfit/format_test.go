package mcpfit_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

func TestAToolsOutputFormatIsAppliedAndTheDetailsToolGivesTheOriginal(t *testing.T) {
	cfg := ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "search_bookings", OutputFormat: &ctxfit.OutputFormat{
		Template:      "{{.total}} bookings for {{printf \"%q\" .query}}:\n{{range .results}}- {{.id}} {{.status}} {{.guestName}}, {{.checkInDate}}\n{{end}}",
		ExtractFields: []string{"query", "total", "results.id", "results.status", "results.guestName", "results.checkInDate"},
		Transforms:    map[string]string{"results.guestName": "truncateText:12"},
	}}}}
	cs, raw := guarded(t, cfg, nil)
	args := map[string]any{"query": "", "limit": 60}
	res := mcpfittest.Call(t, cs, "search_bookings", args)
	require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
	assert.Equal(t, "format", res.Meta[mcpcore.MetaStrategy])
	assert.LessOrEqual(t, mcpfittest.Tokens(t, res), 12000, "within the hard cap")
	original := bodyOf(t, mcpfittest.Call(t, raw, "search_bookings", args))
	assert.Less(t, mcpfittest.Tokens(t, res), mcpfittest.Count(original), "smaller than the original")

	texts := mcpfittest.Texts(t, res)
	var body struct {
		Text string `json:"text"`
		Meta struct {
			Format        string `json:"format"`
			DetailsCursor string `json:"detailsCursor"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal([]byte(texts[0]), &body))
	assert.Regexp(t, `^\d+ bookings for "":\n- BK\d+ \w+ `, body.Text, "the tool's format rendered the result")
	assert.Equal(t, "search_bookings", body.Meta.Format, "the format's ID defaults to the tool name")
	details := mcpfittest.DetailsCursor(res)
	require.NotEmpty(t, details, "the details cursor is in _meta")
	assert.Equal(t, details, body.Meta.DetailsCursor, "and in the body")
	require.Len(t, texts, 2, "the compact rendering and the guidance line")
	assert.Contains(t, texts[1], "Showing a compact rendering")
	assert.Contains(t, texts[1], "For the original JSON call ctxfit_details with {\"cursor\":", "the guidance names the MCP tool")

	full := mcpfittest.Call(t, cs, mcpcore.DefaultDetailsTool, map[string]any{"cursor": details, "fields": "all"})
	require.False(t, full.IsError, "%v", mcpfittest.Texts(t, full))
	assert.Equal(t, original, mcpfittest.Texts(t, full)[0], "the details tool gives the original, byte for byte")
}

func TestASmallResultGetsItsToolsOutputFormatWithTheCallsArguments(t *testing.T) {
	cfg := ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "search_bookings", OutputFormat: &ctxfit.OutputFormat{
		Template:       "{{.total}} bookings (limit {{.args.limit}}){{with .note}}, {{.}}{{end}}:{{range .results}} {{.id}};{{end}}",
		ExtractFields:  []string{"total", "note", "results.id"},
		RequiredFields: []string{"results.id"},
	}}}}
	cs, raw := guarded(t, cfg, nil)
	args := map[string]any{"query": "", "limit": 8}
	original := mcpfittest.Call(t, raw, "search_bookings", args)
	require.Less(t, mcpfittest.Tokens(t, original), ctxfit.DefaultThreshold, "a result under the threshold")

	res := mcpfittest.Call(t, cs, "search_bookings", args)
	require.False(t, res.IsError, "%v", mcpfittest.Texts(t, res))
	assert.Equal(t, "format", res.Meta[mcpcore.MetaStrategy], "formatted, whatever its size")
	assert.Less(t, mcpfittest.Tokens(t, res), mcpfittest.Tokens(t, original), "smaller than the tool's result")
	var body struct {
		Text string `json:"text"`
	}
	require.NoError(t, json.Unmarshal([]byte(mcpfittest.Texts(t, res)[0]), &body))
	assert.Regexp(t, `^\d+ bookings \(limit 8\):( BK\d+;){8}$`, body.Text, "the template read the arguments; the optional note renders empty")

	full := mcpfittest.Call(t, cs, mcpcore.DefaultDetailsTool, map[string]any{"cursor": mcpfittest.DetailsCursor(res), "fields": "all"})
	require.False(t, full.IsError, "%v", mcpfittest.Texts(t, full))
	assert.Equal(t, bodyOf(t, original), mcpfittest.Texts(t, full)[0], "the details tool gives the original, byte for byte")
}
