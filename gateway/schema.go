package gateway

import (
	"encoding/json"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxSchemaDepth bounds how deep a schema's component references are
// inlined; deeper (and recursive) references become an empty schema, which
// accepts anything.
const maxSchemaDepth = 16

// schemaConverter turns OpenAPI schemas into self-contained JSON Schema
// (2020-12) objects, the dialect of MCP tool schemas: references to
// #/components/schemas are inlined (a recursive one becomes {}), the 3.0
// keywords nullable and boolean exclusiveMinimum/exclusiveMaximum are
// rewritten, and keywords JSON Schema does not know (example,
// discriminator, xml, externalDocs, x-*) are dropped.
type schemaConverter struct {
	components openapi3.Schemas
}

// convert returns ref as a JSON Schema object; a nil ref gives {}. A
// reference to a component is inlined from the component (with the
// reference's 3.1 siblings); one elsewhere in the document from the value
// the loader resolved.
func (c schemaConverter) convert(ref *openapi3.SchemaRef) map[string]any {
	if ref == nil {
		return map[string]any{}
	}
	if strings.HasPrefix(ref.Ref, componentPrefix) {
		return c.resolve(map[string]any{"$ref": ref.Ref}, nil)
	}
	if ref.Value == nil {
		return map[string]any{}
	}
	out, _ := c.walk(toMap(ref.Value), nil).(map[string]any)
	if out == nil {
		return map[string]any{}
	}
	return out
}

func toMap(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{}
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return map[string]any{}
	}
	return m
}

const componentPrefix = "#/components/schemas/"

// resolve replaces m, a schema with a $ref, by the component it names with
// m's other keywords laid over it (OpenAPI 3.1 siblings of $ref).
func (c schemaConverter) resolve(m map[string]any, stack []string) map[string]any {
	ref, _ := m["$ref"].(string)
	name, ok := strings.CutPrefix(ref, componentPrefix)
	comp := c.components[name]
	if !ok || comp == nil || comp.Value == nil || len(stack) >= maxSchemaDepth || contains(stack, name) {
		return map[string]any{}
	}
	out := toMap(comp.Value)
	if comp.Ref != "" && comp.Ref != ref {
		out = c.resolve(map[string]any{"$ref": comp.Ref}, append(stack, name))
	}
	for k, v := range m {
		if k != "$ref" {
			out[k] = v
		}
	}
	out, _ = c.walk(out, append(stack, name)).(map[string]any)
	if out == nil {
		return map[string]any{}
	}
	return out
}

func contains(stack []string, name string) bool {
	for _, s := range stack {
		if s == name {
			return true
		}
	}
	return false
}

// Keywords whose value is a schema, a list of schemas, or a map of them.
var (
	schemaKeywords = []string{"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
		"unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
	droppedKeywords    = []string{"example", "discriminator", "xml", "externalDocs"}
)

// walk rewrites one schema (see schemaConverter).
func (c schemaConverter) walk(v any, stack []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v // true, false
	}
	if _, ok := m["$ref"]; ok {
		return c.resolve(m, stack)
	}
	for _, k := range droppedKeywords {
		delete(m, k)
	}
	for k := range m {
		if strings.HasPrefix(k, "x-") {
			delete(m, k)
		}
	}
	if nullable, _ := m["nullable"].(bool); nullable {
		switch t := m["type"].(type) {
		case string:
			m["type"] = []any{t, "null"}
		case []any:
			if !containsAny(t, "null") {
				m["type"] = append(t, "null")
			}
		}
	}
	delete(m, "nullable")
	for _, k := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if b, ok := m[k[0]].(bool); ok {
			delete(m, k[0])
			if bound, has := m[k[1]]; b && has {
				m[k[0]] = bound
				delete(m, k[1])
			}
		}
	}
	for _, k := range schemaKeywords {
		if s, ok := m[k]; ok {
			m[k] = c.walk(s, stack)
		}
	}
	for _, k := range schemaListKeywords {
		if list, ok := m[k].([]any); ok {
			for i := range list {
				list[i] = c.walk(list[i], stack)
			}
		}
	}
	for _, k := range schemaMapKeywords {
		if props, ok := m[k].(map[string]any); ok {
			for name, s := range props {
				props[name] = c.walk(s, stack)
			}
		}
	}
	return m
}

func containsAny(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// typeOf returns a schema's type when it is one string.
func typeOf(schema map[string]any) string {
	t, _ := schema["type"].(string)
	return t
}
