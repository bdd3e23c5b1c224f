// Package schemaloop finds the JSON Schema references that loop without
// reading a value ({"$ref":"#"}, or two definitions that refer to each
// other through allOf), on which github.com/google/jsonschema-go's
// validation recurses until the stack overflows: a fatal error that no
// recover stops. Check a schema from outside the process (an OpenAPI
// document, an MCP server's inputSchema) with [Check] before validating
// with it.
package schemaloop

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unsafe"
)

// inPlace are the keywords whose subschemas apply to the same value as the
// schema that holds them: a loop through them reads nothing.
var inPlace = []string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"}

// data are the keywords whose values are data, not schemas.
var data = map[string]bool{"const": true, "enum": true, "default": true, "examples": true, "example": true}

// Check returns an error when a reference of root loops back to a schema on
// its path without reading a value, or names a schema that is not in root
// (a remote reference, or a pointer to nothing), so that nothing is left
// for a validator to follow out of the document.
func Check(root map[string]any) error {
	c := checker{root: root, anchors: map[string]map[string]any{}, state: map[unsafe.Pointer]int{}}
	c.collect(root)
	var err error
	c.each(root, func(m map[string]any) {
		if err == nil {
			err = c.visit(m)
		}
	})
	return err
}

type checker struct {
	root    map[string]any
	anchors map[string]map[string]any
	// state of a schema, by its map's identity: 1 on the path, 2 done.
	state map[unsafe.Pointer]int
}

// each calls f for every schema below v (v's own included).
func (c *checker) each(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for k, sub := range v {
			if !data[k] {
				c.each(sub, f)
			}
		}
	case []any:
		for _, sub := range v {
			c.each(sub, f)
		}
	}
}

// collect notes the anchors ($anchor, $dynamicAnchor) of the schemas.
func (c *checker) collect(root map[string]any) {
	c.each(root, func(m map[string]any) {
		for _, k := range []string{"$anchor", "$dynamicAnchor"} {
			if a, ok := m[k].(string); ok {
				c.anchors[a] = m
			}
		}
	})
}

// visit walks the in-place edges from m, depth first.
func (c *checker) visit(m map[string]any) error {
	id := reflect.ValueOf(m).UnsafePointer()
	switch c.state[id] {
	case 1:
		return errors.New("the schema refers to itself without reading a value (a loop of $ref, allOf, anyOf, " +
			"oneOf, not, if, then or else); make each loop pass through a property or an item")
	case 2:
		return nil
	}
	c.state[id] = 1
	for _, next := range c.edges(m) {
		if next.err != nil {
			return next.err
		}
		if err := c.visit(next.m); err != nil {
			return err
		}
	}
	c.state[id] = 2
	return nil
}

type edge struct {
	m   map[string]any
	err error
}

// edges returns the schemas that apply to the same value as m.
func (c *checker) edges(m map[string]any) []edge {
	var out []edge
	for _, k := range []string{"$ref", "$dynamicRef"} {
		if ref, ok := m[k].(string); ok {
			t, err := c.resolve(ref)
			out = append(out, edge{t, err})
		}
	}
	for _, k := range inPlace {
		switch v := m[k].(type) {
		case map[string]any:
			if k == "dependentSchemas" {
				for _, s := range v {
					if s, ok := s.(map[string]any); ok {
						out = append(out, edge{m: s})
					}
				}
				continue
			}
			out = append(out, edge{m: v})
		case []any:
			for _, s := range v {
				if s, ok := s.(map[string]any); ok {
					out = append(out, edge{m: s})
				}
			}
		}
	}
	return out
}

// resolve returns the schema a local reference names.
func (c *checker) resolve(ref string) (map[string]any, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("the schema refers to %q, outside the document; only references within it (#/...) are followed", ref)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		if a := c.anchors[frag]; a != nil {
			return a, nil
		}
		return nil, fmt.Errorf("the schema refers to the anchor %q, which no schema declares", ref)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, fmt.Errorf("the schema's reference %q is not a valid JSON pointer: %w", ref, err)
	}
	var cur any = c.root
	if frag != "" {
		for _, tok := range strings.Split(frag[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch v := cur.(type) {
			case map[string]any:
				cur = v[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(v) {
					return nil, fmt.Errorf("the schema's reference %q names nothing in it", ref)
				}
				cur = v[i]
			default:
				cur = nil
			}
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the schema's reference %q names nothing in it, or no schema", ref)
	}
	return m, nil
}
