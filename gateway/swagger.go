package gateway

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// convertSwagger converts a Swagger 2.0 document (decoded JSON or YAML) to
// OpenAPI 3.0, as much of it as the gateway reads: the servers from host,
// basePath and schemes; definitions, parameters, responses and
// securityDefinitions into components; each operation's body and formData
// parameters into its requestBody (consumes giving the media types), the
// others into OpenAPI 3 parameters (collectionFormat into style and
// explode); each response's schema into content (produces giving the media
// types); and every local reference to where its target moved. It is
// written here on the decoded values rather than with
// github.com/getkin/kin-openapi's openapi2conv, whose openapi3 package
// brings in a JSON Schema compiler that compiles its meta-schemas at
// package initialisation, which every ctxfit subcommand then paid. The
// document is not changed.
func convertSwagger(raw map[string]any) (map[string]any, error) {
	c := swaggerConverter{
		consumes:   stringsOf(raw["consumes"]),
		produces:   stringsOf(raw["produces"]),
		bodyParams: map[string]bool{},
	}
	out := map[string]any{"openapi": "3.0.3"}
	for _, k := range []string{"info", "tags", "externalDocs", "security"} {
		if v, ok := raw[k]; ok {
			out[k] = c.refs(v)
		}
	}
	for k, v := range raw {
		if strings.HasPrefix(k, "x-") {
			out[k] = v
		}
	}
	if s := swaggerServers(raw); s != nil {
		out["servers"] = s
	}
	comps := map[string]any{}
	if defs, ok := raw["definitions"].(map[string]any); ok {
		comps["schemas"] = c.schemaMap(defs)
	}
	if params, ok := raw["parameters"].(map[string]any); ok {
		ps, bodies := map[string]any{}, map[string]any{}
		for name, p := range params {
			if pm, ok := p.(map[string]any); ok && (pm["in"] == "body" || pm["in"] == "formData") {
				c.bodyParams[name] = true
			}
		}
		for name, p := range params {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if c.bodyParams[name] {
				bodies[name] = c.requestBody([]map[string]any{pm}, c.consumes)
			} else {
				ps[name] = c.parameter(pm)
			}
		}
		if len(ps) > 0 {
			comps["parameters"] = ps
		}
		if len(bodies) > 0 {
			comps["requestBodies"] = bodies
		}
	}
	if resps, ok := raw["responses"].(map[string]any); ok {
		rs := map[string]any{}
		for name, r := range resps {
			rs[name] = c.response(r, c.produces)
		}
		comps["responses"] = rs
	}
	if sec, ok := raw["securityDefinitions"].(map[string]any); ok {
		ss := map[string]any{}
		for name, s := range sec {
			if sm, ok := s.(map[string]any); ok {
				ss[name] = securityScheme(sm)
			}
		}
		comps["securitySchemes"] = ss
	}
	if len(comps) > 0 {
		out["components"] = comps
	}
	paths := map[string]any{}
	if ps, ok := raw["paths"].(map[string]any); ok {
		for p, item := range ps {
			if im, ok := item.(map[string]any); ok {
				paths[p] = c.pathItem(im)
			}
		}
	}
	out["paths"] = paths
	return out, nil
}

// swaggerConverter holds what converting one document needs.
type swaggerConverter struct {
	consumes, produces []string // the document's defaults
	// bodyParams are the names of the document's shared body and formData
	// parameters, whose references become references to request bodies.
	bodyParams map[string]bool
}

// swaggerServers returns the servers of the document's API: one per scheme
// (https when it names none), in its order; its base path alone when it
// names no host.
func swaggerServers(raw map[string]any) []any {
	host, _ := raw["host"].(string)
	base, _ := raw["basePath"].(string)
	if host == "" {
		if base == "" {
			return nil
		}
		return []any{map[string]any{"url": base}}
	}
	if base == "" {
		base = "/"
	}
	schemes := stringsOf(raw["schemes"])
	if len(schemes) == 0 {
		schemes = []string{"https"}
	}
	var out []any
	for _, s := range schemes {
		out = append(out, map[string]any{"url": (&url.URL{Scheme: s, Host: host, Path: base}).String()})
	}
	return out
}

var swaggerMethods = []string{"get", "put", "post", "delete", "options", "head", "patch"}

func (c swaggerConverter) pathItem(item map[string]any) map[string]any {
	out := map[string]any{}
	common := c.paramList(item["parameters"])
	for k, v := range item {
		switch {
		case k == "parameters":
		case slices.Contains(swaggerMethods, k):
			if op, ok := v.(map[string]any); ok {
				out[k] = c.operation(op, common)
			}
		default:
			out[k] = c.refs(v)
		}
	}
	return out
}

// paramList returns the parameters of a list, each resolved one level when
// it is a reference to a shared body or formData parameter (those become
// part of a request body, not parameters).
func (c swaggerConverter) paramList(v any) []map[string]any {
	var out []map[string]any
	for _, p := range asList(v) {
		if pm, ok := p.(map[string]any); ok {
			out = append(out, pm)
		}
	}
	return out
}

func (c swaggerConverter) operation(op map[string]any, common []map[string]any) map[string]any {
	out := map[string]any{}
	consumes, produces := c.consumes, c.produces
	if v, ok := op["consumes"]; ok {
		consumes = stringsOf(v)
	}
	if v, ok := op["produces"]; ok {
		produces = stringsOf(v)
	}
	// An operation's parameter overrides the path's of the same name and
	// location.
	own := c.paramList(op["parameters"])
	all := slices.Clone(own)
	for _, p := range common {
		if !slices.ContainsFunc(own, func(o map[string]any) bool { return o["name"] == p["name"] && o["in"] == p["in"] }) {
			all = append(all, p)
		}
	}
	var params []any
	var body []map[string]any
	for _, p := range all {
		if ref, ok := p["$ref"].(string); ok {
			name, isParam := strings.CutPrefix(ref, "#/parameters/")
			if isParam && c.bodyParams[name] {
				out["requestBody"] = map[string]any{"$ref": "#/components/requestBodies/" + name}
				continue
			}
			params = append(params, map[string]any{"$ref": c.ref(ref)})
			continue
		}
		if p["in"] == "body" || p["in"] == "formData" {
			body = append(body, p)
			continue
		}
		params = append(params, c.parameter(p))
	}
	if len(params) > 0 {
		out["parameters"] = params
	}
	if len(body) > 0 {
		out["requestBody"] = c.requestBody(body, consumes)
	}
	for k, v := range op {
		switch k {
		case "parameters", "consumes", "produces", "schemes":
		case "responses":
			rs := map[string]any{}
			if m, ok := v.(map[string]any); ok {
				for code, r := range m {
					rs[code] = c.response(r, produces)
				}
			}
			out[k] = rs
		default:
			out[k] = c.refs(v)
		}
	}
	return out
}

// parameterFields are the fields a Swagger 2.0 non-body parameter shares
// with a schema.
var parameterFields = []string{"type", "format", "items", "default", "maximum", "exclusiveMaximum", "minimum",
	"exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "enum", "multipleOf"}

// parameter converts a path, query, header or formData parameter.
func (c swaggerConverter) parameter(p map[string]any) map[string]any {
	out := map[string]any{}
	schema := map[string]any{}
	for k, v := range p {
		switch {
		case slices.Contains(parameterFields, k):
			schema[k] = c.schema(v, k)
		case k == "collectionFormat", k == "allowEmptyValue" && p["in"] != "query":
		default:
			out[k] = c.refs(v)
		}
	}
	if schema["type"] == "file" {
		schema["type"], schema["format"] = "string", "binary"
	}
	if len(schema) > 0 {
		out["schema"] = schema
	}
	switch cf, _ := p["collectionFormat"].(string); cf {
	case "multi":
		out["style"], out["explode"] = "form", true
	case "ssv":
		out["style"], out["explode"] = "spaceDelimited", false
	case "pipes":
		out["style"], out["explode"] = "pipeDelimited", false
	case "csv", "":
		if p["type"] == "array" {
			if p["in"] == "query" || p["in"] == "formData" {
				out["style"] = "form"
			} else {
				out["style"] = "simple"
			}
			out["explode"] = false
		}
	}
	return out
}

// requestBody converts an operation's body parameter, or its formData
// parameters, into a request body.
func (c swaggerConverter) requestBody(params []map[string]any, consumes []string) map[string]any {
	out := map[string]any{}
	if params[0]["in"] == "body" {
		p := params[0]
		if d, ok := p["description"]; ok {
			out["description"] = d
		}
		if r, _ := p["required"].(bool); r {
			out["required"] = true
		}
		var schema any = map[string]any{}
		if s, ok := p["schema"]; ok {
			schema = c.schema(s, "")
		}
		types := slices.DeleteFunc(slices.Clone(consumes), func(t string) bool {
			return t == "application/x-www-form-urlencoded" || t == "multipart/form-data"
		})
		if len(types) == 0 {
			types = []string{"application/json"}
		}
		content := map[string]any{}
		for _, t := range types {
			content[t] = map[string]any{"schema": schema}
		}
		out["content"] = content
		return out
	}
	props := map[string]any{}
	var required []any
	file := false
	for _, p := range params {
		name, _ := p["name"].(string)
		conv := c.parameter(p)
		s, _ := conv["schema"].(map[string]any)
		if s == nil {
			s = map[string]any{}
		}
		if d, ok := p["description"]; ok {
			s["description"] = d
		}
		if p["type"] == "file" {
			file = true
		}
		props[name] = s
		if r, _ := p["required"].(bool); r {
			required = append(required, name)
			out["required"] = true
		}
	}
	schema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		schema["required"] = required
	}
	t := "application/x-www-form-urlencoded"
	if file || slices.Contains(consumes, "multipart/form-data") && !slices.Contains(consumes, t) {
		t = "multipart/form-data"
	}
	out["content"] = map[string]any{t: map[string]any{"schema": schema}}
	return out
}

// response converts a response (or a reference to a shared one).
func (c swaggerConverter) response(r any, produces []string) any {
	rm, ok := r.(map[string]any)
	if !ok {
		return r
	}
	if ref, ok := rm["$ref"].(string); ok {
		return map[string]any{"$ref": c.ref(ref)}
	}
	out := map[string]any{}
	for k, v := range rm {
		switch k {
		case "schema", "examples":
		case "headers":
			hs := map[string]any{}
			if m, ok := v.(map[string]any); ok {
				for name, h := range m {
					if hm, ok := h.(map[string]any); ok {
						conv := c.parameter(hm)
						delete(conv, "style")
						delete(conv, "explode")
						hs[name] = conv
					}
				}
			}
			out[k] = hs
		default:
			out[k] = c.refs(v)
		}
	}
	if _, ok := out["description"]; !ok {
		out["description"] = ""
	}
	if s, ok := rm["schema"]; ok {
		types := produces
		if len(types) == 0 {
			types = []string{"application/json"}
		}
		schema := c.schema(s, "")
		content := map[string]any{}
		for _, t := range types {
			content[t] = map[string]any{"schema": schema}
		}
		out["content"] = content
	}
	return out
}

// schemaMap converts a map of schemas.
func (c swaggerConverter) schemaMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = c.schema(v, "")
	}
	return out
}

// schema converts a schema (field is the parameter field it is the value
// of, "" for a schema): type file becomes a binary string, x-nullable
// nullable, and references move.
func (c swaggerConverter) schema(v any, field string) any {
	switch field {
	case "", "items":
	default:
		return c.refs(v) // a value, not a schema
	}
	m, ok := v.(map[string]any)
	if !ok {
		return c.refs(v)
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		switch k {
		case "$ref":
			if s, ok := x.(string); ok {
				out[k] = c.ref(s)
				continue
			}
			out[k] = x
		case "x-nullable":
			out["nullable"] = x
		case "properties", "definitions":
			if pm, ok := x.(map[string]any); ok {
				out[k] = c.schemaMap(pm)
				continue
			}
			out[k] = x
		case "items", "additionalProperties", "not":
			out[k] = c.schema(x, "")
		case "allOf", "anyOf", "oneOf":
			var list []any
			for _, s := range asList(x) {
				list = append(list, c.schema(s, ""))
			}
			out[k] = list
		case "discriminator":
			if s, ok := x.(string); ok {
				out[k] = map[string]any{"propertyName": s}
				continue
			}
			out[k] = x
		default:
			out[k] = c.refs(x)
		}
	}
	if out["type"] == "file" {
		out["type"], out["format"] = "string", "binary"
	}
	return out
}

// refs returns v with its local references moved where OpenAPI 3 keeps
// their targets.
func (c swaggerConverter) refs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				out[k] = c.ref(s)
				continue
			}
			out[k] = c.refs(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.refs(e)
		}
		return out
	}
	return v
}

// ref returns where a local reference's target is in OpenAPI 3.
func (c swaggerConverter) ref(ref string) string {
	for from, to := range map[string]string{
		"#/definitions/":         "#/components/schemas/",
		"#/parameters/":          "#/components/parameters/",
		"#/responses/":           "#/components/responses/",
		"#/securityDefinitions/": "#/components/securitySchemes/",
	} {
		if rest, ok := strings.CutPrefix(ref, from); ok {
			if from == "#/parameters/" && c.bodyParams[strings.SplitN(rest, "/", 2)[0]] {
				return "#/components/requestBodies/" + rest
			}
			return to + rest
		}
	}
	return ref
}

// securityScheme converts a security definition.
func securityScheme(s map[string]any) map[string]any {
	out := maps.Clone(s)
	switch s["type"] {
	case "basic":
		out["type"], out["scheme"] = "http", "basic"
	case "oauth2":
		flow := map[string]any{"scopes": s["scopes"]}
		if flow["scopes"] == nil {
			flow["scopes"] = map[string]any{}
		}
		for _, k := range []string{"authorizationUrl", "tokenUrl"} {
			if v, ok := s[k]; ok {
				flow[k] = v
			}
		}
		name := map[string]string{"implicit": "implicit", "password": "password",
			"application": "clientCredentials", "accessCode": "authorizationCode"}[stringOf(s["flow"])]
		out = map[string]any{"type": "oauth2", "flows": map[string]any{name: flow}}
		if d, ok := s["description"]; ok {
			out["description"] = d
		}
	}
	return out
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

// stringsOf returns the strings of a list.
func stringsOf(v any) []string {
	var out []string
	for _, e := range asList(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
