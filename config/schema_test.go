package config_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/ctxfit/ctxfit/config"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(config.Schema()))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("schema.json", doc))
	s, err := c.Compile("schema.json")
	require.NoError(t, err)
	return s
}

// instance reads a YAML or JSON settings document as the schema validator
// wants it.
func instance(t *testing.T, doc string) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	return inst
}

func TestTheExamplesValidateAgainstTheSchema(t *testing.T) {
	s := compileSchema(t)
	for _, name := range []string{"example.yaml", "example.json"} {
		t.Run(name+" is accepted", func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", name))
			require.NoError(t, err)
			assert.NoError(t, s.Validate(instance(t, string(b))))
			_, err = config.LoadFile(filepath.Join("testdata", name))
			require.NoError(t, err, "and Load accepts it too")
		})
	}
}

func TestTheSchemaRejectsWhatLoadRejects(t *testing.T) {
	s := compileSchema(t)
	tests := []struct{ name, doc string }{
		{"an unknown key", "thresold: 3000\n"},
		{"an unknown key in an endpoint", "endpoints:\n  - match: x\n    limit: 3\n"},
		{"a negative threshold", "threshold: -1\n"},
		{"an unknown mode", "mode: fast\n"},
		{"an unknown encoding", "encoding: p50k_base\n"},
		{"a short secret", "secret: short\n"},
		{"a short previous secret", "previousSecrets: [short]\n"},
		{"a sample above 1", "estimateSample: 1.5\n"},
		{"a duration that is not one", "cursorTTL: forever\n"},
		{"an endpoint without match", "endpoints:\n  - threshold: 10\n"},
		{"a string where a number goes", "pageSize: ten\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is rejected by both", func(t *testing.T) {
			assert.Error(t, s.Validate(instance(t, tt.doc)))
			_, err := config.Parse([]byte(tt.doc), config.FormatYAML)
			assert.Error(t, err)
		})
	}
}

func TestTheSchemaAcceptsDurationsAsStringsOrSeconds(t *testing.T) {
	s := compileSchema(t)
	for _, doc := range []string{"cursorTTL: 10m\n", "cursorTTL: 1h30m\n", "shapeTimeout: 1.5s\n", `{"cursorTTL": 600}`} {
		assert.NoError(t, s.Validate(instance(t, doc)), doc)
	}
}
