package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxToolName is the longest tool name MCP allows.
const MaxToolName = 128

// maxDescription bounds a tool's description, in bytes.
const maxDescription = 2000

// methods are the HTTP methods an operation can have, in the order tools
// are listed for one path.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodTrace}

// Operation is one operation of the document and the tool it became.
//
// An Operation is immutable once [Operations] returned it; it is safe for
// concurrent use.
type Operation struct {
	// Tool is the MCP tool: its name, description, schemas and
	// annotations.
	Tool *mcp.Tool
	// Method and Path are the operation's HTTP method (upper case) and
	// path template, as in the document ("/bookings/{id}").
	Method, Path string
	// ID is the operationId, empty when the document has none.
	ID string
	// Tags are the operation's tags.
	Tags []string

	params   []param // by argument name, in the input schema's order
	bodyArg  string  // the argument that holds the JSON request body; "" for none
	bodyType string  // the request body's media type
	input    map[string]any
	output   bool // the tool has an output schema: results carry structured content
}

// param is one parameter of an operation and the tool argument that holds it.
type param struct {
	arg  string // the argument's name
	name string // the parameter's name in the request
	in   string // path, query or header
	// explode: an array query parameter is sent as repeated name=value
	// pairs (form style, the default), else as one comma-separated value.
	explode bool
}

// reserved are names tool names must not take: the tools ctxfit adds.
func reservedNames(extra []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range extra {
		m[n] = true
	}
	return m
}

// Operations returns one [Operation] per operation of doc that include
// selects (all of them when include is empty), in path order, then method
// order (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE). Tool names
// are unique and never one of reserved (the names of ctxfit's own tools).
//
// An entry of include selects an operation when it equals its operationId,
// its tool name or one of its tags, or, when it starts with "/", when it
// matches the path template with [path.Match] ("/bookings/*" selects
// "/bookings/{id}"), or when it is "METHOD /path" with the method and path
// both matching. An entry that selects nothing is an error, so that a typo
// does not go unnoticed.
func Operations(doc *openapi3.T, include []string, reserved []string) ([]*Operation, error) {
	if doc == nil || doc.Paths == nil {
		return nil, fmt.Errorf("gateway: the document has no paths")
	}
	conv := schemaConverter{}
	if doc.Components != nil {
		conv.components = doc.Components.Schemas
	}
	taken := reservedNames(reserved)
	used := make([]bool, len(include))
	var ops []*Operation
	paths := doc.Paths.Keys()
	slices.Sort(paths)
	for _, p := range paths {
		item := doc.Paths.Value(p)
		if item == nil {
			continue
		}
		byMethod := item.Operations()
		for _, method := range methods {
			o := byMethod[method]
			if o == nil {
				continue
			}
			sel := len(include) == 0
			for i, inc := range include {
				if selects(inc, method, p, o) {
					sel, used[i] = true, true
				}
			}
			if !sel {
				continue
			}
			op, err := newOperation(conv, method, p, item, o, taken)
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
	}
	for i, inc := range include {
		if !used[i] {
			return nil, fmt.Errorf("gateway: include %q selects no operation (give an operationId, a tag, a path pattern such as /items/* or METHOD /path)", inc)
		}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("gateway: the document has no operations")
	}
	return ops, nil
}

// selects reports whether the include entry inc selects the operation.
func selects(inc, method, p string, o *openapi3.Operation) bool {
	inc = strings.TrimSpace(inc)
	if inc == "" {
		return false
	}
	if m, pat, ok := strings.Cut(inc, " "); ok && strings.HasPrefix(strings.TrimSpace(pat), "/") {
		return strings.EqualFold(m, method) && matchPath(strings.TrimSpace(pat), p)
	}
	if strings.HasPrefix(inc, "/") {
		return matchPath(inc, p)
	}
	if inc == o.OperationID || inc == toolName(o.OperationID, method, p) {
		return true
	}
	return slices.Contains(o.Tags, inc)
}

func matchPath(pattern, p string) bool {
	ok, err := path.Match(pattern, p)
	return err == nil && ok
}

func newOperation(conv schemaConverter, method, p string, item *openapi3.PathItem, o *openapi3.Operation, taken map[string]bool) (*Operation, error) {
	op := &Operation{Method: method, Path: p, ID: o.OperationID, Tags: slices.Clone(o.Tags)}
	name := uniqueName(toolName(o.OperationID, method, p), taken)
	taken[name] = true

	props := map[string]any{}
	var required []string
	args := map[string]bool{}
	for _, pr := range mergeParams(item.Parameters, o.Parameters) {
		if pr.In == openapi3.ParameterInCookie {
			continue // not sent: cookies are the operator's, through headers
		}
		arg := pr.Name
		if args[arg] {
			arg = pr.In + "_" + pr.Name
		}
		args[arg] = true
		schema := conv.convert(paramSchema(pr))
		if pr.Description != "" {
			if _, has := schema["description"]; !has {
				schema["description"] = pr.Description
			}
		}
		props[arg] = schema
		if pr.Required || pr.In == openapi3.ParameterInPath {
			required = append(required, arg)
		}
		explode := true
		if pr.Explode != nil {
			explode = *pr.Explode
		}
		op.params = append(op.params, param{arg: arg, name: pr.Name, in: pr.In, explode: explode})
	}
	if rb := o.RequestBody; rb != nil && rb.Value != nil {
		if mt, media := jsonMedia(rb.Value.Content); media != nil {
			op.bodyArg = "body"
			for i := 0; args[op.bodyArg]; i++ {
				op.bodyArg = "requestBody" + strings.Repeat("_", i)
			}
			op.bodyType = mt
			schema := conv.convert(media.Schema)
			if rb.Value.Description != "" {
				if _, has := schema["description"]; !has {
					schema["description"] = rb.Value.Description
				}
			}
			props[op.bodyArg] = schema
			if rb.Value.Required {
				required = append(required, op.bodyArg)
			}
		}
	}
	op.input = map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		op.input["required"] = required
	}
	input, err := json.Marshal(op.input)
	if err != nil {
		return nil, fmt.Errorf("gateway: %s %s: input schema: %w", method, p, err)
	}

	tool := &mcp.Tool{
		Name:        name,
		Title:       strings.TrimSpace(o.Summary),
		Description: description(method, p, o),
		InputSchema: json.RawMessage(input),
		Annotations: annotations(method),
	}
	if out := outputSchema(conv, o); out != nil {
		b, err := json.Marshal(out)
		if err == nil {
			tool.OutputSchema = json.RawMessage(b)
			op.output = true
		}
	}
	op.Tool = tool
	return op, nil
}

// mergeParams returns the operation's parameters with the path item's that
// it does not override (same name and location), path parameters first,
// then query, then the others, each in the document's order.
func mergeParams(common, own openapi3.Parameters) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	for _, r := range own {
		if r != nil && r.Value != nil {
			out = append(out, r.Value)
		}
	}
	for _, r := range common {
		if r == nil || r.Value == nil {
			continue
		}
		if !slices.ContainsFunc(out, func(p *openapi3.Parameter) bool { return p.Name == r.Value.Name && p.In == r.Value.In }) {
			out = append(out, r.Value)
		}
	}
	// Path parameters first: they keep their names when another shares it.
	slices.SortStableFunc(out, func(a, b *openapi3.Parameter) int { return locationRank(a.In) - locationRank(b.In) })
	return out
}

func locationRank(in string) int {
	switch in {
	case openapi3.ParameterInPath:
		return 0
	case openapi3.ParameterInQuery:
		return 1
	default:
		return 2
	}
}

// paramSchema returns a parameter's schema, or that of its JSON content.
func paramSchema(p *openapi3.Parameter) *openapi3.SchemaRef {
	if p.Schema != nil {
		return p.Schema
	}
	if _, m := jsonMedia(p.Content); m != nil {
		return m.Schema
	}
	return nil
}

// jsonMedia returns the JSON media type of content (application/json or
// any +json type), or nil.
func jsonMedia(content openapi3.Content) (string, *openapi3.MediaType) {
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if isJSON(k) && content[k] != nil {
			return k, content[k]
		}
	}
	return "", nil
}

func isJSON(mediaType string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(mediaType), ";")
	mt = strings.TrimSpace(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// outputSchema returns the schema of the operation's first JSON 2xx
// response (200, 201, ... then 2XX) when it is an object, else nil: MCP
// output schemas are objects.
func outputSchema(conv schemaConverter, o *openapi3.Operation) map[string]any {
	if o.Responses == nil {
		return nil
	}
	codes := o.Responses.Keys()
	slices.SortFunc(codes, func(a, b string) int { return strings.Compare(strings.ToUpper(a), strings.ToUpper(b)) })
	for _, code := range codes {
		if len(code) != 3 || code[0] != '2' {
			continue
		}
		r := o.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		_, media := jsonMedia(r.Value.Content)
		if media == nil || media.Schema == nil {
			continue
		}
		s := conv.convert(media.Schema)
		if typeOf(s) != "object" {
			return nil
		}
		return s
	}
	return nil
}

// toolName makes a tool name of an operationId, or of the method and path
// when there is none: characters outside [A-Za-z0-9_.-] become "_", runs
// of "_" collapse, and the name is cut to [MaxToolName]; "operation" when
// nothing is left.
func toolName(id, method, p string) string {
	src := id
	if strings.TrimSpace(src) == "" {
		src = strings.ToLower(method) + "_" + strings.NewReplacer("{", "", "}", "").Replace(strings.Trim(p, "/"))
	}
	var b strings.Builder
	lastUnderscore := false
	for _, r := range src {
		ok := r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
		if !ok {
			r = '_'
		}
		if r == '_' && lastUnderscore {
			continue
		}
		lastUnderscore = r == '_'
		b.WriteRune(r)
	}
	name := strings.Trim(b.String(), "_")
	if name == "" {
		name = "operation"
	}
	if len(name) > MaxToolName {
		name = name[:MaxToolName]
	}
	return name
}

// uniqueName returns name, or name with the smallest suffix _2, _3, ...
// that no taken name has, within [MaxToolName].
func uniqueName(name string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	for i := 2; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		base := name
		if len(base)+len(suffix) > MaxToolName {
			base = base[:MaxToolName-len(suffix)]
		}
		if !taken[base+suffix] {
			return base + suffix
		}
	}
}

// description is the summary and the description of the operation with its
// method and path, e.g. "List bookings. Filters by status. (GET /bookings)".
func description(method, p string, o *openapi3.Operation) string {
	var parts []string
	for _, s := range []string{o.Summary, o.Description} {
		s = strings.TrimSpace(s)
		if s != "" && !slices.Contains(parts, s) {
			if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
				s += "."
			}
			parts = append(parts, s)
		}
	}
	call := "(" + method + " " + p + ")"
	if len(parts) == 0 {
		return "Calls the API: " + method + " " + p + "."
	}
	text := strings.Join(parts, " ")
	if len(text)+len(call)+1 > maxDescription {
		text = shorten(text, maxDescription-len(call)-1)
	}
	return text + " " + call
}

// annotations says what running the tool does, from the HTTP method's
// semantics: GET and HEAD read only, PUT idempotent, DELETE destructive.
// Every tool reaches an outside system (openWorldHint).
func annotations(method string) *mcp.ToolAnnotations {
	open := true
	a := &mcp.ToolAnnotations{OpenWorldHint: &open}
	switch method {
	case http.MethodGet, http.MethodHead:
		a.ReadOnlyHint = true
	case http.MethodPut:
		a.IdempotentHint = true
	case http.MethodDelete:
		destructive := true
		a.DestructiveHint = &destructive
	}
	return a
}

// shorten cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := max(n-len(mark), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
