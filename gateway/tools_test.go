package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
)

var reserved = []string{"ctxfit_next", "ctxfit_details", "ctxfit_search", "ctxfit_query"}

func shopTools(t *testing.T, include ...string) map[string]*gateway.Operation {
	t.Helper()
	ops, err := gateway.Operations(loadShop(t), include, reserved)
	require.NoError(t, err)
	out := map[string]*gateway.Operation{}
	for _, op := range ops {
		out[op.Tool.Name] = op
	}
	return out
}

func schemaOf(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func TestEveryOperationBecomesOneToolWithAValidUniqueName(t *testing.T) {
	tools := shopTools(t)
	byRoute := map[string]string{}
	for name, op := range tools {
		byRoute[op.Method+" "+op.Path] = name
		assert.Regexp(t, `^[A-Za-z0-9_.-]{1,128}$`, name)
	}
	assert.Equal(t, map[string]string{
		"GET /orders":             "list_orders_v2",      // invalid characters replaced
		"POST /orders":            "createOrder",         // as it is
		"GET /orders/{id}":        "getOrder",            //
		"HEAD /orders/{id}":       "ctxfit_next_2",       // never one of ctxfit's own tools
		"PUT /orders/{id}":        "replaceOrder",        //
		"DELETE /orders/{id}":     "deleteOrder",         //
		"GET /categories/{path}":  "get_categories_path", // no operationId: method and path
		"GET /reports/{kind}":     "report_a_weird_name", // "report: a weird name!"
		"GET /reports/{kind}/raw": "report_a_weird_name_2",
	}, byRoute)
}

func TestToolNamesAreCutTo128CharactersAndStayUnique(t *testing.T) {
	long := strings.Repeat("x", 200)
	doc := fmt.Sprintf(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"http://127.0.0.1:1"}],
		"paths":{"/a":{"get":{"operationId":%q,"responses":{"200":{"description":"ok"}}}},
		         "/b":{"get":{"operationId":%q,"responses":{"200":{"description":"ok"}}}}}}`, long, long+"y")
	d, err := gateway.Parse(context.Background(), []byte(doc))
	require.NoError(t, err)
	ops, err := gateway.Operations(d, nil, nil)
	require.NoError(t, err)
	require.Len(t, ops, 2)
	assert.Equal(t, strings.Repeat("x", 128), ops[0].Tool.Name)
	assert.Equal(t, strings.Repeat("x", 126)+"_2", ops[1].Tool.Name)
}

func TestDescriptionsHoldTheSummaryTheDescriptionTheMethodAndThePath(t *testing.T) {
	tools := shopTools(t)
	assert.Equal(t, "List orders. Returns every order, newest first. (GET /orders; tags: orders)", tools["list_orders_v2"].Tool.Description)
	assert.Equal(t, "List orders", tools["list_orders_v2"].Tool.Title)
	assert.Equal(t, "Calls the API: DELETE /orders/{id} (tags: admin).", tools["deleteOrder"].Tool.Description)
	for name, op := range tools {
		assert.GreaterOrEqual(t, len(op.Tool.Description), 10, name)
		assert.Contains(t, op.Tool.Description, op.Method+" "+op.Path, name)
	}
}

func TestTheInputSchemaHasTheParametersAndTheBody(t *testing.T) {
	tools := shopTools(t)
	t.Run("query, header and cookie parameters are properties", func(t *testing.T) {
		s := schemaOf(t, tools["list_orders_v2"].Tool.InputSchema)
		assert.Equal(t, "object", s["type"])
		assert.Equal(t, false, s["additionalProperties"])
		props := s["properties"].(map[string]any)
		assert.ElementsMatch(t, []string{"status", "tag", "ids", "limit", "X-Request-Id", "session"}, keys(props))
		assert.Equal(t, map[string]any{"type": "string", "enum": []any{"open", "shipped", "cancelled"}}, props["status"])
		assert.Equal(t, "Orders with any of these tags.", props["tag"].(map[string]any)["description"])
		assert.Nil(t, s["required"])
	})
	t.Run("3.0's boolean exclusiveMaximum becomes a number", func(t *testing.T) {
		props := schemaOf(t, tools["list_orders_v2"].Tool.InputSchema)["properties"].(map[string]any)
		assert.Equal(t, map[string]any{"type": "integer", "minimum": 1.0, "exclusiveMaximum": 100.0}, props["limit"])
	})
	t.Run("path parameters are required and keep their name; a shared name gets the location", func(t *testing.T) {
		s := schemaOf(t, tools["getOrder"].Tool.InputSchema)
		assert.ElementsMatch(t, []string{"id", "query_id"}, keys(s["properties"].(map[string]any)))
		assert.Equal(t, []any{"id"}, s["required"])
	})
	t.Run("the JSON request body is the body property, with references inlined", func(t *testing.T) {
		s := schemaOf(t, tools["createOrder"].Tool.InputSchema)
		assert.Equal(t, []any{"body"}, s["required"])
		body := s["properties"].(map[string]any)["body"].(map[string]any)
		assert.Equal(t, []any{"customer", "lines"}, body["required"])
		line := body["properties"].(map[string]any)["lines"].(map[string]any)["items"].(map[string]any)
		assert.Equal(t, "^[A-Z]{3}-[0-9]+$", line["properties"].(map[string]any)["sku"].(map[string]any)["pattern"])
		assert.Equal(t, []any{"boolean", "null"}, line["properties"].(map[string]any)["gift"].(map[string]any)["type"], "nullable")
		assert.NotContains(t, string(mustJSON(t, s)), "$ref")
		assert.Len(t, body["properties"].(map[string]any)["payment"].(map[string]any)["oneOf"], 2)
	})
	t.Run("an optional body is not required", func(t *testing.T) {
		s := schemaOf(t, tools["replaceOrder"].Tool.InputSchema)
		assert.Equal(t, []any{"id"}, s["required"])
	})
}

func TestTheOutputSchemaIsTheJSONSuccessResponseWhenItIsAnObject(t *testing.T) {
	tools := shopTools(t)
	t.Run("an object response is the output schema, with OpenAPI's own keywords dropped", func(t *testing.T) {
		s := schemaOf(t, tools["getOrder"].Tool.OutputSchema)
		assert.Equal(t, "object", s["type"])
		assert.Equal(t, []any{"id", "customer"}, s["required"])
		total := s["properties"].(map[string]any)["total"].(map[string]any)
		assert.Equal(t, map[string]any{"type": "number"}, total["properties"].(map[string]any)["amount"], "example dropped")
		assert.NotContains(t, s, "x-owner")
	})
	t.Run("201 counts as success", func(t *testing.T) {
		assert.NotNil(t, tools["createOrder"].Tool.OutputSchema)
	})
	t.Run("a recursive schema ends in an empty schema", func(t *testing.T) {
		s := schemaOf(t, tools["get_categories_path"].Tool.OutputSchema)
		children := s["properties"].(map[string]any)["children"].(map[string]any)
		assert.Equal(t, map[string]any{}, children["items"])
	})
	t.Run("arrays, text and empty responses give none", func(t *testing.T) {
		for _, name := range []string{"list_orders_v2", "report_a_weird_name", "deleteOrder", "replaceOrder"} {
			assert.Nil(t, tools[name].Tool.OutputSchema, name)
		}
	})
}

func TestAnnotationsFollowTheMethod(t *testing.T) {
	tools := shopTools(t)
	yes := true
	for name, want := range map[string]mcp.ToolAnnotations{
		"getOrder":      {ReadOnlyHint: true, OpenWorldHint: &yes},
		"ctxfit_next_2": {ReadOnlyHint: true, OpenWorldHint: &yes}, // HEAD
		"replaceOrder":  {IdempotentHint: true, OpenWorldHint: &yes},
		"deleteOrder":   {DestructiveHint: &yes, OpenWorldHint: &yes},
		"createOrder":   {OpenWorldHint: &yes},
	} {
		assert.Equal(t, want, *tools[name].Tool.Annotations, name)
	}
}

func TestIncludeSelectsOperationsByIDTagOrPath(t *testing.T) {
	for _, c := range []struct {
		name    string
		include []string
		want    []string
	}{
		{"an operationId", []string{"getOrder"}, []string{"getOrder"}},
		{"an operationId as written, before it became a name", []string{"list orders/v2"}, []string{"list_orders_v2"}},
		{"a tool name", []string{"list_orders_v2"}, []string{"list_orders_v2"}},
		{"a tag", []string{"admin"}, []string{"deleteOrder", "report_a_weird_name", "report_a_weird_name_2"}},
		{"a path pattern", []string{"/reports/*"}, []string{"report_a_weird_name"}},
		{"a method and a path", []string{"PUT /orders/*"}, []string{"replaceOrder"}},
		{"several", []string{"createOrder", "/categories/*"}, []string{"createOrder", "get_categories_path"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.ElementsMatch(t, c.want, keys(shopTools(t, c.include...)))
		})
	}
	t.Run("an entry that selects nothing is an error", func(t *testing.T) {
		_, err := gateway.Operations(loadShop(t), []string{"getOrder", "getOrdre"}, nil)
		assert.ErrorContains(t, err, `"getOrdre" selects no operation`)
	})
}

func TestParseRefusesWhatIsNotAnOpenAPIDocument(t *testing.T) {
	for name, doc := range map[string]string{
		"not JSON or YAML": "{{{",
		"Swagger 1.2":      `{"swagger":"1.2","info":{"title":"t","version":"1"},"paths":{}}`,
		"OpenAPI 4":        `{"openapi":"4.0.0","info":{"title":"t","version":"1"},"paths":{}}`,
		"no paths":         `{"openapi":"3.1.0","info":{"title":"t","version":"1"}}`,
		"a list":           `[1, 2]`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := gateway.Parse(context.Background(), []byte(doc))
			assert.Error(t, err)
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestLoadFetchesADocumentByURL(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openapi.json" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(readFile(t, "../examples/httpserver/openapi.json"))
	})
	t.Run("a document is parsed, and remembers where it came from", func(t *testing.T) {
		d, err := gateway.Load(context.Background(), api.URL+"/openapi.json", nil)
		require.NoError(t, err)
		assert.Equal(t, api.URL+"/openapi.json", d.Location.String())
	})
	t.Run("an answer other than 200 is an error", func(t *testing.T) {
		_, err := gateway.Load(context.Background(), api.URL+"/missing.json", nil)
		assert.ErrorContains(t, err, "404")
	})
	t.Run("a file that does not exist is an error", func(t *testing.T) {
		_, err := gateway.Load(context.Background(), "testdata/missing.yaml", nil)
		assert.Error(t, err)
	})
}

func TestRouteMapsExcludeAndRenameOperations(t *testing.T) {
	names := func(t *testing.T, opts *gateway.Options) []string {
		t.Helper()
		gw, err := gateway.New(loadShop(t), newGuard(t, ctxfit.Config{}), opts)
		require.NoError(t, err)
		defer gw.Close()
		var out []string
		for _, op := range gw.Operations() {
			out = append(out, op.Tool.Name)
		}
		return out
	}
	base := &gateway.Options{BaseURL: "http://127.0.0.1:1"}
	t.Run("exclude by tag, by method and path pattern, and by operationId", func(t *testing.T) {
		o := *base
		o.Exclude = []string{"admin", "DELETE /orders/*", "createOrder"}
		got := names(t, &o)
		assert.Subset(t, got, []string{"list_orders_v2", "getOrder", "replaceOrder"})
		for _, name := range []string{"deleteOrder", "createOrder", "report_a_weird_name"} {
			assert.NotContains(t, got, name)
		}
	})
	t.Run("include then exclude", func(t *testing.T) {
		o := *base
		o.Include, o.Exclude = []string{"orders"}, []string{"GET /orders"}
		assert.ElementsMatch(t, []string{"createOrder", "getOrder"}, names(t, &o))
	})
	t.Run("a name by operationId or by method and path", func(t *testing.T) {
		o := *base
		o.Include = []string{"orders", "DELETE /orders/{id}"}
		o.Names = map[string]string{"getOrder": "order", "DELETE /orders/{id}": "cancel order"}
		assert.ElementsMatch(t, []string{"list_orders_v2", "createOrder", "order", "cancel_order"}, names(t, &o))
	})
	t.Run("an exclude or a name that selects nothing is an error", func(t *testing.T) {
		for _, o := range []gateway.Options{{Exclude: []string{"getOrdre"}}, {Names: map[string]string{"getOrdre": "x"}}} {
			o.BaseURL = base.BaseURL
			_, err := gateway.New(loadShop(t), newGuard(t, ctxfit.Config{}), &o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "getOrdre")
		}
	})
}
