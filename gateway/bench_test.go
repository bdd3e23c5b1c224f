package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
)

// document returns an OpenAPI 3.1 document with n operations, each with a
// path parameter, two query parameters, a JSON body and an object answer
// that share component schemas.
func document(n int) []byte {
	var paths []string
	for i := range n / 2 {
		paths = append(paths, fmt.Sprintf(`"/things%d/{id}": {
			"get": {"operationId": "getThing%d", "tags": ["t%d"], "summary": "Get thing %d",
				"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
					{"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
					{"name": "sort", "in": "query", "schema": {"type": "string", "enum": ["asc", "desc"]}}],
				"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}},
			"put": {"operationId": "putThing%d", "summary": "Replace thing %d",
				"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
				"requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
				"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}}`,
			i, i, i%7, i, i, i))
	}
	return []byte(`{"openapi": "3.1.0", "info": {"title": "Things", "version": "1"}, "servers": [{"url": "http://127.0.0.1:1"}],
		"paths": {` + strings.Join(paths, ",") + `},
		"components": {"schemas": {
			"Thing": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}, "name": {"type": "string"},
				"parts": {"type": "array", "items": {"$ref": "#/components/schemas/Part"}}, "owner": {"$ref": "#/components/schemas/Owner"}}},
			"Part": {"type": "object", "properties": {"sku": {"type": "string", "pattern": "^[A-Z]+$"}, "count": {"type": "integer"}}},
			"Owner": {"type": ["object", "null"], "properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "email"}}}}}}`)
}

// BenchmarkStartup measures what start-up costs the gateway: parsing and
// validating the document and building the guarded server (the goal is
// under 3 s for 200 operations).
func BenchmarkStartup(b *testing.B) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: testSecret}})
	require.NoError(b, err)
	defer g.Close()
	for _, n := range []int{20, 200} {
		data := document(n)
		b.Run(fmt.Sprintf("operations=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				doc, err := gateway.Parse(context.Background(), data)
				if err != nil {
					b.Fatal(err)
				}
				gw, err := gateway.New(doc, g, nil)
				if err != nil {
					b.Fatal(err)
				}
				if len(gw.Operations()) != n {
					b.Fatalf("%d tools, want %d", len(gw.Operations()), n)
				}
				gw.Close()
			}
		})
	}
}

func TestADocumentOf200OperationsBecomes200Tools(t *testing.T) {
	doc, err := gateway.Parse(context.Background(), document(200))
	require.NoError(t, err)
	gw, err := gateway.New(doc, newGuard(t, ctxfit.Config{}), nil)
	require.NoError(t, err)
	defer gw.Close()
	require.Len(t, gw.Operations(), 200)
}
