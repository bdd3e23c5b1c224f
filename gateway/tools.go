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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxToolName is the longest tool name MCP allows.
const MaxToolName = 128

// maxDescription bounds a tool's description, in bytes.
const maxDescription = 2000

// maxRefHops bounds the references followed to reach one parameter,
// request body, response or path item.
const maxRefHops = 32

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
	bodyArg  string  // the argument that holds the request body; "" for none
	bodyType string  // the request body's media type
	// mediaArg is the argument that picks the body's media type among
	// mediaTypes when the document declares several the gateway sends;
	// "" for none (bodyType it is).
	mediaArg   string
	mediaTypes []string
	// resource: the operation is served as an MCP resource (a template
	// when it has path parameters), not a tool.
	resource bool
	input    map[string]any
	output   bool           // the tool has an output schema: results carry structured content
	outputs  map[string]any // the output schema, for checking answers
}

// readable reports whether op can be an MCP resource: a GET whose only
// required arguments are its path parameters (which a URI template
// fills).
func (op *Operation) readable() bool {
	if op.Method != http.MethodGet {
		return false
	}
	required, _ := op.input["required"].([]string)
	for _, arg := range required {
		if !slices.ContainsFunc(op.params, func(p param) bool { return p.arg == arg && p.in == "path" }) {
			return false
		}
	}
	return true
}

// param is one parameter of an operation and the tool argument that holds it.
type param struct {
	arg  string // the argument's name
	name string // the parameter's name in the request
	in   string // path, query, header or cookie
	// style and explode are the parameter's serialization (OpenAPI's
	// defaults filled in: simple for path and header, form for query and
	// cookie; explode for form only).
	style   string
	explode bool
}

// Skip is an operation of the document that [New] does not serve, and why.
type Skip struct {
	// Method and Path are the operation's method (upper case) and path
	// template.
	Method, Path string
	// Reason says what the gateway cannot serve.
	Reason string
}

// reservedNames returns the names tool names must not take: the tools
// ctxfit adds.
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
// An operation the gateway cannot serve (a parameter whose reference does
// not resolve, a required request body of no media type it can send) is
// left out; [New] logs each with its reason.
//
// An entry of include selects an operation when it equals its operationId,
// its tool name or one of its tags, or, when it starts with "/", when it
// matches the path template with [path.Match] ("/bookings/*" selects
// "/bookings/{id}"), or when it is "METHOD /path" with the method and path
// both matching. An entry that selects nothing is an error, so that a typo
// does not go unnoticed.
func Operations(doc *Document, include []string, reserved []string) ([]*Operation, error) {
	ops, _, err := operations(doc, routes{include: include}, reserved)
	return ops, err
}

// routes select and name the operations that become tools: see
// [Options.Include], [Options.Exclude] and [Options.Names].
type routes struct {
	include, exclude []string
	names            map[string]string
	// resources select the GET operations served as resources (see
	// [Options.Resources]).
	resources []string
}

func operations(doc *Document, r routes, reserved []string) ([]*Operation, []Skip, error) {
	include := r.include
	if doc == nil || doc.raw == nil {
		return nil, nil, fmt.Errorf("gateway: the document has no paths")
	}
	rawPaths, _ := doc.raw["paths"].(map[string]any)
	if len(rawPaths) == 0 {
		return nil, nil, fmt.Errorf("gateway: the document has no paths")
	}
	conv := schemaConverter{root: doc.raw}
	taken := reservedNames(reserved)
	used := make([]bool, len(include))
	excluded := make([]bool, len(r.exclude))
	renamed := map[string]bool{}
	mapped := make([]bool, len(r.resources))
	var ops []*Operation
	var skips []Skip
	paths := make([]string, 0, len(rawPaths))
	for p := range rawPaths {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		item, err := conv.resolve(rawPaths[p])
		if err != nil {
			skips = append(skips, Skip{Method: "*", Path: p, Reason: "path item: " + err.Error()})
			continue
		}
		for _, method := range methods {
			o, ok := item[strings.ToLower(method)].(map[string]any)
			if !ok {
				continue
			}
			info := opInfo{method: method, path: p, item: item, o: o}
			info.id, _ = o["operationId"].(string)
			info.tags = strings_(o["tags"])
			sel := len(include) == 0
			for i, inc := range include {
				if info.selectedBy(inc) {
					sel, used[i] = true, true
				}
			}
			for i, exc := range r.exclude {
				if info.selectedBy(exc) {
					sel, excluded[i] = false, true
				}
			}
			if !sel {
				continue
			}
			for _, key := range []string{info.id, toolName(info.id, method, p), method + " " + p} {
				if name, ok := r.names[key]; ok && key != "" {
					info.name, renamed[key] = name, true
					break
				}
			}
			op, reason := newOperation(conv, info, taken)
			if reason != "" {
				skips = append(skips, Skip{Method: method, Path: p, Reason: reason})
				continue
			}
			for i, res := range r.resources {
				if info.selectedBy(res) && op.readable() {
					op.resource, mapped[i] = true, true
				}
			}
			ops = append(ops, op)
		}
	}
	for i, inc := range include {
		if !used[i] {
			return nil, skips, fmt.Errorf("gateway: include %q selects no operation (give an operationId, a tag, a path pattern such as /items/* or METHOD /path)", inc)
		}
	}
	for i, exc := range r.exclude {
		if !excluded[i] {
			return nil, skips, fmt.Errorf("gateway: exclude %q selects no operation (give an operationId, a tag, a path pattern such as /items/* or METHOD /path)", exc)
		}
	}
	for i, res := range r.resources {
		if !mapped[i] {
			return nil, skips, fmt.Errorf("gateway: resource %q selects no GET operation whose only required arguments are path parameters (give an operationId, a tag, a path pattern such as /items/* or GET /path)", res)
		}
	}
	for key := range r.names {
		if !renamed[key] {
			return nil, skips, fmt.Errorf("gateway: the name for %q names no operation (give an operationId, a tool name or METHOD /path)", key)
		}
	}
	if len(ops) == 0 {
		if len(skips) > 0 {
			return nil, skips, fmt.Errorf("gateway: the gateway can serve none of the document's operations (%s %s: %s)", skips[0].Method, skips[0].Path, skips[0].Reason)
		}
		return nil, skips, fmt.Errorf("gateway: the document has no operations")
	}
	return ops, skips, nil
}

// opInfo is an operation of the document as read: where it is and its
// decoded JSON.
type opInfo struct {
	method, path string
	item, o      map[string]any
	id           string
	tags         []string
	name         string // the tool's name given by Options.Names; "" for the document's
}

// strings_ returns v's strings when it is a list.
func strings_(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// selectedBy reports whether the include entry inc selects the operation.
func (info opInfo) selectedBy(inc string) bool {
	inc = strings.TrimSpace(inc)
	if inc == "" {
		return false
	}
	if m, pat, ok := strings.Cut(inc, " "); ok && strings.HasPrefix(strings.TrimSpace(pat), "/") {
		return strings.EqualFold(m, info.method) && matchPath(strings.TrimSpace(pat), info.path)
	}
	if strings.HasPrefix(inc, "/") {
		return matchPath(inc, info.path)
	}
	if inc == info.id || inc == toolName(info.id, info.method, info.path) {
		return true
	}
	return slices.Contains(info.tags, inc)
}

func matchPath(pattern, p string) bool {
	ok, err := path.Match(pattern, p)
	return err == nil && ok
}

// resolve returns v, a map, with its local references followed.
func (c schemaConverter) resolve(v any) (map[string]any, error) {
	for range maxRefHops {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not an object")
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, nil
		}
		t, found := c.target(ref)
		if !found {
			if !strings.HasPrefix(ref, "#") {
				return nil, fmt.Errorf("external reference %q was not read (see the warnings at start-up)", ref)
			}
			return nil, fmt.Errorf("reference %q points to nothing in the document", ref)
		}
		v = t
	}
	return nil, fmt.Errorf("more than %d references in a row", maxRefHops)
}

// newOperation builds the operation's tool, or says why it cannot.
func newOperation(conv schemaConverter, info opInfo, taken map[string]bool) (*Operation, string) {
	method, p, o := info.method, info.path, info.o
	op := &Operation{Method: method, Path: p, ID: info.id, Tags: info.tags}

	props := map[string]any{}
	var required []string
	args := map[string]bool{}
	prs, reason := conv.mergeParams(info.item["parameters"], o["parameters"])
	if reason != "" {
		return nil, reason
	}
	// A path template's parameter the document does not declare is a
	// required string.
	declared := map[string]bool{}
	for _, pr := range prs {
		if str(pr, "in") == "path" {
			declared[str(pr, "name")] = true
		}
	}
	for _, name := range templateNames(p) {
		if !declared[name] {
			prs = append(prs, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
			declared[name] = true
		}
	}
	slices.SortStableFunc(prs, func(a, b map[string]any) int { return locationRank(str(a, "in")) - locationRank(str(b, "in")) })
	for _, pr := range prs {
		name, in := str(pr, "name"), str(pr, "in")
		if in == "path" && !slices.Contains(templateNames(p), name) {
			continue // not in the template: nothing to fill
		}
		arg := name
		if args[arg] {
			arg = in + "_" + name
		}
		args[arg] = true
		schema := conv.convert(paramSchema(pr))
		if d := str(pr, "description"); d != "" {
			if _, has := schema["description"]; !has {
				schema["description"] = d
			}
		}
		props[arg] = schema
		if req, _ := pr["required"].(bool); req || in == "path" {
			required = append(required, arg)
		}
		style := str(pr, "style")
		if style == "" {
			style = map[string]string{"path": "simple", "header": "simple", "query": "form", "cookie": "form"}[in]
		}
		explode := style == "form"
		if e, ok := pr["explode"].(bool); ok {
			explode = e
		}
		op.params = append(op.params, param{arg: arg, name: name, in: in, style: style, explode: explode})
	}
	if rbRaw, ok := o["requestBody"]; ok {
		rb, err := conv.resolve(rbRaw)
		if err != nil {
			return nil, "request body: " + err.Error()
		}
		content, _ := rb["content"].(map[string]any)
		types := bodyMedias(content)
		var mt string
		var media map[string]any
		if len(types) > 0 {
			mt, media = types[0], content[types[0]].(map[string]any)
		}
		rbRequired, _ := rb["required"].(bool)
		switch {
		case media != nil:
			op.bodyArg = "body"
			for i := 0; args[op.bodyArg]; i++ {
				op.bodyArg = "requestBody" + strings.Repeat("_", i)
			}
			op.bodyType = mt
			schema := conv.convert(media["schema"])
			if len(types) > 1 {
				schema = bodySchemas(conv, content, types)
				op.mediaArg = "contentType"
				for i := 0; args[op.mediaArg] || op.mediaArg == op.bodyArg; i++ {
					op.mediaArg = op.bodyArg + "ContentType" + strings.Repeat("_", i)
				}
				op.mediaTypes = types
				props[op.mediaArg] = map[string]any{"type": "string", "enum": types, "default": mt,
					"description": fmt.Sprintf("The media type %s is sent as (the operation takes %s); default %s.", op.bodyArg, strings.Join(types, ", "), mt)}
			}
			if d := str(rb, "description"); d != "" {
				if _, has := schema["description"]; !has {
					schema["description"] = d
				}
			}
			props[op.bodyArg] = schema
			if rbRequired {
				required = append(required, op.bodyArg)
			}
		case rbRequired:
			types := make([]string, 0, len(content))
			for k := range content {
				types = append(types, k)
			}
			slices.Sort(types)
			return nil, fmt.Sprintf("the request body is required and none of its media types (%s) is one the gateway sends (JSON, form, multipart or text)", strings.Join(types, ", "))
		}
	}
	op.input = map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		op.input["required"] = required
	}
	input, err := json.Marshal(op.input)
	if err != nil {
		return nil, "input schema: " + err.Error()
	}

	name := toolName(info.id, method, p)
	if info.name != "" {
		name = toolName(info.name, method, p)
	}
	name = uniqueName(name, taken)
	taken[name] = true
	tool := &mcp.Tool{
		Name:        name,
		Title:       strings.TrimSpace(str(o, "summary")),
		Description: description(method, p, str(o, "summary"), str(o, "description"), info.tags),
		InputSchema: json.RawMessage(input),
		Annotations: annotations(method),
	}
	if out := outputSchema(conv, o); out != nil {
		b, err := json.Marshal(out)
		if err == nil {
			tool.OutputSchema = json.RawMessage(b)
			op.output, op.outputs = true, out
		}
	}
	op.Tool = tool
	return op, ""
}

// templateNames returns the names of a path template's parameters.
func templateNames(p string) []string {
	var names []string
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			return names
		}
		names = append(names, p[i+1:i+j])
		p = p[i+j+1:]
	}
}

// mergeParams returns the operation's parameters (own) with the path
// item's (common) that it does not override (same name and location), or
// why they cannot be read.
func (c schemaConverter) mergeParams(common, own any) ([]map[string]any, string) {
	var out []map[string]any
	for _, list := range []any{own, common} {
		items, _ := list.([]any)
		for _, raw := range items {
			pr, err := c.resolve(raw)
			if err != nil {
				return nil, "parameter: " + err.Error()
			}
			name, in := str(pr, "name"), str(pr, "in")
			if name == "" {
				return nil, "a parameter has no name"
			}
			if !slices.Contains([]string{"path", "query", "header", "cookie"}, in) {
				return nil, fmt.Sprintf("parameter %q is in %q: want path, query, header or cookie", name, in)
			}
			if slices.ContainsFunc(out, func(p map[string]any) bool { return str(p, "name") == name && str(p, "in") == in }) {
				continue
			}
			out = append(out, pr)
		}
	}
	return out, ""
}

func locationRank(in string) int {
	switch in {
	case "path":
		return 0
	case "query":
		return 1
	default:
		return 2
	}
}

// paramSchema returns a parameter's schema, or that of its JSON content.
func paramSchema(p map[string]any) any {
	if s, ok := p["schema"]; ok {
		return s
	}
	content, _ := p["content"].(map[string]any)
	if _, m := jsonMedia(content); m != nil {
		return m["schema"]
	}
	return nil
}

// jsonMedia returns the JSON media type of content (application/json or
// any +json type), or nil.
func jsonMedia(content map[string]any) (string, map[string]any) {
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if m, ok := content[k].(map[string]any); ok && isJSON(k) {
			return k, m
		}
	}
	return "", nil
}

// bodyMedias returns the media types of a request body the gateway sends,
// the default first: JSON (application/json first, then merge-patch, then
// any +json), a form, multipart or text; none when there is none.
func bodyMedias(content map[string]any) []string {
	keys := make([]string, 0, len(content))
	for k, v := range content {
		if _, ok := v.(map[string]any); ok && mediaRank(k) < len(mediaOrder) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if r := mediaRank(a) - mediaRank(b); r != 0 {
			return r
		}
		return strings.Compare(a, b)
	})
	return keys
}

// bodySchemas returns the schema of a body that may be sent as any of
// types: their one schema when they share it, else anyOf the distinct
// ones (a JSON Patch is an array where a merge patch is an object).
func bodySchemas(conv schemaConverter, content map[string]any, types []string) map[string]any {
	var distinct []any
	seen := map[string]bool{}
	for _, t := range types {
		m, _ := content[t].(map[string]any)
		s := conv.convert(m["schema"])
		b, _ := json.Marshal(s)
		if !seen[string(b)] {
			seen[string(b)] = true
			distinct = append(distinct, s)
		}
	}
	if len(distinct) == 1 {
		return distinct[0].(map[string]any)
	}
	return map[string]any{"anyOf": distinct}
}

// mediaOrder ranks the request bodies the gateway sends.
var mediaOrder = []string{"application/json", "application/merge-patch+json", "+json", "application/x-www-form-urlencoded",
	"multipart/form-data", "text/"}

func mediaRank(mediaType string) int {
	mt, _, _ := strings.Cut(strings.ToLower(mediaType), ";")
	mt = strings.TrimSpace(mt)
	for i, o := range mediaOrder {
		if mt == o || strings.HasPrefix(o, "+") && strings.HasSuffix(mt, o) || strings.HasSuffix(o, "/") && strings.HasPrefix(mt, o) {
			return i
		}
	}
	return len(mediaOrder)
}

func isJSON(mediaType string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(mediaType), ";")
	mt = strings.TrimSpace(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// outputSchema returns the schema of the operation's first JSON 2xx
// response (200, 201, ... then 2XX) when it is an object, else nil: MCP
// output schemas are objects.
func outputSchema(conv schemaConverter, o map[string]any) map[string]any {
	responses, _ := o["responses"].(map[string]any)
	codes := make([]string, 0, len(responses))
	for k := range responses {
		codes = append(codes, k)
	}
	slices.SortFunc(codes, func(a, b string) int { return strings.Compare(strings.ToUpper(a), strings.ToUpper(b)) })
	for _, code := range codes {
		if len(code) != 3 || code[0] != '2' {
			continue
		}
		r, err := conv.resolve(responses[code])
		if err != nil {
			continue
		}
		content, _ := r["content"].(map[string]any)
		_, media := jsonMedia(content)
		if media == nil || media["schema"] == nil {
			continue
		}
		s := conv.convert(media["schema"])
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
// method, path and tags, e.g. "List bookings. Filters by status. (GET
// /bookings; tags: bookings)".
func description(method, p, summary, desc string, tags []string) string {
	var parts []string
	for _, s := range []string{summary, desc} {
		s = strings.TrimSpace(s)
		if s != "" && !slices.Contains(parts, s) {
			if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
				s += "."
			}
			parts = append(parts, s)
		}
	}
	call := "(" + method + " " + p + ")"
	if len(tags) > 0 {
		call = "(" + method + " " + p + "; tags: " + strings.Join(tags, ", ") + ")"
	}
	if len(parts) == 0 {
		if len(tags) > 0 {
			return "Calls the API: " + method + " " + p + " (tags: " + strings.Join(tags, ", ") + ")."
		}
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
