package mcpcore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/telemetry"
)

func TestGuidanceSaysWhatAResultHoldsAndHowToGetMore(t *testing.T) {
	summaryBody := `{"summary":{"id":"BK1"},"meta":{"kind":"object","detailsAvailable":{"endpoint":"get_booking","parameters":{"fields":"amenities,policies"}}}}`
	for _, tc := range []struct {
		name  string
		res   ctxfit.Result
		names mcpcore.Names
		want  string
	}{
		{"a pass-through has none", ctxfit.Result{Strategy: telemetry.StrategyPassthrough}, mcpcore.Names{}, ""},
		{"a page leads to the next", ctxfit.Result{Strategy: telemetry.StrategyPagination, Next: "abc", Guidance: "Showing items 1-37 of 500 (3,912 tokens; budget 4,000)."}, mcpcore.Names{},
			`Showing items 1-37 of 500 (3,912 tokens; budget 4,000). For the next page call ctxfit_next with {"cursor":"abc"}.`},
		{"the last page says so", ctxfit.Result{Strategy: telemetry.StrategyPagination, Guidance: "Showing items 451-500 of 500 (1,000 tokens; budget 4,000)."}, mcpcore.Names{},
			`Showing items 451-500 of 500 (1,000 tokens; budget 4,000). This is the last page.`},
		{"a chunk names the configured tool", ctxfit.Result{Strategy: telemetry.StrategyChunking, Next: "c<d>", Guidance: "Showing chunk 1 of 9."}, mcpcore.Names{Next: "more"},
			`Showing chunk 1 of 9. For the next chunk call more with {"cursor":"c<d>"}.`},
		{"a cut leads to the next part", ctxfit.Result{Strategy: telemetry.StrategyCut, Next: "x", Guidance: "Showing bytes 1-10 of 20."}, mcpcore.Names{},
			`Showing bytes 1-10 of 20. For the next part call ctxfit_next with {"cursor":"x"}.`},
		{"a summary leads to the details tool with its details cursor", ctxfit.Result{Strategy: telemetry.StrategySummary, Body: []byte(summaryBody), Details: "d1",
			Guidance: "Showing a summary (500 of 3,000 tokens; budget 2,000). For the left-out fields request get_booking with fields=amenities,policies (or fields=all)."}, mcpcore.Names{},
			`Showing a summary (500 of 3,000 tokens; budget 2,000). For the left-out fields call ctxfit_details with {"cursor":"d1","fields":"amenities,policies"} (or "fields":"all"; dotted paths such as a.b work too).`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, mcpcore.Guidance(tc.res, tc.names))
		})
	}
}

func TestCanonicalArgumentsAreTheSameBytesForTheSameArguments(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"absent", "", "{}"},
		{"null", " null ", "{}"},
		{"keys sorted, whitespace gone", `{ "b": 1, "a": {"y": [1, 2], "x": "<&>"} }`, `{"a":{"x":"<&>","y":[1,2]},"b":1}`},
		{"numbers as written", `{"n": 1.50, "big": 12345678901234567890}`, `{"big":12345678901234567890,"n":1.50}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mcpcore.CanonicalArguments(json.RawMessage(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
	t.Run("invalid JSON is an error", func(t *testing.T) {
		_, err := mcpcore.CanonicalArguments(json.RawMessage(`{"a":`))
		assert.ErrorContains(t, err, "mcpcore:")
		_, err = mcpcore.CanonicalArguments(json.RawMessage(`{} {}`))
		assert.Error(t, err)
	})
}

func TestErrorOfCarriesTheProblemAndASuggestion(t *testing.T) {
	e := mcpcore.ErrorOf(fmt.Errorf("ctxfit: %w", cursor.ErrMalformed))
	assert.Equal(t, "cursor_invalid", e.Code)
	assert.Equal(t, "cursor", e.Data.Parameter)
	assert.NotEmpty(t, e.Data.Expected)
	assert.NotEmpty(t, e.Data.Suggestion)
	assert.Equal(t, mcpcore.CodeInvalidParams, e.RPCCode())
	assert.Contains(t, e.Text(), e.Data.Suggestion)
	assert.Contains(t, e.Text(), `Argument "cursor" should be`)

	b, err := json.Marshal(e)
	require.NoError(t, err)
	var wire map[string]any
	require.NoError(t, json.Unmarshal(b, &wire))
	assert.Contains(t, wire, "code")
	assert.Contains(t, wire, "message")
	assert.Contains(t, wire["data"], "suggestion")

	internal := mcpcore.ErrorOf(errors.New("boom"))
	assert.Equal(t, mcpcore.CodeInternalError, internal.RPCCode())

	arg := mcpcore.ArgumentError("cursor", "cursor is missing", "a string", "Pass it.")
	assert.Equal(t, mcpcore.CodeInvalidParams, arg.RPCCode())
	assert.Equal(t, "Error parameter_invalid: cursor is missing. Argument \"cursor\" should be a string. Pass it.", arg.Text())
}

func TestMetaIsANewMapWithTheCursorAndBudget(t *testing.T) {
	res := ctxfit.Result{Strategy: telemetry.StrategyPagination, Next: "n", Record: telemetry.Record{TokensBefore: 9000, TokensAfter: 3900, HardCap: 12000}}
	a, b := mcpcore.Meta(res), mcpcore.Meta(res)
	assert.Equal(t, map[string]any{
		mcpcore.MetaStrategy: "pagination", mcpcore.MetaNextCursor: "n",
		mcpcore.MetaTokens: 3900, mcpcore.MetaOriginalTokens: 9000, mcpcore.MetaHardCap: 12000,
	}, a)
	a["x"] = 1
	assert.NotContains(t, b, "x")
	assert.NotContains(t, mcpcore.Meta(ctxfit.Result{Strategy: "summary"}), mcpcore.MetaNextCursor)
}

func resolve(t *testing.T, schema json.RawMessage) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal(schema, &s))
	rs, err := s.Resolve(nil)
	require.NoError(t, err)
	return rs
}

func instance(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

func TestOutputSchemaAcceptsTheToolsResultsAndShapedOnes(t *testing.T) {
	original := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Search",
		"type":"object","required":["total","results"],"additionalProperties":false,
		"properties":{"total":{"type":"integer"},"results":{"type":"array","items":{"$ref":"#/$defs/item"}},
		"again":{"$ref":"#/properties/total"}},
		"$defs":{"item":{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}}}}`)
	out, err := mcpcore.OutputSchema(original)
	require.NoError(t, err)
	rs := resolve(t, out)
	assert.Equal(t, "object", rs.Schema().Type)
	assert.Equal(t, "Search", rs.Schema().Title)

	for _, tc := range []struct {
		name, instance string
		valid          bool
	}{
		{"the tool's own result", `{"total":1,"results":[{"id":"a"}],"again":3}`, true},
		{"a paged object", `{"total":9,"results":[{"id":"a"}],"nextCursor":"c","meta":{"totalCount":9}}`, true},
		{"the last page", `{"total":9,"results":[],"nextCursor":null,"meta":{}}`, true},
		{"a summary", `{"summary":{"total":9},"meta":{"kind":"object"}}`, true},
		{"a chunk", `{"content":"x","chunkIndex":0,"totalChunks":2,"nextCursor":"c","metadata":{"startLine":1}}`, true},
		{"a result that breaks the tool's schema", `{"total":"nine","results":[]}`, false},
		{"a broken reference target", `{"total":1,"results":[{"id":5}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := rs.Validate(instance(t, tc.instance))
			if tc.valid {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
	t.Run("a second rewrite changes nothing", func(t *testing.T) {
		again, err := mcpcore.OutputSchema(out)
		require.NoError(t, err)
		assert.JSONEq(t, string(out), string(again))
	})
	t.Run("no schema stays no schema", func(t *testing.T) {
		for _, in := range []string{"", "null"} {
			out, err := mcpcore.OutputSchema(json.RawMessage(in))
			assert.NoError(t, err)
			assert.Nil(t, out)
		}
	})
	t.Run("a schema that is not an object is an error", func(t *testing.T) {
		_, err := mcpcore.OutputSchema(json.RawMessage(`[1]`))
		assert.ErrorContains(t, err, "mcpcore:")
	})
}

func TestTheInputSchemasRequireTheirArguments(t *testing.T) {
	next := resolve(t, mcpcore.NextInputSchema())
	assert.NoError(t, next.Validate(instance(t, `{"cursor":"abc"}`)))
	assert.Error(t, next.Validate(instance(t, `{}`)))
	assert.Error(t, next.Validate(instance(t, `{"cursor":""}`)))
	assert.Error(t, next.Validate(instance(t, `{"cursor":"a","other":1}`)))

	assert.NoError(t, next.Validate(instance(t, `{"cursor":"abc","part":12}`)))
	assert.Error(t, next.Validate(instance(t, `{"cursor":"abc","part":0}`)))

	details := resolve(t, mcpcore.DetailsInputSchema())
	assert.NoError(t, details.Validate(instance(t, `{"cursor":"d1","fields":"all"}`)))
	assert.Error(t, details.Validate(instance(t, `{"cursor":"d1"}`)))
	assert.Error(t, details.Validate(instance(t, `{"tool":"get_booking","fields":"all"}`)), "no generic way to call a tool")
}

func FuzzCanonicalArgumentsIsIdempotent(f *testing.F) {
	for _, s := range []string{``, `null`, `{"b":1,"a":2}`, `{"x":[1.0,"<"],"y":{"z":null}}`, `[1,2]`, `"s"`, `{"a":`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		once, err := mcpcore.CanonicalArguments(json.RawMessage(in))
		if err != nil {
			return
		}
		require.True(t, json.Valid(once))
		twice, err := mcpcore.CanonicalArguments(once)
		require.NoError(t, err)
		require.Equal(t, string(once), string(twice))
	})
}

func FuzzOutputSchemaGivesAnObjectSchemaOrAnError(f *testing.F) {
	for _, s := range []string{`{"type":"object"}`, `{"$ref":"#"}`, `{"$defs":{"a":{"$ref":"#/properties/x"}}}`, `[]`, `null`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := mcpcore.OutputSchema(json.RawMessage(in))
		if err != nil || out == nil {
			return
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(out, &m))
		require.Equal(t, "object", m["type"])
	})
}
