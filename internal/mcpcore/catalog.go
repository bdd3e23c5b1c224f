package mcpcore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
)

// The tools of a budgeted catalog (see [Catalog]).
const (
	// FindTool searches the whole catalog: input {"query": "...",
	// "limit": N}.
	FindTool = "ctxfit_find_tools"
	// CallTool calls a tool the catalog does not list: input {"name":
	// "...", "arguments": {...}}.
	CallTool = "ctxfit_call_tool"
	// MetaDefinition is the _meta key of a trimmed tool definition: the
	// ctxfit://r/... uri that reads the whole definition, byte for byte
	// as the server listed it.
	MetaDefinition = "dev.ctxfit/definition"
)

// Descriptions of the catalog's tools, for their tools/list entries.
const (
	FindDescription = "Find a tool of this server: its tool list is larger than the context window allows, so only " +
		"some of its tools are listed. Pass words of what you want to do (names, descriptions, tags and paths are " +
		"searched); the best matches come back with their definitions. Call one with " + CallTool +
		" (or by its name once your client lists it)."
	CallDescription = "Call a tool of this server that the tool list does not show (find it with " + FindTool +
		"): pass its name and its arguments as its definition describes them. The result is the tool's own."
)

// Bounds of the catalog.
const (
	// defaultFindLimit and maxFindLimit bound the definitions a find
	// answers.
	defaultFindLimit = 10
	maxFindLimit     = 50
	// minToolBudget is the smallest per-tool budget: a trimmed
	// definition's name, link and a few words of description.
	minToolBudget = 300
	// catalogMisses is how many tools in a row that do not fit end the
	// filling of a budgeted list.
	catalogMisses = 32
	// maxNamesShown bounds the names a find lists of tools it did not
	// show.
	maxNamesShown = 20
)

// FindInputSchema returns the JSON schema of the find tool's input.
func FindInputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","minLength":1,"maxLength":500,"description":"Words of what you want to do, e.g. \"create issue\", or a tool's name, a tag or a path."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"Most definitions to answer (default 10)."}},` +
		`"required":["query"],"additionalProperties":false}`)
}

// CallInputSchema returns the JSON schema of the call tool's input.
func CallInputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","minLength":1,"description":"The name of the tool, as ` + FindTool + ` answered it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments, as its inputSchema describes them."}},` +
		`"required":["name"],"additionalProperties":false}`)
}

// FindInput is the decoded input of the find tool.
type FindInput struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

// CatalogTool is one tool of a server's tools/list, as a [Catalog]
// searches it.
type CatalogTool struct {
	// Definition is the tool's tools/list entry, as the whole list serves
	// it.
	Definition json.RawMessage
	// Tags are the tool's tags (an OpenAPI operation's), searched and
	// matched by the catalogTools setting. Nil means none.
	Tags []string
	// Path is where the tool goes, searched: "GET /repos/{owner}/{repo}"
	// for an API operation. Empty means none.
	Path string
}

// ToolUsage counts the calls of each tool, so that a budgeted catalog
// lists the tools called most first.
//
// The zero ToolUsage is ready to use. It is safe for concurrent use and
// must not be copied after first use.
type ToolUsage struct {
	mu sync.Mutex
	n  map[string]int
}

// maxUsage bounds the tools a ToolUsage counts.
const maxUsage = 4096

// Add counts a call of the tool named name.
func (u *ToolUsage) Add(name string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n == nil || (len(u.n) >= maxUsage && u.n[name] == 0) {
		u.n = map[string]int{}
	}
	u.n[name]++
}

// counts returns a copy of the counts.
func (u *ToolUsage) counts() map[string]int {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[string]int, len(u.n))
	for k, v := range u.n {
		out[k] = v
	}
	return out
}

// catalogEntry is one tool of a catalog, read.
type catalogEntry struct {
	def                json.RawMessage
	name, title, descr string
	tags               []string
	path               string
	props              []string // the input schema's property names
	own                bool     // one of ctxfit's tools
}

// Catalog is a server's whole tools/list and what the proxy and the
// gateway serve of it to a model: the list unchanged when it is within
// the catalog budget (the setting catalogBudget, by default the hard
// cap), else a budgeted list ([Catalog.List]): ctxfit's tools,
// [FindTool], [CallTool] and the most useful tools that fit, each
// definition within the per-tool budget (toolBudget), trimmed with a
// ctxfit://r/... link to the whole when it is longer. [Catalog.Find]
// searches every tool, and [Catalog.CallInput] checks a call of one.
//
// A Catalog is immutable once [NewCatalog] returned it (the budgets are
// those of the settings at that time) and safe for concurrent use.
type Catalog struct {
	s          *Shaper
	entries    []catalogEntry
	byName     map[string]int
	usage      *ToolUsage
	pins       []string
	budget     int // < 0: never budgeted
	toolBudget int
	over       bool
}

// NewCatalog reads tools, a server's whole tools/list (ctxfit's own tools,
// named as s.Names says, among them; entries named [FindTool] or
// [CallTool] are left out), under the settings of s's Guard, and counts
// whether the list is over the catalog budget. usage ranks the tools of a
// budgeted list (nil: no counts). An entry that is not a JSON object with
// a name is kept in the list and never searched.
func NewCatalog(s *Shaper, tools []CatalogTool, usage *ToolUsage) *Catalog {
	cfg := s.Guard.Config()
	hardCap := cmp.Or(cfg.HardCap, max(ctxfit.DefaultHardCap, cfg.Threshold))
	c := &Catalog{s: s, byName: map[string]int{}, usage: usage, pins: slices.Clone(cfg.CatalogTools)}
	c.budget = cmp.Or(cfg.CatalogBudget, hardCap)
	c.toolBudget = cfg.ToolBudget
	if c.toolBudget == 0 {
		c.toolBudget = max(cmp.Or(max(c.budget, 0), hardCap)/8, minToolBudget)
	}
	for _, t := range tools {
		e := readEntry(t)
		if e.name == FindTool || e.name == CallTool {
			continue
		}
		e.own = e.name != "" && s.Names.Own(e.name)
		if _, dup := c.byName[e.name]; !dup && e.name != "" {
			c.byName[e.name] = len(c.entries)
		}
		c.entries = append(c.entries, e)
	}
	if c.budget >= 0 {
		defs := make([]json.RawMessage, len(c.entries))
		for i, e := range c.entries {
			defs[i] = e.def
		}
		c.over = budget.Exceeds(s.exact(), string(listJSON(defs)), c.budget)
	}
	return c
}

// readEntry reads the name, title, description and input properties of a
// definition.
func readEntry(t CatalogTool) catalogEntry {
	e := catalogEntry{def: t.Definition, tags: t.Tags, path: t.Path}
	var head struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
	}
	if json.Unmarshal(t.Definition, &head) != nil {
		return e
	}
	e.name, e.title, e.descr = head.Name, head.Title, head.Description
	for p := range head.InputSchema.Properties {
		e.props = append(e.props, p)
	}
	slices.Sort(e.props)
	return e
}

// listJSON is a tools/list result of defs: {"tools":[...]}.
func listJSON(defs []json.RawMessage) []byte {
	n := len(`{"tools":[]}`) + len(defs)
	for _, d := range defs {
		n += len(d)
	}
	b := bytes.NewBuffer(make([]byte, 0, n))
	b.WriteString(`{"tools":[`)
	for i, d := range defs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(d)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// Budgeted reports whether the whole list is over the catalog budget, so
// that [Catalog.List] is to be served instead of it.
func (c *Catalog) Budgeted() bool { return c.over }

// Budget is the catalog budget in tokens (negative: none), and ToolBudget
// the per-tool budget.
func (c *Catalog) Budget() int { return c.budget }

// ToolBudget is the token count of one definition in a budgeted list or a
// find's answer.
func (c *Catalog) ToolBudget() int { return c.toolBudget }

// Has reports whether the catalog has a tool of that name, other than
// ctxfit's own.
func (c *Catalog) Has(name string) bool {
	i, ok := c.byName[name]
	return ok && !c.entries[i].own
}

// FindAndCallTools returns the definitions of the catalog's own tools,
// [FindTool] and [CallTool], as a budgeted list holds them.
func FindAndCallTools() []json.RawMessage {
	find, _ := marshal(map[string]any{"name": FindTool, "title": "Find a tool of this server",
		"description": FindDescription, "inputSchema": FindInputSchema(),
		"annotations": map[string]any{"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}})
	call, _ := marshal(map[string]any{"name": CallTool, "title": "Call a tool found with " + FindTool,
		"description": CallDescription, "inputSchema": CallInputSchema()})
	return []json.RawMessage{find, call}
}

// List returns the tools of the budgeted list, as a tools/list result's
// "tools" holds them, for a session whose cursors and links are bound to
// subject: ctxfit's tools and [FindAndCallTools] always, then, while they fit
// the catalog budget (the whole {"tools":[...]} by exact count): the tools
// in found (those the session found, first the latest), the tools the
// catalogTools setting names (by name or tag, in the setting's order), the
// tools called most, and
// the others in the order of the list. A definition over the per-tool
// budget is trimmed, with a link to the whole. Its error, only when a link
// cannot be kept (the store is unavailable), is one [ErrorOf] reports.
func (c *Catalog) List(ctx context.Context, subject string, found []string) ([]json.RawMessage, error) {
	counter := c.s.exact()
	var out []json.RawMessage
	for _, e := range c.entries {
		if e.own {
			out = append(out, e.def)
		}
	}
	out = append(out, FindAndCallTools()...)
	essentials := len(out)
	used := budget.CountUpTo(counter, string(listJSON(out)), max(c.budget, 0)+1)
	misses := 0
	for _, i := range c.rank(found) {
		room := c.budget - used - 1 // the comma
		if room < 16 || misses >= catalogMisses {
			break
		}
		def, n, err := c.fit(ctx, subject, i, min(c.toolBudget, room))
		if err != nil {
			return nil, err
		}
		if def == nil || n > room {
			misses++
			continue
		}
		misses = 0
		out = append(out, def)
		used += n + 1
	}
	// The sum of the parts' counts is near the count of the whole, not
	// equal to it: the whole decides.
	for len(out) > essentials && budget.Exceeds(counter, string(listJSON(out)), c.budget) {
		out = out[:len(out)-1]
	}
	return out, nil
}

// rank returns the indexes of the tools other than ctxfit's in the order
// a budgeted list takes them.
func (c *Catalog) rank(found []string) []int {
	seen := make([]bool, len(c.entries))
	var order []int
	take := func(i int) {
		if !seen[i] && !c.entries[i].own && c.entries[i].name != "" {
			seen[i] = true
			order = append(order, i)
		}
	}
	for _, name := range found {
		if i, ok := c.byName[name]; ok {
			take(i)
		}
	}
	for _, p := range c.pins {
		for i, e := range c.entries {
			if e.name == p || slices.Contains(e.tags, p) {
				take(i)
			}
		}
	}
	counts := c.usage.counts()
	var called []int
	for i, e := range c.entries {
		if counts[e.name] > 0 {
			called = append(called, i)
		}
	}
	slices.SortStableFunc(called, func(a, b int) int { return counts[c.entries[b].name] - counts[c.entries[a].name] })
	for _, i := range called {
		take(i)
	}
	for i := range c.entries {
		take(i)
	}
	return order
}

// fit returns the definition of tool i within limit tokens, whole or
// trimmed with a link to the whole, and its count; nil when not even the
// smallest trimmed form fits (no link is kept then).
func (c *Catalog) fit(ctx context.Context, subject string, i, limit int) (json.RawMessage, int, error) {
	counter := c.s.exact()
	e := c.entries[i]
	if n := budget.CountUpTo(counter, string(e.def), limit+1); n <= limit {
		return e.def, n, nil
	}
	// First with a stand-in for the link, so that no link is kept for a
	// definition that does not fit at all.
	if _, n := c.trim(e, limit, placeholderURI); n > limit {
		return nil, n, nil
	}
	uri, err := c.link(ctx, subject, e)
	if err != nil {
		return nil, 0, err
	}
	def, n := c.trim(e, limit, uri)
	if n > limit {
		return nil, n, nil
	}
	return def, n, nil
}

// placeholderURI stands for a link while a trimmed definition is tried:
// costlier in tokens than a real one (about 240 bytes, 160 tokens).
var placeholderURI = ResourcePrefix + strings.Repeat("Zq3_x9-K", 30)

// link keeps the whole definition of e for subject and returns the
// ctxfit://r/... uri that reads it.
func (c *Catalog) link(ctx context.Context, subject string, e catalogEntry) (string, error) {
	args, _ := marshal(map[string]string{"name": e.name})
	token, err := c.s.Guard.Resource(ctx, ctxfit.Request{Endpoint: FindTool, Path: FindTool, Subject: subject,
		Filters: args, Unrepeatable: true}, e.def, "application/json")
	if err != nil {
		return "", err
	}
	return ResourcePrefix + token, nil
}

// trimLevels are the forms a trimmed definition takes, from the fullest:
// the description's bytes, the input schema's form, and whether the
// property descriptions stay.
var trimLevels = []struct {
	descr  int
	schema string // "deep": nested annotations dropped; "top": top-level properties' types; "required": the required ones'; "none"
	notes  int    // bytes of a property's description kept
}{
	{1000, "deep", 200},
	{400, "top", 60},
	{150, "required", 0},
	{60, "none", 0},
	{0, "none", 0},
}

// trim returns the first trimmed form of e within limit tokens, with uri
// as the link to the whole, and its count; the smallest form when none
// fits.
func (c *Catalog) trim(e catalogEntry, limit int, uri string) (json.RawMessage, int) {
	counter := c.s.exact()
	w, err := parseWire(e.def)
	if err != nil {
		w = &wire{}
		nm, _ := marshal(e.name)
		w.set("name", nm)
	}
	var schema map[string]any
	dec := json.NewDecoder(bytes.NewReader(w.get("inputSchema")))
	dec.UseNumber()
	_ = dec.Decode(&schema)
	var out json.RawMessage
	n := 0
	for li, lv := range trimLevels {
		t := &wire{members: slices.Clone(w.members)}
		t.del("outputSchema")
		note := "[Trimmed to fit the context window: " + FindTool + " answers the definition with a link to the whole.]"
		d := cutText(e.descr, lv.descr)
		if d != "" {
			d += " "
		}
		dj, _ := marshal(d + note)
		t.set("description", dj)
		sj, _ := marshal(trimSchema(schema, lv.schema, lv.notes))
		t.set("inputSchema", sj)
		meta := map[string]any{}
		if li < len(trimLevels)-1 {
			_ = json.Unmarshal(w.get("_meta"), &meta)
		} else {
			t.del("title")
			t.del("annotations")
		}
		if meta == nil {
			meta = map[string]any{}
		}
		meta[MetaDefinition] = uri
		mj, _ := marshal(meta)
		t.set("_meta", mj)
		out = t.marshal()
		if n = budget.CountUpTo(counter, string(out), limit+1); n <= limit {
			return out, n
		}
	}
	return out, n
}

// cutText returns s cut to at most n bytes at a word (or rune) boundary,
// with an ellipsis when it was cut.
func cutText(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexAny(s[:cut], " \n\t"); i > n/2 {
		cut = i
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

// annotationKeys are the keywords of a schema that describe rather than
// constrain.
var annotationKeys = []string{"description", "examples", "example", "title", "$comment", "default", "externalDocs", "deprecated", "readOnly", "writeOnly", "xml"}

// trimSchema returns a smaller form of an input schema: "deep" keeps it
// with the annotations of nested schemas dropped and top-level property
// descriptions cut to notes bytes; "top" keeps the top-level properties'
// type, enum (up to ten values) and item type; "required" does so for the
// required properties only; "none" is {"type":"object"}. A trimmed schema
// accepts at least what the whole accepts, so a call it allows is judged
// by the server.
func trimSchema(schema map[string]any, form string, notes int) map[string]any {
	if schema == nil || form == "none" {
		return map[string]any{"type": "object"}
	}
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	if form == "deep" {
		out := stripSchema(schema, true).(map[string]any)
		out["type"] = "object"
		if p, ok := out["properties"].(map[string]any); ok {
			for name, ps := range p {
				orig, _ := props[name].(map[string]any)
				m, ok := ps.(map[string]any)
				if !ok || orig == nil {
					continue
				}
				if d, ok := orig["description"].(string); ok && notes > 0 {
					m["description"] = cutText(d, notes)
				}
			}
		}
		return out
	}
	keep := map[string]bool{}
	for _, r := range required {
		if s, ok := r.(string); ok {
			keep[s] = true
		}
	}
	out := map[string]any{"type": "object"}
	sk := map[string]any{}
	for name, ps := range props {
		if form == "required" && !keep[name] {
			continue
		}
		sk[name] = skeleton(ps, notes)
	}
	if len(sk) > 0 {
		out["properties"] = sk
	}
	var req []any
	for _, r := range required {
		if s, ok := r.(string); ok {
			if _, kept := sk[s]; kept {
				req = append(req, s)
			}
		}
	}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}

// skeleton is a property schema's type, enum (up to ten values), item type
// and, with notes > 0, its description cut to notes bytes; {} (anything)
// when it has none of them.
func skeleton(ps any, notes int) map[string]any {
	m, ok := ps.(map[string]any)
	out := map[string]any{}
	if !ok {
		return out
	}
	if t, ok := m["type"]; ok {
		out["type"] = t
	}
	if en, ok := m["enum"].([]any); ok && len(en) <= 10 {
		out["enum"] = en
	}
	if it, ok := m["items"].(map[string]any); ok {
		if t, ok := it["type"]; ok {
			out["items"] = map[string]any{"type": t}
		}
	}
	if d, ok := m["description"].(string); ok && notes > 0 {
		out["description"] = cutText(d, notes)
	}
	return out
}

// subschemaMaps and subschemaLists are the keywords whose values are maps
// of schemas and lists of schemas; other keywords holding a schema are
// those of subschemaOne.
var (
	subschemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	subschemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	subschemaOne   = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems"}
)

// stripSchema returns a copy of the schema v without the annotations of
// its nested schemas (and of itself unless root).
func stripSchema(v any, root bool) any {
	m, ok := v.(map[string]any)
	if !ok {
		if l, ok := v.([]any); ok { // items as a list (draft 4)
			out := make([]any, len(l))
			for i, x := range l {
				out[i] = stripSchema(x, false)
			}
			return out
		}
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	if !root {
		for _, k := range annotationKeys {
			delete(out, k)
		}
	}
	for _, k := range subschemaMaps {
		if mm, ok := out[k].(map[string]any); ok {
			cp := make(map[string]any, len(mm))
			for name, s := range mm {
				cp[name] = stripSchema(s, false)
			}
			out[k] = cp
		}
	}
	for _, k := range subschemaLists {
		if l, ok := out[k].([]any); ok {
			cp := make([]any, len(l))
			for i, s := range l {
				cp[i] = stripSchema(s, false)
			}
			out[k] = cp
		}
	}
	for _, k := range subschemaOne {
		if s, ok := out[k]; ok {
			out[k] = stripSchema(s, false)
		}
	}
	return out
}

// searchTerms splits a query into lower-case words of two characters or
// more.
func searchTerms(q string) []string {
	var terms []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) >= 2 && !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	}
	return terms
}

// score is a tool's relevance to a query, a sum over its terms: 6 for the
// name itself, 4 for a word of the name, 3 for a part of it; 3 for a tag
// equal to the term, 2 for a tag or the path holding it; 1 for the title
// or description, 1 for an input property; then 5 more when the name
// holds every term of several, and 10 more when the query is the name.
func (e catalogEntry) score(query string, terms []string) int {
	name := strings.ToLower(e.name)
	n := 0
	if strings.EqualFold(strings.TrimSpace(query), e.name) {
		n += 10
	}
	text := strings.ToLower(e.title + " " + e.descr)
	path := strings.ToLower(e.path)
	inName := 0
	words := searchTerms(e.name)
	for _, t := range terms {
		if strings.Contains(name, t) {
			inName++
		}
		switch {
		case name == t:
			n += 6
		case slices.Contains(words, t):
			n += 4
		case strings.Contains(name, t):
			n += 3
		}
		for _, tag := range e.tags {
			tag = strings.ToLower(tag)
			if tag == t {
				n += 3
				break
			}
			if strings.Contains(tag, t) {
				n += 2
				break
			}
		}
		if strings.Contains(path, t) {
			n += 2
		}
		if strings.Contains(text, t) {
			n++
		}
		for _, p := range e.props {
			if strings.Contains(strings.ToLower(p), t) {
				n++
				break
			}
		}
	}
	if len(terms) > 1 && inName == len(terms) {
		n += 5
	}
	return n
}

// search returns the indexes of the tools other than ctxfit's that match
// query, best first (ties in list order).
func (c *Catalog) search(query string) []int {
	terms := searchTerms(query)
	type hit struct{ i, score int }
	var hits []hit
	for i, e := range c.entries {
		if e.own || e.name == "" {
			continue
		}
		if s := e.score(query, terms); s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return b.score - a.score })
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.i
	}
	return out
}

// FindInput decodes the arguments of the find tool (see
// [DecodeArguments]); arguments that do not decode, lack the query or ask
// for a limit out of 1..50 give the [ArgumentError] to report instead.
func (c *Catalog) FindInput(args json.RawMessage) (FindInput, *Error) {
	var in FindInput
	spec := findArguments()
	if bad := spec.decode(args, &in); bad != nil {
		return FindInput{}, bad
	}
	if strings.TrimSpace(in.Query) == "" {
		return FindInput{}, spec.missing("query")
	}
	if in.Limit < 0 || in.Limit > maxFindLimit {
		return FindInput{}, spec.invalid("limit", fmt.Sprintf("it takes a limit of 1 to %d, not %d", maxFindLimit, in.Limit))
	}
	if in.Limit == 0 {
		in.Limit = defaultFindLimit
	}
	return in, nil
}

// Find answers a call of [FindTool] for a session whose links are bound to
// subject, as a tool result's wire JSON, and returns the names of the
// tools it answered the definitions of: the best matches of the query
// (see [Catalog.FindInput]), whole or trimmed to the per-tool budget with
// a link to the whole (and a resource_link to it), as many as fit the
// catalog budget and the find tool's hard cap, with a line that says how
// to call them and names the matches it left out. Bad arguments answer a
// tool error that says what to pass.
func (c *Catalog) Find(ctx context.Context, subject string, args json.RawMessage) (json.RawMessage, []string) {
	in, bad := c.FindInput(args)
	if bad != nil {
		return ErrorResult(*bad), nil
	}
	counter := c.s.exact()
	hits := c.search(in.Query)
	limit := c.s.budgetOf(FindTool).HardCap
	if c.budget > 0 {
		limit = min(limit, c.budget)
	}
	limit -= sdkSlack + gateSlack
	var defs []json.RawMessage
	var names []string
	var links []json.RawMessage
	build := func() json.RawMessage {
		body, _ := marshal(map[string]any{"query": in.Query, "matched": len(hits), "tools": defs})
		content := []json.RawMessage{textBlock(string(body)), c.findGuidance(in.Query, hits, names)}
		content = append(content, links...)
		cj, _ := marshal(content)
		w := &wire{members: []member{{"content", cj}}}
		return w.marshal()
	}
	used := budget.CountUpTo(counter, string(build()), limit+1)
	for _, i := range hits[:min(len(hits), in.Limit)] {
		room := limit - used - 2
		if room < 16 {
			break
		}
		def, n, err := c.fit(ctx, subject, i, min(c.toolBudget, room))
		if err != nil {
			return ErrorResult(ErrorOf(err)), nil
		}
		if def == nil {
			break
		}
		// In a text block the definition's quotes are escaped: count it so.
		esc, _ := marshal(string(def))
		n = max(n, budget.CountUpTo(counter, string(esc), room+1))
		if n > room {
			break
		}
		defs = append(defs, def)
		names = append(names, c.entries[i].name)
		if !bytes.Equal(def, c.entries[i].def) {
			var m struct {
				Meta map[string]any `json:"_meta"`
			}
			_ = json.Unmarshal(def, &m)
			uri, _ := m.Meta[MetaDefinition].(string)
			l, _ := marshal(map[string]any{"type": "resource_link", "uri": uri, "name": c.entries[i].name + " definition",
				"mimeType": "application/json", "size": len(c.entries[i].def),
				"description": "The whole definition of " + c.entries[i].name + ", as the server lists it."})
			links = append(links, l)
		}
		used += n + 2
	}
	out := build()
	for len(defs) > 0 && budget.Exceeds(counter, string(out), limit) {
		last := defs[len(defs)-1]
		if !bytes.Equal(last, c.entries[c.byName[names[len(names)-1]]].def) {
			links = links[:len(links)-1]
		}
		defs, names = defs[:len(defs)-1], names[:len(names)-1]
		out = build()
	}
	return out, names
}

// findGuidance is the text block after a find's definitions: how to call
// them, and the matches left out.
func (c *Catalog) findGuidance(query string, hits []int, shown []string) json.RawMessage {
	q, _ := marshal(query)
	var b strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&b, "No tool matches %s. Try other words", q)
		var some []string
		for _, e := range c.entries {
			if !e.own && e.name != "" {
				some = append(some, e.name)
			}
			if len(some) == maxNamesShown {
				break
			}
		}
		if len(some) > 0 {
			fmt.Fprintf(&b, "; some of the %d tools: %s", len(c.entries), strings.Join(some, ", "))
		}
		b.WriteString(".")
		return textBlock(b.String())
	}
	fmt.Fprintf(&b, "%d tools match %s", len(hits), q)
	if len(shown) > 0 {
		name, _ := marshal(shown[0])
		fmt.Fprintf(&b, "; the %d best are above (a trimmed definition links its whole). Call one with %s "+
			`{"name":%s,"arguments":{...}}, or by its name once your client lists it.`, len(shown), CallTool, name)
	} else {
		b.WriteString("; none fits the context window here.")
	}
	if rest := len(hits) - len(shown); rest > 0 {
		var left []string
		for _, i := range hits[len(shown):] {
			left = append(left, c.entries[i].name)
			if len(left) == maxNamesShown {
				break
			}
		}
		fmt.Fprintf(&b, " Not shown: %s", strings.Join(left, ", "))
		if rest > len(left) {
			fmt.Fprintf(&b, " and %d more", rest-len(left))
		}
		b.WriteString("; find one by its name, or with more words.")
	}
	out, _ := marshal(map[string]any{"type": "text", "text": b.String(), "_meta": map[string]any{MetaGuidance: true}})
	return out
}

// findArguments and callArguments are the arguments of [FindTool] and
// [CallTool], as their errors describe them.
func findArguments() ownArguments {
	return ownArguments{tool: FindTool, usage: `{"query": "<words of what you want to do>"}; optional "limit" (1 to 50)`, args: []argument{
		{"query", `words such as "create issue", a tool's name, a tag or a path`, "Pass what you want to do in a few words."},
		{"limit", fmt.Sprintf("an integer from 1 to %d", maxFindLimit), "Leave limit out for the 10 best matches."},
	}}
}

func callArguments() ownArguments {
	return ownArguments{tool: CallTool, usage: `{"name": "<a tool's name>", "arguments": {...}}`, args: []argument{
		{"name", "the name of a tool " + FindTool + " answered, unchanged", "Find the tool with " + FindTool + ", then pass its name and arguments."},
		{"arguments", "a JSON object of the tool's arguments", "Pass the arguments as an object, as the tool's inputSchema describes them."},
	}}
}

// callInput is the input of the call tool.
type callInput struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// CallInput decodes the arguments of [CallTool] (see [DecodeArguments])
// and returns the tool to call and its arguments ({} when absent or
// null). A name that is not a tool of the catalog (ctxfit's own tools and
// the catalog's are called directly), or arguments that are not a JSON
// object, give the [ArgumentError] to report instead, which names the
// closest tools.
func (c *Catalog) CallInput(args json.RawMessage) (string, json.RawMessage, *Error) {
	var in callInput
	spec := callArguments()
	if bad := spec.decode(args, &in); bad != nil {
		return "", nil, bad
	}
	if in.Name == "" {
		return "", nil, spec.missing("name")
	}
	if !c.Has(in.Name) {
		msg := fmt.Sprintf("%s: this server has no tool named %q", CallTool, in.Name)
		suggestion := "Find the tool with " + FindTool + " and pass its name unchanged."
		if c.s.Names.Own(in.Name) || in.Name == FindTool || in.Name == CallTool {
			msg = fmt.Sprintf("%s calls the server's tools; %s is ctxfit's", CallTool, in.Name)
			suggestion = "Call " + in.Name + " directly."
		} else if hits := c.search(in.Name); len(hits) > 0 {
			var near []string
			for _, i := range hits[:min(3, len(hits))] {
				near = append(near, c.entries[i].name)
			}
			suggestion = "Did you mean " + strings.Join(near, ", ") + "? Names are exact; " + FindTool + " finds the others."
		}
		e := ArgumentError("name", msg, "the name of a tool "+FindTool+" answered, unchanged", suggestion)
		return "", nil, &e
	}
	a := bytes.TrimSpace(in.Arguments)
	if len(a) == 0 || bytes.Equal(a, []byte("null")) {
		return in.Name, json.RawMessage("{}"), nil
	}
	if a[0] != '{' {
		e := ArgumentError("arguments", fmt.Sprintf("%s: the arguments of %s are not a JSON object", CallTool, in.Name),
			"a JSON object of the tool's arguments", "Pass the arguments as an object, as the tool's inputSchema describes them.")
		return "", nil, &e
	}
	return in.Name, append(json.RawMessage(nil), a...), nil
}
