package gateway_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// byName returns the operations of doc by tool name.
func byName(t *testing.T, doc *gateway.Document) map[string]*gateway.Operation {
	t.Helper()
	ops, err := gateway.Operations(doc, nil, nil)
	require.NoError(t, err)
	m := map[string]*gateway.Operation{}
	for _, op := range ops {
		m[op.Tool.Name] = op
	}
	return m
}

func TestASwagger2DocumentIsConvertedAndServed(t *testing.T) {
	doc, err := gateway.Load(t.Context(), "testdata/petstore-swagger2.json", nil)
	require.NoError(t, err)
	assert.Equal(t, "2.0", doc.OpenAPI)
	assert.Equal(t, "Swagger Petstore", doc.Title)
	ops := byName(t, doc)
	assert.ElementsMatch(t, []string{"addPet", "findPetsByStatus", "getPetById", "updatePetWithForm"}, keys(ops))
	body := schemaOf(t, ops["addPet"].Tool.InputSchema)["properties"].(map[string]any)["body"].(map[string]any)
	assert.Equal(t, []any{"name", "photoUrls"}, body["required"], "the definition is inlined")

	api := newFakeAPI(t, jsonReply(200, `{"id":7,"name":"doggie","photoUrls":[]}`))
	_, cs := connect(t, doc, newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL + "/v2"})
	t.Run("a path parameter and an answer", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "getPetById", map[string]any{"petId": 7})
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		assert.Equal(t, "/v2/pet/7", api.requests()[len(api.requests())-1].Path)
		assert.JSONEq(t, `{"id":7,"name":"doggie","photoUrls":[]}`, string(mustJSON(t, res.StructuredContent)))
	})
	t.Run("formData parameters are a form body", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "updatePetWithForm", map[string]any{"petId": 7, "body": map[string]any{"name": "rex", "status": "sold"}})
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		got := api.requests()[len(api.requests())-1]
		assert.Equal(t, "application/x-www-form-urlencoded", got.Header.Get("Content-Type"))
		assert.Equal(t, "name=rex&status=sold", got.Body)
	})
	t.Run("a multi collection is a repeated query parameter", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "findPetsByStatus", map[string]any{"status": []any{"available", "sold"}})
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		assert.Equal(t, "status=available&status=sold", api.requests()[len(api.requests())-1].Query)
	})
}

func TestExternalReferencesBesideTheDocumentAreRead(t *testing.T) {
	t.Run("files beside it are inlined; one outside its directory is a warning and its operation is skipped", func(t *testing.T) {
		doc, err := gateway.Load(t.Context(), "testdata/refs/api.yaml", nil)
		require.NoError(t, err)
		require.Len(t, doc.Warnings, 1)
		assert.Contains(t, doc.Warnings[0], `"../outside.yaml#/limit" not allowed`)
		ops := byName(t, doc)
		assert.ElementsMatch(t, []string{"getRecord"}, keys(ops))
		in := schemaOf(t, ops["getRecord"].Tool.InputSchema)["properties"].(map[string]any)
		assert.Equal(t, map[string]any{"type": "integer", "minimum": 1.0}, in["record_id"])
		out := schemaOf(t, ops["getRecord"].Tool.OutputSchema)
		props := out["properties"].(map[string]any)
		assert.Equal(t, []any{"A", "AAAA", "CNAME", "MX", "TXT"}, props["type"].(map[string]any)["enum"], "a reference of a referenced file, to a third one")
		assert.Equal(t, map[string]any{}, props["parent"], "a recursive reference accepts anything")

		var logs bytes.Buffer
		gw, err := gateway.New(doc, newGuard(t, ctxfit.Config{}), &gateway.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		require.NoError(t, err)
		defer gw.Close()
		assert.Equal(t, 1, gw.Stats().SkippedOperations)
		assert.Equal(t, 1, gw.Stats().DocumentWarnings)
		assert.Contains(t, logs.String(), "an operation is not served")
		assert.Contains(t, logs.String(), "path=/outside")
	})
	t.Run("--allow-ref lets a reference outside be read", func(t *testing.T) {
		doc, err := gateway.Load(t.Context(), "testdata/refs/api.yaml", &gateway.LoadOptions{AllowRefs: []string{"testdata"}})
		require.NoError(t, err)
		assert.Empty(t, doc.Warnings)
		assert.ElementsMatch(t, []string{"getRecord", "outside"}, keys(byName(t, doc)))
	})
	t.Run("by URL, references under the document's origin are fetched", func(t *testing.T) {
		files := http.FileServer(http.Dir("testdata"))
		srv := newFakeAPI(t, files.ServeHTTP)
		doc, err := gateway.Load(t.Context(), srv.URL+"/refs/api.yaml", nil)
		require.NoError(t, err)
		assert.Len(t, doc.Warnings, 1, "../outside.yaml is outside the document's directory")
		assert.Contains(t, keys(byName(t, doc)), "getRecord")
	})
	t.Run("a symbolic link beside the document is followed only when it points beside it too", func(t *testing.T) {
		root := t.TempDir()
		docDir, outside := filepath.Join(root, "api"), filepath.Join(root, "secret.yaml")
		require.NoError(t, os.MkdirAll(filepath.Join(docDir, "models"), 0o755))
		limit := "limit: {name: limit, in: query, schema: {type: integer}}\n"
		require.NoError(t, os.WriteFile(outside, []byte(limit), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(docDir, "models", "inside.yaml"), []byte(limit), 0o600))
		if err := os.Symlink(outside, filepath.Join(docDir, "models", "out.yaml")); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
		require.NoError(t, os.Symlink("inside.yaml", filepath.Join(docDir, "models", "in.yaml")))
		op := func(id, ref string) string {
			return "  /" + id + ":\n    get:\n      operationId: " + id + "\n      parameters: [{$ref: \"" + ref + "\"}]\n" +
				"      responses: {\"204\": {description: none}}\n"
		}
		require.NoError(t, os.WriteFile(filepath.Join(docDir, "api.yaml"), []byte("openapi: 3.0.3\ninfo: {title: Links, version: \"1\"}\n"+
			"servers: [{url: \"http://127.0.0.1:1\"}]\npaths:\n"+op("viaOut", "models/out.yaml#/limit")+op("viaIn", "models/in.yaml#/limit")), 0o600))

		doc, err := gateway.Load(t.Context(), filepath.Join(docDir, "api.yaml"), nil)
		require.NoError(t, err)
		require.Len(t, doc.Warnings, 1)
		assert.Contains(t, doc.Warnings[0], `"models/out.yaml#/limit" not allowed`)
		assert.ElementsMatch(t, []string{"viaIn"}, keys(byName(t, doc)))
	})
	t.Run("parsed from bytes, an external reference is a warning", func(t *testing.T) {
		doc, err := gateway.Parse(t.Context(), readFile(t, "testdata/refs/api.yaml"))
		require.NoError(t, err)
		assert.NotEmpty(t, doc.Warnings)
		_, err = gateway.Operations(doc, nil, nil)
		require.Error(t, err, "no operation can be served")
		assert.Contains(t, err.Error(), "external reference")
	})
}

func TestAnOperationTheGatewayCannotServeIsSkippedNotTheDocument(t *testing.T) {
	doc, err := gateway.Parse(t.Context(), []byte(`{"openapi":"3.1.0","info":{"title":"t"},"servers":[{"url":"http://127.0.0.1:1"}],
		"paths":{
			"/orgs/{org}/attestations/{subject_digest}":{"get":{"operationId":"list","responses":{"200":{}}}},
			"/orgs/{org}/attestations/{attestation_id}":{"delete":{"operationId":"remove","responses":{"204":{"description":"gone"}}}},
			"/broken":{"get":{"operationId":"broken","parameters":[{"$ref":"#/components/parameters/missing"}],"responses":{"200":{"description":"ok"}}}},
			"/upload":{"put":{"operationId":"upload","requestBody":{"required":true,"content":{"image/png":{}}},"responses":{"200":{"description":"ok"}}}}}}`))
	require.NoError(t, err, "templates that differ only in parameter names, a response without description: not fatal")
	var logs bytes.Buffer
	gw, err := gateway.New(doc, newGuard(t, ctxfit.Config{}), &gateway.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer gw.Close()
	var names []string
	for _, op := range gw.Operations() {
		names = append(names, op.Tool.Name)
	}
	assert.ElementsMatch(t, []string{"list", "remove"}, names)
	assert.Equal(t, 2, gw.Stats().SkippedOperations)
	assert.Contains(t, logs.String(), `points to nothing in the document`)
	assert.Contains(t, logs.String(), `none of its media types (image/png)`)
	list := gw.Operations()[0]
	if list.Tool.Name != "list" {
		list = gw.Operations()[1]
	}
	assert.Equal(t, []any{"org", "subject_digest"}, schemaOf(t, list.Tool.InputSchema)["required"],
		"path parameters the document does not declare are required strings")
}

func TestAnAnswerOutsideItsOutputSchemaIsDeliveredAsText(t *testing.T) {
	var logs bytes.Buffer
	// The shop's getOrder answers an Order: id and customer are required.
	broken := `{"id":42,"note":"the mock broke its own document"}`
	_, gw, cs := shop(t, jsonReply(200, broken), &gateway.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	res := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
	require.False(t, res.IsError, mcpfittest.Texts(t, res))
	assert.Equal(t, broken, mcpfittest.Texts(t, res)[0], "the answer is delivered whole")
	assert.JSONEq(t, `{"text":`+strings.TrimSpace(string(mustJSON(t, broken)))+`}`, string(mustJSON(t, res.StructuredContent)),
		"under the text envelope the advertised schema admits")
	assert.Contains(t, logs.String(), "does not match the document's output schema")
	assert.EqualValues(t, 1, gw.Stats().OutputMismatches)

	t.Run("an answer that matches is the structured content", func(t *testing.T) {
		_, _, cs := shop(t, jsonReply(200, order), nil)
		res := mcpfittest.Call(t, cs, "getOrder", map[string]any{"id": "o1"})
		require.False(t, res.IsError, mcpfittest.Texts(t, res))
		assert.JSONEq(t, order, string(mustJSON(t, res.StructuredContent)))
	})
}

func TestTheDocumentIsReadWithoutCompilingItsSchemas(t *testing.T) {
	// A schema that does not compile (an invalid pattern) costs nothing at
	// start: it is compiled at the tool's first call, and then only logged.
	doc, err := gateway.Parse(context.Background(), []byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"servers":[{"url":"http://127.0.0.1:1"}],
		"paths":{"/a":{"get":{"operationId":"a","parameters":[{"name":"q","in":"query","schema":{"type":"string","pattern":"(["}}],"responses":{"204":{"description":"none"}}}}}}`))
	require.NoError(t, err)
	var logs bytes.Buffer
	gw, err := gateway.New(doc, newGuard(t, ctxfit.Config{}), &gateway.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer gw.Close()
	assert.NotContains(t, logs.String(), "does not compile")
}

func TestASwagger2ArrayParameterIsSentInItsCollectionFormat(t *testing.T) {
	doc, err := gateway.Parse(t.Context(), []byte(`{"swagger":"2.0","info":{"title":"t","version":"1"},"host":"127.0.0.1:1","basePath":"/v1",
		"paths":{"/items":{"get":{"operationId":"listItems","parameters":[
			{"name":"tags","in":"query","type":"array","items":{"type":"string"}},
			{"name":"ids","in":"query","type":"array","items":{"type":"integer"},"collectionFormat":"multi"},
			{"name":"words","in":"query","type":"array","items":{"type":"string"},"collectionFormat":"pipes"}],
		"responses":{"200":{"description":"ok"}}}}}}`))
	require.NoError(t, err)
	api := newFakeAPI(t, jsonReply(200, `[]`))
	_, cs := connect(t, doc, newGuard(t, ctxfit.Config{}), &gateway.Options{BaseURL: api.URL + "/v1"})
	res := mcpfittest.Call(t, cs, "listItems", map[string]any{"tags": []any{"a", "b"}, "ids": []any{1, 2}, "words": []any{"x", "y"}})
	require.False(t, res.IsError, mcpfittest.Texts(t, res))
	got, err := url.ParseQuery(api.requests()[len(api.requests())-1].Query)
	require.NoError(t, err)
	assert.Equal(t, []string{"a,b"}, got["tags"], "csv, Swagger 2.0's default: one comma-separated value")
	assert.Equal(t, []string{"1", "2"}, got["ids"], "multi: the parameter repeated")
	assert.Equal(t, []string{"x|y"}, got["words"], "pipes: one value joined by |")
}
