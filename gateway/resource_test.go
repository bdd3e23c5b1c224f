package gateway_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
)

func TestRouteMapsServeGETOperationsAsResources(t *testing.T) {
	api := newFakeAPI(t, jsonReply(200, `{"id":"o1","status":"open"}`))
	gw, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL + "/v1",
		Include: []string{"orders"}, Resources: []string{"GET /orders", "getOrder"}, Names: map[string]string{"getOrder": "order"}})

	t.Run("a GET without parameters is a resource at the API's URL, not a tool", func(t *testing.T) {
		list, err := cs.ListResources(t.Context(), nil)
		require.NoError(t, err)
		require.Len(t, list.Resources, 1)
		assert.Equal(t, api.URL+"/v1/orders", list.Resources[0].URI)
		assert.Equal(t, "list_orders_v2", list.Resources[0].Name)
	})
	t.Run("a GET with a path parameter is a resource template, named as the route map says", func(t *testing.T) {
		list, err := cs.ListResourceTemplates(t.Context(), nil)
		require.NoError(t, err)
		byURI := map[string]string{}
		for _, rt := range list.ResourceTemplates {
			byURI[rt.URITemplate] = rt.Name
		}
		assert.Equal(t, "order", byURI[api.URL+"/v1/orders/{id}"], "beside ctxfit's own: %v", byURI)
	})
	t.Run("the tools are the operations left", func(t *testing.T) {
		var names []string
		for _, op := range gw.Operations() {
			names = append(names, op.Tool.Name)
		}
		assert.ElementsMatch(t, []string{"createOrder"}, names)
	})
	t.Run("reading a template's URI calls the operation with its path values", func(t *testing.T) {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: api.URL + "/v1/orders/o%201"})
		require.NoError(t, err)
		require.Len(t, res.Contents, 1)
		assert.JSONEq(t, `{"id":"o1","status":"open"}`, res.Contents[0].Text)
		assert.Equal(t, "/v1/orders/o 1", api.requests()[len(api.requests())-1].Path)
	})
	t.Run("a URI of no operation is not found", func(t *testing.T) {
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: api.URL + "/v1/orders/o1/items"})
		require.Error(t, err)
	})
	t.Run("a resource map that selects no readable GET is an error", func(t *testing.T) {
		for _, res := range []string{"createOrder", "GET /nowhere"} {
			_, err := gateway.New(loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL, Resources: []string{res}})
			require.Error(t, err, res)
			assert.True(t, strings.Contains(err.Error(), res), err.Error())
		}
	})
}

func TestALargeResourceReadIsShapedAsAToolResultIs(t *testing.T) {
	big := `{"id":"o1","notes":"` + strings.Repeat("word ", 20000) + `"}`
	api := newFakeAPI(t, jsonReply(200, big))
	_, cs := connect(t, loadShop(t), newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL, Resources: []string{"getOrder"}})
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: api.URL + "/orders/o1"})
	require.NoError(t, err)
	require.NotEmpty(t, res.Contents)
	assert.Less(t, len(res.Contents[0].Text), len(big), "the guard's gate shapes the read")
}
