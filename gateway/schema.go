package gateway

import (
	"net/url"
	"slices"
	"strings"
)

// maxSchemaDepth bounds how deep a schema's references are inlined; deeper
// (and recursive) references become an empty schema, which accepts
// anything.
const maxSchemaDepth = 16

// schemaConverter turns the document's schemas into self-contained JSON
// Schema (2020-12) objects, the dialect of MCP tool schemas: local
// references ("#/components/schemas/Pet") are inlined (a recursive one
// becomes {}), the 3.0 keywords nullable and boolean
// exclusiveMinimum/exclusiveMaximum are rewritten, and keywords JSON Schema
// does not know (example, discriminator, xml, externalDocs, x-*) are
// dropped. It copies what it rewrites: the document is not changed.
type schemaConverter struct {
	root map[string]any // the document, for references
}

// convert returns the schema v as a JSON Schema object; nil gives {}.
func (c schemaConverter) convert(v any) map[string]any {
	out, _ := c.walk(v, nil).(map[string]any)
	if out == nil {
		return map[string]any{}
	}
	return out
}

// target returns the value a local reference points to.
func (c schemaConverter) target(ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	return pointer(c.root, frag)
}

// Keywords whose value is a schema, a list of schemas, or a map of them.
var (
	schemaKeywords = []string{"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
		"unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
	droppedKeywords    = []string{"example", "discriminator", "xml", "externalDocs"}
)

// walk returns a rewritten copy of one schema (see schemaConverter).
func (c schemaConverter) walk(v any, stack []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return map[string]any{}
		}
		return v // true, false
	}
	if ref, ok := m["$ref"].(string); ok {
		t, found := c.target(ref)
		if !found || len(stack) >= maxSchemaDepth || slices.Contains(stack, ref) {
			return map[string]any{}
		}
		tm, ok := t.(map[string]any)
		if !ok {
			return c.walk(t, stack)
		}
		merged := make(map[string]any, len(tm)+len(m))
		for k, e := range tm {
			merged[k] = e
		}
		for k, e := range m { // 3.1: the reference's siblings
			if k != "$ref" {
				merged[k] = e
			}
		}
		return c.walk(merged, append(stack, ref))
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		if strings.HasPrefix(k, "x-") || slices.Contains(droppedKeywords, k) {
			continue
		}
		switch {
		case slices.Contains(schemaKeywords, k):
			out[k] = c.walk(e, stack)
		case slices.Contains(schemaListKeywords, k):
			if list, ok := e.([]any); ok {
				walked := make([]any, len(list))
				for i := range list {
					walked[i] = c.walk(list[i], stack)
				}
				out[k] = walked
			}
		case slices.Contains(schemaMapKeywords, k):
			if props, ok := e.(map[string]any); ok {
				walked := make(map[string]any, len(props))
				for name, s := range props {
					walked[name] = c.walk(s, stack)
				}
				out[k] = walked
			}
		default:
			out[k] = e // data (enum, default, const, ...): shared, never changed
		}
	}
	if nullable, _ := out["nullable"].(bool); nullable {
		switch t := out["type"].(type) {
		case string:
			out["type"] = []any{t, "null"}
		case []any:
			if !slices.Contains(t, any("null")) {
				out["type"] = append(slices.Clone(t), "null")
			}
		}
		if enum, ok := out["enum"].([]any); ok && !slices.Contains(enum, nil) {
			out["enum"] = append(slices.Clone(enum), nil)
		}
	}
	delete(out, "nullable")
	for _, k := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if b, ok := out[k[0]].(bool); ok {
			delete(out, k[0])
			if bound, has := out[k[1]]; b && has {
				out[k[0]] = bound
				delete(out, k[1])
			}
		}
	}
	return out
}

// typeOf returns a schema's type when it is one string.
func typeOf(schema map[string]any) string {
	t, _ := schema["type"].(string)
	return t
}
