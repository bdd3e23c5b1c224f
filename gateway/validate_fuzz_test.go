package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzValidateArgs checks the argument check against any schema and any
// arguments: never a panic; arguments jsonschema-go accepts (with no format
// to check) pass; arguments it refuses get an error with a message and
// advice, never a pass.
func FuzzValidateArgs(f *testing.F) {
	for _, seed := range []struct{ schema, args string }{
		{`{"type":"object","required":["name"],"properties":{"name":{"type":"string","minLength":2}}}`, `{"name":"a"}`},
		{`{"type":"object","additionalProperties":false,"properties":{"n":{"type":"integer","minimum":1,"multipleOf":2}}}`, `{"n":3,"x":1}`},
		{`{"type":"object","properties":{"id":{"anyOf":[{"type":"integer"},{"type":"string","format":"uuid"}]}}}`, `{"id":"x"}`},
		{`{"type":"object","properties":{"t":{"type":"array","uniqueItems":true,"prefixItems":[{"type":"string"}],"items":{"pattern":"^[a-z]+$"}}}}`, `{"t":["a","a",1]}`},
		{`{"type":"object","properties":{"m":{"type":"object","patternProperties":{"^x-":{"type":"boolean"}}}}}`, `{"m":{"x-a":1}}`},
		{`{"oneOf":[{"required":["a"]},{"required":["b"]}]}`, `{"a":1,"b":2}`},
		{`{"type":"object","properties":{"r":{"type":"number","exclusiveMaximum":1e400}}}`, `{"r":1e401}`},
		{`{"$defs":{"n":{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, `{"n":{"n":{"n":1}}}`},
		{`{}`, `null`},
		{`{"type":"object"}`, `{"a":1} x`},
	} {
		f.Add(seed.schema, seed.args)
	}
	f.Fuzz(func(t *testing.T, schemaJSON, args string) {
		var root map[string]any
		if json.Unmarshal([]byte(schemaJSON), &root) != nil || root == nil {
			return
		}
		sch, err := compileSchema(root, true)
		if err != nil {
			return
		}
		e := validateArgs(sch, json.RawMessage(args))
		if e != nil && (e.Message == "" || e.Data.Suggestion == "") {
			t.Fatalf("an argument error without a message or advice: %+v", e)
		}
		raw := []byte(args)
		if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
			raw = []byte("{}") // as validateArgs reads them; otherwise as they came (a form feed is not JSON's space)
		}
		inst, err := decodeInstance(raw)
		if err != nil {
			if e == nil {
				t.Fatalf("arguments that are not JSON passed: %q", args)
			}
			return
		}
		valid := sch.resolved.Validate(numbersAsFloats(inst)) == nil
		if !valid && e == nil {
			t.Fatalf("arguments the schema refuses passed: schema %s, arguments %s", schemaJSON, args)
		}
		if valid && !sch.hasFormat && e != nil {
			t.Fatalf("arguments the schema accepts were refused: schema %s, arguments %s: %s", schemaJSON, args, e.Message)
		}
	})
}
