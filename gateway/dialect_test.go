package gateway_test

import (
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// dialectDocument has an operation per way of sending arguments.
const dialectDocument = `{"openapi":"3.0.3","info":{"title":"dialects","version":"1"},"paths":{
	"/things/{ids}":{"get":{"operationId":"styles","parameters":[
		{"name":"ids","in":"path","required":true,"schema":{"type":"array","items":{"type":"integer"}}},
		{"name":"filter","in":"query","style":"deepObject","explode":true,"schema":{"type":"object","properties":{"color":{"type":"string"},"size":{"type":"integer"}}}},
		{"name":"tags","in":"query","style":"pipeDelimited","explode":false,"schema":{"type":"array","items":{"type":"string"}}},
		{"name":"words","in":"query","style":"spaceDelimited","explode":false,"schema":{"type":"array","items":{"type":"string"}}},
		{"name":"session","in":"cookie","schema":{"type":"string"}},
		{"name":"theme","in":"cookie","schema":{"type":"string"}}],
		"responses":{"204":{"description":"none"}}}},
	"/labels/{id}":{"get":{"operationId":"label","parameters":[{"name":"id","in":"path","required":true,"style":"label","schema":{"type":"array","items":{"type":"string"}}}],
		"responses":{"204":{"description":"none"}}}},
	"/things":{"patch":{"operationId":"patchThing","requestBody":{"required":true,"content":{
		"application/json-patch+json":{"schema":{"type":"array"}},
		"application/merge-patch+json":{"schema":{"type":"object","properties":{"name":{"type":"string"}}}}}},
		"responses":{"204":{"description":"none"}}}},
	"/notes":{"put":{"operationId":"putNote","requestBody":{"required":true,"content":{"text/plain":{"schema":{"type":"string"}}}},
		"responses":{"204":{"description":"none"}}}},
	"/upload":{"post":{"operationId":"upload","requestBody":{"required":true,"content":{"multipart/form-data":{"schema":{"type":"object","properties":{"name":{"type":"string"},"count":{"type":"integer"}}}}}},
		"responses":{"204":{"description":"none"}}}},
	"/events":{"get":{"operationId":"events","parameters":[
		{"name":"since","in":"query","schema":{"type":"string","format":"date-time"}},
		{"name":"owner","in":"query","schema":{"type":"string","format":"email"}},
		{"name":"id","in":"query","schema":{"type":"string","format":"uuid"}}],
		"responses":{"204":{"description":"none"}}}}}}`

func TestEveryParameterStyleAndBodyMediaTypeIsSentAsTheDocumentSays(t *testing.T) {
	doc, err := gateway.Parse(t.Context(), []byte(dialectDocument))
	require.NoError(t, err)
	api := newFakeAPI(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	_, cs := connect(t, doc, newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL})
	last := func() received { return api.requests()[len(api.requests())-1] }
	call := func(t *testing.T, tool string, args map[string]any) received {
		t.Helper()
		res := mcpfittest.Call(t, cs, tool, args)
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		return last()
	}

	t.Run("a path array, a deepObject, pipe- and space-delimited arrays and cookies", func(t *testing.T) {
		got := call(t, "styles", map[string]any{"ids": []any{1, 2}, "filter": map[string]any{"color": "red", "size": 3},
			"tags": []any{"a", "b"}, "words": []any{"x", "y"}, "session": "s 1", "theme": "dark"})
		assert.Equal(t, "/things/1,2", got.Path)
		assert.Equal(t, "filter%5Bcolor%5D=red&filter%5Bsize%5D=3&tags=a|b&words=x%20y", got.Query)
		assert.Equal(t, "session=s+1; theme=dark", got.Header.Get("Cookie"))
	})
	t.Run("a label path parameter", func(t *testing.T) {
		assert.Equal(t, "/labels/.a,b", call(t, "label", map[string]any{"id": []any{"a", "b"}}).Path)
	})
	t.Run("of json-patch and merge-patch, merge-patch is sent", func(t *testing.T) {
		got := call(t, "patchThing", map[string]any{"body": map[string]any{"name": "n"}})
		assert.Equal(t, "application/merge-patch+json", got.Header.Get("Content-Type"))
		assert.JSONEq(t, `{"name":"n"}`, got.Body)
	})
	t.Run("the model picks json-patch with contentType, offered with merge-patch its default", func(t *testing.T) {
		tool := byName(t, doc)["patchThing"].Tool
		props := schemaOf(t, tool.InputSchema)["properties"].(map[string]any)
		assert.Equal(t, map[string]any{"type": "string", "enum": []any{"application/merge-patch+json", "application/json-patch+json"},
			"default": "application/merge-patch+json", "description": props["contentType"].(map[string]any)["description"]}, props["contentType"])
		assert.Len(t, props["body"].(map[string]any)["anyOf"], 2, "an array for json-patch, an object for merge-patch")

		patch := []any{map[string]any{"op": "replace", "path": "/name", "value": "n"}}
		got := call(t, "patchThing", map[string]any{"contentType": "application/json-patch+json", "body": patch})
		assert.Equal(t, "application/json-patch+json", got.Header.Get("Content-Type"))
		assert.JSONEq(t, `[{"op":"replace","path":"/name","value":"n"}]`, got.Body)
	})
	t.Run("a media type the operation does not take is refused before the call, naming contentType", func(t *testing.T) {
		before := len(api.requests())
		e := toolError(t, mcpfittest.Call(t, cs, "patchThing", map[string]any{"contentType": "application/xml", "body": map[string]any{}}))
		assert.Equal(t, "contentType", e.Data.Parameter)
		assert.Len(t, api.requests(), before, "nothing was sent")
	})
	t.Run("a body of one media type has no contentType argument", func(t *testing.T) {
		assert.NotContains(t, schemaOf(t, byName(t, doc)["putNote"].Tool.InputSchema)["properties"], "contentType")
	})
	t.Run("a text body is the string itself", func(t *testing.T) {
		got := call(t, "putNote", map[string]any{"body": "hello\nworld"})
		assert.Equal(t, "text/plain", got.Header.Get("Content-Type"))
		assert.Equal(t, "hello\nworld", got.Body)
	})
	t.Run("a multipart body has a part per property", func(t *testing.T) {
		got := call(t, "upload", map[string]any{"body": map[string]any{"name": "report", "count": 2}})
		mt, params, err := mime.ParseMediaType(got.Header.Get("Content-Type"))
		require.NoError(t, err)
		assert.Equal(t, "multipart/form-data", mt)
		form, err := multipart.NewReader(strings.NewReader(got.Body), params["boundary"]).ReadForm(1 << 20)
		require.NoError(t, err)
		assert.Equal(t, map[string][]string{"name": {"report"}, "count": {"2"}}, form.Value)
	})
	t.Run("formats are checked before the call", func(t *testing.T) {
		before := len(api.requests())
		for arg, bad := range map[string]string{"since": "yesterday", "owner": "not-an-email", "id": "42"} {
			e := toolError(t, mcpfittest.Call(t, cs, "events", map[string]any{arg: bad}))
			assert.Equal(t, arg, e.Data.Parameter)
			assert.Contains(t, e.Data.Expected, "format")
		}
		assert.Len(t, api.requests(), before, "nothing was sent")
		call(t, "events", map[string]any{"since": "2026-11-28T05:00:00Z", "owner": "ada@example.com", "id": "0b0e2a5c-6b2e-4d6f-9a57-1a9b2f3c4d5e"})
	})
}

func TestAnErrorUnderOneOfNamesTheBranchTheCallerMeant(t *testing.T) {
	doc, err := gateway.Parse(t.Context(), []byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"servers":[{"url":"http://127.0.0.1:1"}],
		"paths":{"/shapes":{"post":{"operationId":"addShape","requestBody":{"required":true,"content":{"application/json":{"schema":{"oneOf":[
			{"type":"object","required":["kind","radius"],"properties":{"kind":{"const":"circle"},"radius":{"type":"number"}}},
			{"type":"object","required":["kind","side"],"properties":{"kind":{"const":"square"},"side":{"type":"integer"}}}]}}}},
		"responses":{"204":{"description":"none"}}}}}}`))
	require.NoError(t, err)
	_, cs := connect(t, doc, newGuard(t, ctxfit.Config{}), nil)
	e := toolError(t, mcpfittest.Call(t, cs, "addShape", map[string]any{"body": map[string]any{"kind": "square", "side": "big"}}))
	assert.Equal(t, "body/side", e.Data.Parameter, "the square's side, not the circle's kind or radius")
	assert.Equal(t, "a value of type integer", e.Data.Expected)
	assert.Contains(t, e.Message, "oneOf number 1")
}
