package schemaloop_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/schemaloop"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, schema, err string
	}{
		{"a schema without references", `{"type":"object","properties":{"a":{"type":"string"}}}`, ""},
		{"a recursive schema that reads a property on each turn", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, ""},
		{"a recursive schema through items", `{"type":"array","items":{"$ref":"#"}}`, ""},
		{"a reference to an anchor", `{"$defs":{"a":{"$anchor":"x","type":"string"}},"$ref":"#x"}`, ""},
		{"a pointer with escapes", `{"$defs":{"a/b":{"type":"string"},"c~d":{"$ref":"#/$defs/a~1b"}},"$ref":"#/$defs/c~0d"}`, ""},
		{"the same definition twice, not a loop", `{"allOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}],"$defs":{"a":{"type":"string"}}}`, ""},
		{"a const that looks like a schema is data", `{"const":{"$ref":"#"}}`, ""},
		{"the root referring to itself", `{"$ref":"#"}`, "refers to itself"},
		{"a definition referring to itself", `{"$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "refers to itself"},
		{"two definitions referring to each other", `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/a"}]}}}`, "refers to itself"},
		{"a loop through not", `{"not":{"$ref":"#"}}`, "refers to itself"},
		{"a loop through if and then", `{"if":{"type":"object"},"then":{"$ref":"#"}}`, "refers to itself"},
		{"a loop through an anchor", `{"$anchor":"me","oneOf":[{"$ref":"#me"}]}`, "refers to itself"},
		{"a remote reference", `{"$ref":"https://example.com/s.json"}`, "outside the document"},
		{"a pointer to nothing", `{"$ref":"#/$defs/missing"}`, "names nothing"},
		{"an unknown anchor", `{"$ref":"#nowhere"}`, "no schema declares"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var root map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.schema), &root))
			err := schemaloop.Check(root)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

// FuzzCheck checks that any JSON object gives an answer, never a panic or
// a stack overflow.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"$ref":"#"}`, `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"$ref":"#/$defs/a"}}}`,
		`{"items":{"$ref":"#"}}`, `{"$anchor":"a","not":{"$ref":"#a"}}`, `{"$ref":"#/0/%zz"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var root map[string]any
		if json.Unmarshal([]byte(s), &root) != nil {
			return
		}
		_ = schemaloop.Check(root)
	})
}
