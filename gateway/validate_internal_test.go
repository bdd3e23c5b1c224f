package gateway

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryViolationNamesItsArgumentAndWhatIsExpected(t *testing.T) {
	schema := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"name"},
		"properties": map[string]any{
			"name":  map[string]any{"type": "string", "minLength": 2, "maxLength": 5},
			"count": map[string]any{"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 2},
			"ratio": map[string]any{"type": "number", "exclusiveMinimum": 0.5},
			"tags":  map[string]any{"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true, "items": map[string]any{"type": "string", "pattern": "^[a-z]+$"}},
			"when":  map[string]any{"type": "string", "format": "date-time"},
			"mode":  map[string]any{"enum": []any{"fast", "slow"}},
			"kind":  map[string]any{"const": "pet"},
			"pair":  map[string]any{"type": "array", "prefixItems": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}},
			"meta":  map[string]any{"type": "object", "patternProperties": map[string]any{"^x-": map[string]any{"type": "boolean"}}},
			"id":    map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string", "format": "uuid"}}},
		}}
	sch, err := compileSchema(schema, true)
	require.NoError(t, err)
	for _, c := range []struct {
		name, args, parameter, expected string
	}{
		{"a missing required argument", `{}`, "name", "a value (the argument is required)"},
		{"an unknown argument", `{"name":"ab","nmae":1}`, "nmae", "no such argument"},
		{"a string too short", `{"name":"a"}`, "name", "a string of at least 2 characters"},
		{"a string too long", `{"name":"abcdef"}`, "name", "a string of at most 5 characters"},
		{"a number below the minimum", `{"name":"ab","count":0}`, "count", "a number of at least 1"},
		{"a number above the maximum", `{"name":"ab","count":12}`, "count", "a number of at most 10"},
		{"a number not a multiple", `{"name":"ab","count":3}`, "count", "a multiple of 2"},
		{"a number at an exclusive bound", `{"name":"ab","ratio":0.5}`, "ratio", "a number greater than 0.5"},
		{"a fraction for an integer", `{"name":"ab","count":2.5}`, "count", "a value of type integer"},
		{"too few items", `{"name":"ab","tags":[]}`, "tags", "an array of at least 1 items"},
		{"too many items", `{"name":"ab","tags":["a","b","c"]}`, "tags", "an array of at most 2 items"},
		{"repeated items", `{"name":"ab","tags":["a","a"]}`, "tags", "an array of distinct items"},
		{"an item off its pattern", `{"name":"ab","tags":["A"]}`, "tags/0", "a string that matches the pattern ^[a-z]+$"},
		{"a value off its format", `{"name":"ab","when":"yesterday"}`, "when", "a value of format date-time"},
		{"a value outside the enum", `{"name":"ab","mode":"medium"}`, "mode", `one of "fast", "slow"`},
		{"a value other than the const", `{"name":"ab","kind":"cat"}`, "kind", `exactly "pet"`},
		{"a prefix item of the wrong type", `{"name":"ab","pair":["a","b"]}`, "pair/1", "a value of type integer"},
		{"a pattern property of the wrong type", `{"name":"ab","meta":{"x-on":"yes"}}`, "meta/x-on", "a value of type boolean"},
		{"no alternative of anyOf, as near as each other: the first", `{"name":"ab","id":"42"}`, "id", "a value of type integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := validateArgs(sch, json.RawMessage(c.args))
			require.NotNil(t, e)
			assert.Equal(t, c.parameter, e.Data.Parameter, e.Message)
			assert.Equal(t, c.expected, e.Data.Expected, e.Message)
			assert.NotEmpty(t, e.Data.Suggestion)
		})
	}
	t.Run("valid arguments pass", func(t *testing.T) {
		assert.Nil(t, validateArgs(sch, json.RawMessage(`{"name":"ab","count":4,"ratio":0.6,"tags":["a","b"],"when":"2026-11-28T05:00:00Z",
			"mode":"fast","kind":"pet","pair":["a",1],"meta":{"x-on":true},"id":"0b0e2a5c-6b2e-4d6f-9a57-1a9b2f3c4d5e"}`)))
		assert.Nil(t, validateArgs(sch, json.RawMessage(`{"name":"ab","id":7}`)))
	})
}
