package gateway_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config/settings"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// TestSummariesOfAGatewayToolFollowItsSettings configures, as a settings
// file would (an endpoint per tool name), the API-to-MCP gateway seed's
// summary of an animal: its three highest-accuracy traits, each at least
// 50, and the fields projected.
func TestSummariesOfAGatewayToolFollowItsSettings(t *testing.T) {
	doc, err := gateway.Parse(t.Context(), []byte(`{"openapi":"3.1.0","info":{"title":"nsip","version":"1"},
		"paths":{"/animals/{id}":{"get":{"operationId":"getAnimal","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],
		"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object"}}}}}}}}}`))
	require.NoError(t, err)
	var traits []string
	for i := range 40 {
		traits = append(traits, fmt.Sprintf(`{"name":"trait %d","value":%d.5,"accuracy":%d,"notes":"%s"}`, i, i, 30+i, strings.Repeat("n", 200)))
	}
	animal := `{"id":"a1","breed":"Katahdin","gender":"Female","dateOfBirth":"2024-03-01","status":"CURRENT",` +
		`"flock":"F-12","sire":"s9","dam":"d4","traits":[` + strings.Join(traits, ",") + `]}`
	api := newFakeAPI(t, jsonReply(200, animal))
	off := false
	g := newGuard(t, ctxfit.Config{Threshold: 500, Endpoints: []ctxfit.Endpoint{{
		Match: "getAnimal", Pagination: &off, Chunking: &off,
		SummaryFields: []string{"id", "breed", "traits.name", "traits.accuracy"},
		SummaryTopN:   []settings.TopN{{Path: "traits", Score: "accuracy", N: 3, Min: 50}},
	}}})
	_, cs := connect(t, doc, g, &gateway.Options{BaseURL: api.URL})
	res := mcpfittest.Call(t, cs, "getAnimal", map[string]any{"id": "a1"})
	require.False(t, res.IsError, mcpfittest.Texts(t, res))
	assert.Equal(t, "summary", res.Meta["dev.ctxfit/strategy"])
	var got struct {
		Summary map[string]any `json:"summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(mcpfittest.Texts(t, res)[0]), &got))
	assert.Equal(t, map[string]any{"id": "a1", "breed": "Katahdin", "traits": []any{
		map[string]any{"name": "trait 39", "accuracy": 69.0},
		map[string]any{"name": "trait 38", "accuracy": 68.0},
		map[string]any{"name": "trait 37", "accuracy": 67.0},
	}}, got.Summary)
}
