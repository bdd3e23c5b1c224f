package mcpcore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// verbs and nouns make the names of generated tools.
var (
	verbs = []string{"list", "get", "create", "update", "delete"}
	nouns = []string{"invoice", "customer", "repository", "issue", "booking", "payment", "webhook", "label", "comment", "team"}
)

// generatedTool is the definition of the i-th generated tool: a name such
// as create_invoice_7, a description and an input schema of a few
// properties.
func generatedTool(i int) json.RawMessage {
	verb, noun := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
	name := fmt.Sprintf("%s_%s_%d", verb, noun, i)
	def, _ := json.Marshal(map[string]any{
		"name":        name,
		"description": fmt.Sprintf("%s a %s of the account (generated tool %d).", strings.ToUpper(verb[:1])+verb[1:], noun, i),
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"id":    map[string]any{"type": "string", "description": "The " + noun + "'s ID."},
			"limit": map[string]any{"type": "integer"},
		}, "required": []string{"id"}},
		"annotations": map[string]any{"readOnlyHint": verb == "list" || verb == "get"},
	})
	return def
}

// hugeTool is a definition of about 20,000 tokens: a long description and
// a deep input schema with descriptions at every level.
func hugeTool(name string) json.RawMessage {
	props := map[string]any{}
	for i := range 60 {
		nested := map[string]any{}
		for j := range 10 {
			nested[fmt.Sprintf("field_%d", j)] = map[string]any{"type": "string",
				"description": strings.Repeat(fmt.Sprintf("Nested field %d of property %d, café 東京. ", j, i), 4)}
		}
		props[fmt.Sprintf("prop_%d", i)] = map[string]any{"type": "object", "description": "Property " + fmt.Sprint(i) + " of the repository settings.",
			"properties": nested}
	}
	def, _ := json.Marshal(map[string]any{
		"name":         name,
		"description":  "Update a repository's settings. " + strings.Repeat("Every setting of the repository can be changed here. ", 200),
		"inputSchema":  map[string]any{"type": "object", "properties": props, "required": []string{"prop_0", "prop_1"}},
		"outputSchema": map[string]any{"type": "object", "properties": props},
	})
	return def
}

func ownDefinitions() []json.RawMessage {
	var out []json.RawMessage
	for _, t := range (mcpcore.Names{}).WithDefaults().Tools() {
		def, _ := json.Marshal(map[string]any{"name": t.Name, "title": t.Title, "description": t.Description, "inputSchema": t.InputSchema})
		out = append(out, def)
	}
	return out
}

// catalogOf is the catalog of n generated tools, extra definitions and
// ctxfit's own tools.
func catalogOf(s *mcpcore.Shaper, n int, usage *mcpcore.ToolUsage, extra ...json.RawMessage) (*mcpcore.Catalog, []json.RawMessage) {
	var defs []json.RawMessage
	for i := range n {
		defs = append(defs, generatedTool(i))
	}
	defs = append(defs, extra...)
	defs = append(defs, ownDefinitions()...)
	tools := make([]mcpcore.CatalogTool, len(defs))
	for i, d := range defs {
		tools[i] = mcpcore.CatalogTool{Definition: d}
		if i < n {
			tools[i].Tags = []string{nouns[(i/len(verbs))%len(nouns)] + "s"}
			tools[i].Path = "/" + nouns[(i/len(verbs))%len(nouns)] + "s/{id}"
		}
	}
	return mcpcore.NewCatalog(s, tools, usage), defs
}

func listTokens(t *testing.T, tools []json.RawMessage) int {
	t.Helper()
	c, err := budget.Exact("")
	require.NoError(t, err)
	raw, err := json.Marshal(map[string]any{"tools": tools})
	require.NoError(t, err)
	return c.Count(string(raw))
}

func namesOf(t *testing.T, defs []json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, d := range defs {
		var h struct {
			Name string `json:"name"`
		}
		require.NoError(t, json.Unmarshal(d, &h))
		out = append(out, h.Name)
	}
	return out
}

func TestACatalogWithinItsBudgetIsNotBudgeted(t *testing.T) {
	s := newShaper(t, ctxfit.Config{})
	cat, defs := catalogOf(s, 20, nil)
	require.Less(t, listTokens(t, defs), 12000)
	assert.False(t, cat.Budgeted(), "a list within the hard cap passes unchanged")
	assert.Equal(t, 12000, cat.Budget(), "the catalog budget is the hard cap by default")
	assert.Equal(t, 1500, cat.ToolBudget(), "the per-tool budget is an eighth of it")

	s = newShaper(t, ctxfit.Config{CatalogBudget: -1})
	cat, _ = catalogOf(s, 500, nil)
	assert.False(t, cat.Budgeted(), "a negative budget serves every definition")
}

func TestABudgetedListFitsTheBudgetByExactCountAndKeepsCtxfitsTools(t *testing.T) {
	for _, b := range []int{1500, 3000, 12000} {
		t.Run(fmt.Sprintf("a budget of %d tokens", b), func(t *testing.T) {
			s := newShaper(t, ctxfit.Config{CatalogBudget: b})
			cat, _ := catalogOf(s, 500, nil, hugeTool("update_repository_settings"))
			require.True(t, cat.Budgeted())
			list, err := cat.List(context.Background(), "s", nil)
			require.NoError(t, err)
			assert.LessOrEqual(t, listTokens(t, list), b, "within the catalog budget, by exact count")
			names := namesOf(t, list)
			for _, own := range append((mcpcore.Names{}).All(), mcpcore.FindTool, mcpcore.CallTool) {
				assert.Contains(t, names, own, "ctxfit's tools are always listed")
			}
			assert.Greater(t, len(names), 6, "the budget holds some of the server's tools too")
			c, _ := budget.Exact("")
			for i, d := range list[6:] {
				assert.LessOrEqual(t, c.Count(string(d)), cat.ToolBudget(), "no definition of the server's is over the per-tool budget (%s)", names[6+i])
			}
		})
	}
}

func TestABudgetedListTakesTheFoundThePinnedAndTheCalledToolsFirst(t *testing.T) {
	own := len((mcpcore.Names{}).All()) + 2
	s := newShaper(t, ctxfit.Config{CatalogBudget: 2000, CatalogTools: []string{"delete_team_49"}})
	usage := &mcpcore.ToolUsage{}
	for range 3 {
		usage.Add("get_payment_26")
	}
	cat, _ := catalogOf(s, 500, usage)
	list, err := cat.List(context.Background(), "s", []string{"update_label_38"})
	require.NoError(t, err)
	names := namesOf(t, list)
	require.Greater(t, len(names), own+3)
	assert.Equal(t, "update_label_38", names[own], "a tool the session found comes first")
	assert.Equal(t, "delete_team_49", names[own+1], "then the tools the settings pin, by name")
	assert.Equal(t, "get_payment_26", names[own+2], "then the tools called most")
	assert.Equal(t, "list_invoice_0", names[own+3], "then the others, in the list's order")

	s = newShaper(t, ctxfit.Config{CatalogBudget: 2000, CatalogTools: []string{"webhooks"}})
	cat, _ = catalogOf(s, 500, nil)
	list, err = cat.List(context.Background(), "s", nil)
	require.NoError(t, err)
	assert.Equal(t, "list_webhook_30", namesOf(t, list)[own], "the settings pin tools by tag too")
}

func TestFindAnswersTheRelevantToolsWithinTheBudget(t *testing.T) {
	s := newShaper(t, ctxfit.Config{CatalogBudget: 3000})
	cat, _ := catalogOf(s, 500, nil)
	for _, tc := range []struct{ query, first string }{
		{"create_invoice_2", "create_invoice_2"},
		{"delete a webhook", "delete_webhook_34"},
		{"comments", "list_comment_40"},
	} {
		t.Run(fmt.Sprintf("%q finds %s first", tc.query, tc.first), func(t *testing.T) {
			raw, shown := cat.Find(context.Background(), "s", mustJSON(t, map[string]any{"query": tc.query, "limit": 5}))
			require.NotEmpty(t, shown)
			assert.Equal(t, tc.first, shown[0])
			assert.LessOrEqual(t, len(shown), 5)
			blocks := content(t, raw)
			var body struct {
				Matched int               `json:"matched"`
				Tools   []json.RawMessage `json:"tools"`
			}
			require.NoError(t, json.Unmarshal([]byte(blocks[0]["text"].(string)), &body))
			assert.Equal(t, shown, namesOf(t, body.Tools))
			assert.GreaterOrEqual(t, body.Matched, len(shown))
			assert.Contains(t, blocks[1]["text"], mcpcore.CallTool, "the guidance says how to call them")
			c, _ := budget.Exact("")
			assert.LessOrEqual(t, c.Count(string(raw)), 3000, "the answer is within the catalog budget")
		})
	}

	t.Run("a query that matches nothing says so and names some tools", func(t *testing.T) {
		raw, shown := cat.Find(context.Background(), "s", mustJSON(t, map[string]any{"query": "zzqx"}))
		assert.Empty(t, shown)
		assert.Contains(t, content(t, raw)[1]["text"], "No tool matches")
	})
	t.Run("bad arguments are a tool error that names the argument", func(t *testing.T) {
		for _, args := range []string{`{}`, `{"query":"x","limit":99}`, `{"query":"x","other":1}`} {
			raw, _ := cat.Find(context.Background(), "s", json.RawMessage(args))
			assert.Contains(t, string(raw), `"isError":true`, args)
			assert.Contains(t, string(raw), "parameter_invalid", args)
		}
	})
}

func TestATrimmedDefinitionsLinkRebuildsItByteForByte(t *testing.T) {
	s := newShaper(t, ctxfit.Config{CatalogBudget: 4000, ToolBudget: 800})
	huge := hugeTool("update_repository_settings")
	cat, _ := catalogOf(s, 50, nil, huge)
	c, _ := budget.Exact("")
	require.Greater(t, c.Count(string(huge)), 15000)

	check := func(t *testing.T, def json.RawMessage) {
		t.Helper()
		assert.LessOrEqual(t, c.Count(string(def)), 800, "within the per-tool budget")
		var d struct {
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Meta        map[string]any  `json:"_meta"`
		}
		require.NoError(t, json.Unmarshal(def, &d))
		uri, _ := d.Meta[mcpcore.MetaDefinition].(string)
		require.NotEmpty(t, uri, "a trimmed definition links the whole")
		assert.Contains(t, d.Description, "Trimmed", "and says so to the model")
		assert.Contains(t, string(d.InputSchema), `"type":"object"`)
		assert.Equal(t, string(huge), readAll(t, s, uri, 12000), "the link rebuilds the whole definition byte for byte")
	}
	t.Run("in a find's answer", func(t *testing.T) {
		raw, shown := cat.Find(context.Background(), "s", mustJSON(t, map[string]any{"query": "update repository settings"}))
		require.Equal(t, "update_repository_settings", shown[0])
		var body struct {
			Tools []json.RawMessage `json:"tools"`
		}
		require.NoError(t, json.Unmarshal([]byte(content(t, raw)[0]["text"].(string)), &body))
		check(t, body.Tools[0])
		assert.Contains(t, string(raw), `"type":"resource_link"`, "with a resource_link to the whole")
	})
	t.Run("in a budgeted list", func(t *testing.T) {
		list, err := cat.List(context.Background(), "s", []string{"update_repository_settings"})
		require.NoError(t, err)
		require.Equal(t, "update_repository_settings", namesOf(t, list)[6])
		check(t, list[6])
	})
}

func TestCallInputChecksTheNameAndTheArguments(t *testing.T) {
	s := newShaper(t, ctxfit.Config{})
	cat, _ := catalogOf(s, 30, nil)
	name, args, bad := cat.CallInput(json.RawMessage(`{"name":"get_customer_6","arguments":{"id":"c1"}}`))
	require.Nil(t, bad)
	assert.Equal(t, "get_customer_6", name)
	assert.JSONEq(t, `{"id":"c1"}`, string(args))

	name, args, bad = cat.CallInput(json.RawMessage(`{"name":"list_invoice_0"}`))
	require.Nil(t, bad)
	assert.Equal(t, "list_invoice_0", name)
	assert.Equal(t, "{}", string(args), "absent arguments are {}")

	for _, tc := range []struct{ name, args, param, says string }{
		{"no name", `{"arguments":{}}`, "name", "needs"},
		{"an unknown name, with the closest tools", `{"name":"get_customer"}`, "name", "Did you mean get_customer_6"},
		{"one of ctxfit's tools", `{"name":"ctxfit_next"}`, "name", "directly"},
		{"the call tool itself", `{"name":"ctxfit_call_tool"}`, "name", "directly"},
		{"arguments that are not an object", `{"name":"get_customer_6","arguments":[1]}`, "arguments", "not a JSON object"},
		{"an unknown member", `{"name":"get_customer_6","args":{}}`, "args", "takes no argument"},
	} {
		t.Run(tc.name+" is an argument error", func(t *testing.T) {
			_, _, bad := cat.CallInput(json.RawMessage(tc.args))
			require.NotNil(t, bad)
			assert.Equal(t, tc.param, bad.Data.Parameter)
			assert.Contains(t, bad.Text(), tc.says)
		})
	}
}

func BenchmarkCatalog(b *testing.B) {
	cfg := ctxfit.Config{Secret: "0123456789abcdef0123456789abcdef"}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
	require.NoError(b, err)
	defer g.Close()
	s := &mcpcore.Shaper{Guard: g, Names: (mcpcore.Names{}).WithDefaults()}
	for _, n := range []int{100, 1000} {
		var tools []mcpcore.CatalogTool
		for i := range n {
			tools = append(tools, mcpcore.CatalogTool{Definition: generatedTool(i)})
			if i%50 == 0 {
				tools = append(tools, mcpcore.CatalogTool{Definition: hugeTool(fmt.Sprintf("huge_%d", i))})
			}
		}
		b.Run(fmt.Sprintf("%d tools: read, budgeted list and a find", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cat := mcpcore.NewCatalog(s, tools, nil)
				if _, err := cat.List(context.Background(), "s", nil); err != nil {
					b.Fatal(err)
				}
				cat.Find(context.Background(), "s", json.RawMessage(`{"query":"delete webhook"}`))
			}
		})
	}
}

// FuzzCatalog reads any definition beside generated ones: reading it,
// listing the budgeted catalog and finding never panic, the list stays
// within the budget, and every definition of it is JSON.
func FuzzCatalog(f *testing.F) {
	f.Add([]byte(`{"name":"x","description":"d","inputSchema":{"type":"object"}}`), "x")
	f.Add([]byte(`{"name":"y","inputSchema":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}}`), "y a")
	f.Add([]byte(`{"name":"","inputSchema":[]}`), "")
	f.Add([]byte(`not json`), "not")
	f.Add([]byte(hugeTool("h")), "h")
	s := &mcpcore.Shaper{Names: (mcpcore.Names{}).WithDefaults()}
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "0123456789abcdef0123456789abcdef", CatalogBudget: 2500, ToolBudget: 400}})
	require.NoError(f, err)
	f.Cleanup(func() { _ = g.Close() })
	s.Guard = g
	c, _ := budget.Exact("")
	f.Fuzz(func(t *testing.T, def []byte, query string) {
		tools := []mcpcore.CatalogTool{{Definition: def, Tags: []string{query}}}
		for i := range 60 {
			tools = append(tools, mcpcore.CatalogTool{Definition: generatedTool(i)})
		}
		cat := mcpcore.NewCatalog(s, tools, nil)
		list, err := cat.List(context.Background(), "s", []string{query})
		require.NoError(t, err)
		for _, d := range list {
			if !json.Valid(d) {
				assert.Equal(t, string(def), string(d), "only a definition as it came may be other than JSON")
			}
		}
		if json.Valid(def) {
			raw, _ := json.Marshal(map[string]any{"tools": list})
			assert.LessOrEqual(t, c.Count(string(raw)), 2500)
		}
		args, _ := json.Marshal(map[string]any{"query": query + " x"})
		out, _ := cat.Find(context.Background(), "s", args)
		assert.True(t, json.Valid(out))
	})
}
