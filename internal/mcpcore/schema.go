package mcpcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// NextInputSchema returns the JSON schema of the continuation tool's input:
// an object with a required string "cursor", an optional integer "part",
// and no other properties.
func NextInputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"cursor":{"type":"string","minLength":1,` +
		`"description":"The nextCursor (or partCursor) of a shaped result, unchanged."},` +
		`"part":{"type":"integer","minimum":1,"description":"To open a value the result held back: the \"ctxfit:part\" number of its placeholder."}},` +
		`"required":["cursor"],"additionalProperties":false}`)
}

// DetailsInputSchema returns the JSON schema of the details tool's input:
// the required strings "cursor" (a summary's details cursor) and "fields".
func DetailsInputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"cursor":{"type":"string","minLength":1,"description":"The details cursor of a summarized result, unchanged."},` +
		`"fields":{"type":"string","minLength":1,"description":"\"all\" for the whole result, or a comma-separated list of fields (dotted paths such as guest.address.city work too)."}},` +
		`"required":["cursor","fields"],"additionalProperties":false}`)
}

// SearchInputSchema returns the JSON schema of the search tool's input.
func SearchInputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"cursor":{"type":"string","minLength":1,"description":"Any cursor of the shaped result to search (nextCursor, partCursor or a details cursor), unchanged."},` +
		`"pattern":{"type":"string","minLength":1,"maxLength":512,"description":"What to find: an RE2 regular expression, or a literal string with literal set."},` +
		`"literal":{"type":"boolean","description":"Match the pattern as it is, not as a regular expression."},` +
		`"ignoreCase":{"type":"boolean","description":"Match without regard to case."},` +
		`"path":{"type":"string","description":"For a list of objects: match this field of each item (a dotted path such as guest.name) instead of the whole item."},` +
		`"context":{"type":"integer","minimum":0,"maximum":5,"description":"Lines shown before and after each matching line of a text."}},` +
		`"required":["cursor","pattern"],"additionalProperties":false}`)
}

// QueryInputSchema returns the JSON schema of the query tool's input.
func QueryInputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"cursor":{"type":"string","minLength":1,"description":"Any cursor of the shaped JSON result to query, unchanged."},` +
		`"expression":{"type":"string","minLength":1,"maxLength":1000,"description":"A jq expression, evaluated over the whole result."}},` +
		`"required":["cursor","expression"],"additionalProperties":false}`)
}

// SearchInput is the decoded input of the search tool.
type SearchInput struct {
	Cursor     string `json:"cursor"`
	Pattern    string `json:"pattern"`
	Literal    bool   `json:"literal,omitempty"`
	IgnoreCase bool   `json:"ignoreCase,omitempty"`
	Path       string `json:"path,omitempty"`
	Context    int    `json:"context,omitempty"`
}

// QueryInput is the decoded input of the query tool.
type QueryInput struct {
	Cursor     string `json:"cursor"`
	Expression string `json:"expression"`
}

// NextInput is the decoded input of the continuation tool.
type NextInput struct {
	Cursor string `json:"cursor"`
	Part   int64  `json:"part,omitempty"`
}

// DetailsInput is the decoded input of the details tool.
type DetailsInput struct {
	Cursor string `json:"cursor"`
	Fields string `json:"fields"`
}

// The envelopes of shaped results, as JSON schemas: a page of items or
// members (with the outline of the object around them on a first page), a
// summary, a chunk. Extra properties are allowed, so that later fields do
// not break clients.
const (
	pageEnvelope = `{"title":"ctxfit page","type":"object","required":["nextCursor","meta"],"properties":{` +
		`"outline":{},"items":{"type":"array"},"members":{"type":"object"},` +
		`"nextCursor":{"type":["string","null"]},"partCursor":{"type":"string"},"meta":{"type":"object"}}}`
	summaryEnvelope = `{"title":"ctxfit summary","type":"object","required":["summary","meta"],"properties":{` +
		`"meta":{"type":"object"}}}`
	chunkEnvelope = `{"title":"ctxfit chunk","type":"object","required":["content","metadata"],"properties":{` +
		`"outline":{},"content":{"type":"string"},"chunkIndex":{"type":"integer"},"totalChunks":{"type":"integer"},` +
		`"nextCursor":{"type":["string","null"]},"partCursor":{"type":"string"},"metadata":{"type":"object"}}}`
	// textEnvelope: a rendering by an output format ({"text", "meta"}), or
	// a text a shaped result holds instead of JSON (a TOON page, a cut):
	// {"text"}.
	textEnvelope = `{"title":"ctxfit text","type":"object","required":["text"],"properties":{` +
		`"text":{"type":"string"},"meta":{"type":"object"}}}`
)

// rewrittenMarker marks a schema OutputSchema produced, so that a second
// rewrite is a no-op.
const rewrittenMarker = "ctxfit: the tool's output schema, or a shaped result (page, summary, chunk or text)"

// OutputSchema rewrites a tool's outputSchema so that shaped results
// validate against it: the result is
//
//	{"type":"object","anyOf":[original, page, summary, chunk, text], ...}
//
// where page, summary, chunk and text are the envelopes of shaped results
// (text: a rendering by an output format, {"text", "meta"}, or a text such
// as a TOON page, {"text"}). MCP
// clients (the TypeScript SDK among them) reject a result whose
// structuredContent does not match the tool's outputSchema; with the
// rewrite both the tool's own results and ctxfit's shaped ones do.
//
// The keywords that must stay at the root for references to resolve
// ($schema, $id, $defs, definitions) are moved there; other references
// into the original ("#", "#/properties/...") are rewritten to point into
// anyOf[0]. The root keeps "type":"object", which MCP requires of an
// outputSchema.
//
// An empty or null original gives nil (the tool has no output schema). A
// schema OutputSchema already rewrote is returned unchanged. An original
// that is not a JSON object is an error.
func OutputSchema(original json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(original)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, nil
	}
	var schema map[string]any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&schema); err != nil || schema == nil {
		return nil, fmt.Errorf("mcpcore: output schema is not a JSON object: %s", short(trimmed))
	}
	if schema["$comment"] == rewrittenMarker {
		return append(json.RawMessage(nil), trimmed...), nil
	}
	root := map[string]any{"type": "object", "$comment": rewrittenMarker}
	for _, k := range []string{"$schema", "$id", "$defs", "definitions"} {
		if v, ok := schema[k]; ok {
			if k == "$defs" || k == "definitions" {
				v = rerefs(v)
			}
			root[k] = v
			delete(schema, k)
		}
	}
	for _, k := range []string{"title", "description"} {
		if v, ok := schema[k]; ok {
			root[k] = v
		}
	}
	inner := rerefs(schema).(map[string]any)
	var page, sum, chunk, text any
	for _, p := range []struct {
		dst *any
		src string
	}{{&page, pageEnvelope}, {&sum, summaryEnvelope}, {&chunk, chunkEnvelope}, {&text, textEnvelope}} {
		if err := json.Unmarshal([]byte(p.src), p.dst); err != nil {
			panic(err)
		}
	}
	root["anyOf"] = []any{inner, page, sum, chunk, text}
	return marshal(root)
}

// rerefs rewrites the local references of v that point into the original
// schema's root (other than $defs and definitions, which move to the new
// root) to point into anyOf/0.
func rerefs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				if s == "#" || (strings.HasPrefix(s, "#/") && !strings.HasPrefix(s, "#/$defs/") && !strings.HasPrefix(s, "#/definitions/")) {
					v[k] = "#/anyOf/0" + s[1:]
				}
				continue
			}
			v[k] = rerefs(x)
		}
	case []any:
		for i := range v {
			v[i] = rerefs(v[i])
		}
	}
	return v
}

func short(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
