package mcpcore_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/telemetry"
)

func TestNamesWithDefaultsFillOnlyTheEmptyNames(t *testing.T) {
	assert.Equal(t, mcpcore.Names{Next: "ctxfit_next", Details: "ctxfit_details", Search: "ctxfit_search", Query: "ctxfit_query"}, mcpcore.Names{}.WithDefaults())
	assert.Equal(t, mcpcore.Names{Next: "more", Details: "ctxfit_details", Search: "find", Query: "ctxfit_query"}, mcpcore.Names{Next: "more", Search: "find"}.WithDefaults())
	assert.ErrorContains(t, mcpcore.Names{Search: "ctxfit_next"}.Distinct(), `two of ctxfit's tools are named "ctxfit_next"`)
	assert.NoError(t, mcpcore.Names{}.Distinct())
}

func TestGuardsShapesEveryToolButTheOwnAndTheDisabledOnes(t *testing.T) {
	cfg := ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "raw_tool", Disabled: true}, {Match: "tuned_tool"}}}
	names := mcpcore.Names{Next: "more"}
	for _, tc := range []struct {
		tool string
		want bool
	}{
		{"list_bookings", true},
		{"tuned_tool", true},
		{"raw_tool", false},
		{"more", false},
		{"ctxfit_details", false},
		{"ctxfit_next", true}, // renamed: an ordinary tool now
	} {
		t.Run(tc.tool, func(t *testing.T) {
			assert.Equal(t, tc.want, names.Guards(cfg, tc.tool))
		})
	}
}

func TestDecodeArgumentsIsStrict(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"absent is empty", "", ""},
		{"blank is empty", " \n", ""},
		{"null is empty", "null", ""},
		{"an object decodes", `{"cursor":"abc"}`, "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in mcpcore.NextInput
			require.NoError(t, mcpcore.DecodeArguments(json.RawMessage(tc.in), &in))
			assert.Equal(t, tc.want, in.Cursor)
		})
	}
	for _, tc := range []struct{ name, in string }{
		{"an unknown field", `{"cursor":"abc","page":2}`},
		{"the wrong type", `{"cursor":7}`},
		{"not JSON", `{"cursor":`},
	} {
		t.Run(tc.name+" is an error", func(t *testing.T) {
			var in mcpcore.NextInput
			assert.Error(t, mcpcore.DecodeArguments(json.RawMessage(tc.in), &in))
		})
	}
}

func TestNextInputReturnsTheCursorAndPartOrTheErrorToReport(t *testing.T) {
	names := mcpcore.Names{}.WithDefaults()
	in, bad := names.NextInput(json.RawMessage(`{"cursor":"abc"}`))
	require.Nil(t, bad)
	assert.Equal(t, mcpcore.NextInput{Cursor: "abc"}, in)
	in, bad = names.NextInput(json.RawMessage(`{"cursor":"abc","part":42}`))
	require.Nil(t, bad)
	assert.Equal(t, mcpcore.NextInput{Cursor: "abc", Part: 42}, in)
}

func TestDetailsInputIsTheCursorAndTheFields(t *testing.T) {
	names := mcpcore.Names{}.WithDefaults()
	in, bad := names.DetailsInput(json.RawMessage(`{"cursor":"abc","fields":"all"}`))
	require.Nil(t, bad)
	assert.Equal(t, mcpcore.DetailsInput{Cursor: "abc", Fields: "all"}, in)
}

func TestToolFailedSaysToCallTheToolDirectly(t *testing.T) {
	e := mcpcore.ToolFailed("get_booking", "boom")
	assert.Equal(t, mcpcore.Error{Code: "tool_failed", Message: "boom", Data: mcpcore.ErrorData{
		Parameter: "tool", Suggestion: "Call the tool get_booking directly.", Status: 500}}, e)
	assert.Equal(t, mcpcore.CodeInternalError, e.RPCCode())
}

func TestIsObjectAcceptsOnlyAJSONObject(t *testing.T) {
	assert.True(t, mcpcore.IsObject([]byte(` {"a":1} `)))
	assert.False(t, mcpcore.IsObject([]byte(`[1]`)))
	assert.False(t, mcpcore.IsObject([]byte(`{"a":`)))
	assert.False(t, mcpcore.IsObject([]byte(`  `)))
}

func TestGuidanceFitKeepsTheLineWithinTheHardCap(t *testing.T) {
	line := "For the next page call ctxfit_next with {\"cursor\":\"abc\"}."
	exact, err := budget.Exact(budget.O200KBase)
	require.NoError(t, err)
	n := exact.Count(line)
	shaped := func(tokens, hardCap int) ctxfit.Result {
		return ctxfit.Result{Strategy: telemetry.StrategyPagination,
			Record: telemetry.Record{TokensAfter: tokens, HardCap: hardCap}}
	}
	var fit mcpcore.GuidanceFit
	t.Run("without a hard cap it always fits", func(t *testing.T) {
		assert.True(t, fit.Fits(shaped(1_000_000, 0), budget.O200KBase, line))
	})
	t.Run("the body, the line and a newline fit exactly", func(t *testing.T) {
		assert.True(t, fit.Fits(shaped(100, 100+n+1), budget.O200KBase, line))
		assert.False(t, fit.Fits(shaped(100, 100+n), budget.O200KBase, line))
	})
	t.Run("the default encoding is o200k_base", func(t *testing.T) {
		assert.True(t, fit.Fits(shaped(100, 100+n+1), "", line))
		assert.False(t, fit.Fits(shaped(100, 100+n), "", line))
	})
	t.Run("an unknown encoding counts bytes", func(t *testing.T) {
		assert.True(t, fit.Fits(shaped(100, 100+len(line)), "no_such_encoding", line))
		assert.False(t, fit.Fits(shaped(100, 100+len(line)-1), "no_such_encoding", line))
	})
}
