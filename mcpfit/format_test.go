package mcpfit_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/summary"
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

func TestTheMetricsFileAndTheTransformationLogAgreeOnEveryCall(t *testing.T) {
	dir := t.TempDir()
	metricsFile, logFile := filepath.Join(dir, "metrics.jsonl"), filepath.Join(dir, "transformations.jsonl")
	cfg := ctxfit.Config{
		Endpoints: []ctxfit.Endpoint{{Match: "search_bookings", OutputFormat: &ctxfit.OutputFormat{
			Template:       "{{.total}} bookings:{{range .results}} {{.id}};{{end}}",
			ExtractFields:  []string{"total", "results.id"},
			RequiredFields: []string{"results.id"},
		}}, {Match: "get_booking", OutputFormat: &ctxfit.OutputFormat{
			Template:       "{{.id}}: {{.nickname}}",
			ExtractFields:  []string{"id", "nickname"},
			RequiredFields: []string{"nickname"},
		}}},
		Wrapper: ctxfit.WrapperConfig{CollectMetrics: true, MetricsFile: metricsFile, LogFile: logFile},
	}
	cs, raw := guarded(t, cfg, nil)
	rendered := map[string]any{"query": "", "limit": 8}
	booking := map[string]any{"id": "BK00001"}

	res := mcpfittest.Call(t, cs, "search_bookings", rendered)
	require.Equal(t, "format", res.Meta[mcpcore.MetaStrategy])
	var body struct {
		Text string `json:"text"`
	}
	require.NoError(t, json.Unmarshal([]byte(mcpfittest.Texts(t, res)[0]), &body))
	res = mcpfittest.Call(t, cs, "get_booking", booking)
	require.NotEqual(t, "format", res.Meta[mcpcore.MetaStrategy], "a result without the required field is not rendered")

	metrics := readJSONLines[summary.Metrics](t, metricsFile)
	entries := readJSONLines[summary.TransformationLog](t, logFile)
	require.Len(t, metrics, 2, "a metrics line a call")
	assert.False(t, metrics[0].UsedFallback, "the rendering was sent")
	assert.Equal(t, len(body.Text), metrics[0].CompactBytes)
	assert.Equal(t, mcpfittest.Count(body.Text), metrics[0].CompactTokens, "exact tokens of the rendering")
	assert.Equal(t, len(bodyOf(t, mcpfittest.Call(t, raw, "search_bookings", rendered))), metrics[0].RawBytes)
	assert.True(t, metrics[1].UsedFallback, "the result without the required field fell back")
	var failed *summary.TransformationLog
	for i, e := range entries {
		if e.Level == summary.LogError {
			failed = &entries[i]
		}
		var m *summary.Metrics
		for j := range metrics {
			if metrics[j].Timestamp.Equal(e.Timestamp) {
				m = &metrics[j]
			}
		}
		require.NotNil(t, m, "the log entry %+v has the metrics line of its run", e)
		assert.Equal(t, m.Operation, e.Operation, "the log and the metrics agree")
		assert.Equal(t, m.RawBytes, e.InputSize, "the log and the metrics agree")
		assert.Equal(t, m.ProcessingTimeMs, e.ProcessingTimeMs, "the log and the metrics agree")
		assert.Equal(t, m.UsedFallback, e.UsedFallback, "the log and the metrics agree")
	}
	require.NotNil(t, failed, "the fallback is logged as an error: %+v, metrics %+v", entries, metrics)
	assert.Equal(t, "get_booking", failed.Operation)
	assert.Contains(t, failed.Error, `"nickname"`, "naming the missing required field")
	assert.True(t, failed.UsedFallback)
}

// readJSONLines decodes a JSON Lines file.
func readJSONLines[T any](t *testing.T, path string) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []T
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var v T
		require.NoError(t, json.Unmarshal([]byte(line), &v), line)
		out = append(out, v)
	}
	return out
}
