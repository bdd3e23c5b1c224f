package gateway_test

import (
	"context"
	"testing"

	"github.com/ctxfit/ctxfit/gateway"
)

// FuzzParse checks that any input, JSON, YAML or neither, gives a Document
// or an error, never a panic, and that a Document's operations are built
// the same way.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a/{id}":{"get":{"parameters":[{"$ref":"#/components/parameters/id"}],"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}}},"components":{"parameters":{"id":{"name":"id","in":"path","schema":{"type":"integer"}}},"schemas":{"A":{"type":"object","properties":{"a":{"$ref":"#/components/schemas/A"}}}}}}`,
		"openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    post:\n      requestBody: {content: {text/plain: {schema: {type: string}}}}\n      responses: {'204': {description: none}}\n",
		`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`,
		`{"openapi":"3.0.0","paths":{"/a":{"$ref":"#/paths/~1a"}}}`,
		"a: &a [*a]",
		"{{{", "", "null", "[1]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := gateway.Parse(context.Background(), data)
		if err != nil {
			return
		}
		_, _ = gateway.Operations(doc, nil, nil)
	})
}
