package config_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/config/settings"
)

func ptr[T any](v T) *T { return &v }

// example is what testdata/example.{json,yaml} hold: every setting but
// the secrets, which belong in the environment.
var example = ctxfit.Config{
	Threshold: 4000, HardCap: 12000, PageSize: 50, MaxPageSize: 200, ChunkTokens: 2000,
	Encoding: "o200k_base", CursorTTL: ctxfit.Duration(10 * time.Minute),
	Mode: "store", ShapeTimeout: ctxfit.Duration(2 * time.Second),
	MaxBufferBytes: 8 << 20, MaxConcurrentShaping: 4, MaxShapingBytes: 256 << 20, MaxShapingPerSubject: 2,
	AdmissionWait: ctxfit.Duration(2 * time.Second), StoreMaxBytes: 64 << 20, StoreMaxItems: 10000, EstimateSample: 0.01,
	StoreTimeout:        ctxfit.Duration(500 * time.Millisecond),
	ImagePixelsPerToken: 750, ImageMaxEdge: 1568, ImageMaxTokens: 1600, AudioTokensPerSecond: 32,
	MaxResultSizeChars: 96000,
	CatalogBudget:      12000,
	ToolBudget:         1500,
	CatalogTools:       []string{"get_booking", "bookings"},
	RedisURL:           "redis://localhost:6379/0",
	Params: ctxfit.Params{Cursor: "cursor", Limit: "limit", Fields: "fields", StartLine: "startLine", EndLine: "endLine", Part: "part",
		Search: "search", SearchPath: "searchPath", SearchContext: "searchContext", Query: "jq", Format: "format"},
	Endpoints: []ctxfit.Endpoint{
		{
			Match: "GET /api/v1/bookings", Threshold: 3000, HardCap: 8000, PageSize: 25, MaxPageSize: 100,
			ChunkTokens: 1500, Pagination: ptr(true), Summary: ptr(true), Chunking: ptr(false),
			ArrayPath: "data.items", SummaryFields: []string{"id", "status", "guest.name"},
			SummaryTopN:     []settings.TopN{{Path: "rooms", Score: "rating", N: 3, Min: 50}},
			DetailsEndpoint: "/api/v1/bookings/{id}",
			Format:          "toon",
			OutputFormat: &ctxfit.OutputFormat{
				FormatID:      "bookings",
				Template:      "{{len .data.items}} bookings:\n{{range .data.items}}- {{.id}} {{.status}} {{.guest.name}}, {{.createdAt}}\n{{end}}",
				ExtractFields: []string{"data.items.id", "data.items.status", "data.items.guest.name", "data.items.createdAt"},
				Transforms:    map[string]string{"data.items.createdAt": "relativeTime"},
				MaxLength:     20000,
			},
		},
		{Match: "read_log", Compare: true},
		{Match: "GET /healthz", Disabled: true},
	},
	Wrapper: ctxfit.WrapperConfig{
		CompactOutput: ptr(true), CollectMetrics: true,
		MetricsFile: "/var/log/ctxfit/metrics.jsonl", LogFile: "/var/log/ctxfit/formats.jsonl",
		SlowThresholdMs: 50, TimeoutMs: 100,
	},
	Gateway: settings.GatewayRoutes{
		Include: []string{"bookings", "GET /api/v1/logs/*"}, Exclude: []string{"deleteBooking"},
		Resources: []string{"getBooking"}, Names: map[string]string{"listBookings": "bookings"},
	},
}

// writeFile writes content to name in a fresh temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestLoadFileExamples(t *testing.T) {
	for _, name := range []string{"example.yaml", "example.json"} {
		t.Run(name+" holds the documented example", func(t *testing.T) {
			got, err := config.LoadFile(filepath.Join("testdata", name))
			require.NoError(t, err)
			assert.Equal(t, example, got)
		})
	}

	t.Run("the example sets every field, so it documents them all", func(t *testing.T) {
		assertAllSet(t, reflect.ValueOf(example), "Config")
		assertAllSet(t, reflect.ValueOf(example.Endpoints[0]), "Endpoints[0]")
	})
}

// assertAllSet fails for every zero field of the struct v, except the
// Endpoint switches whose non-zero value the other examples show, and the
// secrets, which a shipped example must not write (its comments name
// them).
func assertAllSet(t *testing.T, v reflect.Value, name string) {
	t.Helper()
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if name == "Endpoints[0]" && (sf.Name == "Disabled" || sf.Name == "Compare") {
			continue
		}
		if name == "Config" && (sf.Name == "Secret" || sf.Name == "PreviousSecrets") {
			continue
		}
		if sf.Type.Kind() == reflect.Struct {
			assertAllSet(t, f, name+"."+sf.Name)
			continue
		}
		assert.False(t, f.IsZero(), "%s.%s is not set in the example", name, sf.Name)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		format config.Format
		want   ctxfit.Config
	}{
		{"JSON is detected by its opening brace", "  \n{\"threshold\": 100}", config.FormatDetect, ctxfit.Config{Threshold: 100}},
		{"YAML is detected otherwise", "threshold: 100\n", config.FormatDetect, ctxfit.Config{Threshold: 100}},
		{"flow YAML is read as JSON when detected", `{threshold: 100}`, config.FormatYAML, ctxfit.Config{Threshold: 100}},
		{"JSON reads durations as strings", `{"cursorTTL": "90s"}`, config.FormatJSON, ctxfit.Config{CursorTTL: ctxfit.Duration(90 * time.Second)}},
		{"JSON reads durations as seconds", `{"cursorTTL": 1.5}`, config.FormatJSON, ctxfit.Config{CursorTTL: ctxfit.Duration(1500 * time.Millisecond)}},
		{"YAML reads durations as strings", "cursorTTL: 1h30m\nshapeTimeout: \"250ms\"", config.FormatYAML,
			ctxfit.Config{CursorTTL: ctxfit.Duration(90 * time.Minute), ShapeTimeout: ctxfit.Duration(250 * time.Millisecond)}},
		{"YAML null durations are zero", "cursorTTL: ~\nthreshold: 1", config.FormatYAML, ctxfit.Config{Threshold: 1}},
		{"an empty object means all defaults", "{}", config.FormatDetect, ctxfit.Config{}},
		{"a YAML document of null means all defaults", "null\n", config.FormatYAML, ctxfit.Config{}},
		{"YAML anchors work", "previousSecrets: [&s " + secretA + "]\nsecret: *s", config.FormatYAML,
			ctxfit.Config{Secret: secretA, PreviousSecrets: []string{secretA}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.Parse([]byte(tt.data), tt.format)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]config.Format{
		"a.json": config.FormatJSON, "a.JSON": config.FormatJSON, "a.yaml": config.FormatYAML,
		"/etc/ctxfit/a.yml": config.FormatYAML, "ctxfit.conf": config.FormatDetect, "ctxfit": config.FormatDetect,
	} {
		t.Run(path+" is "+want.String(), func(t *testing.T) {
			assert.Equal(t, want, config.FormatOf(path))
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	short := "too-short-secret"
	tests := []struct {
		name, file, content string
		want                []string // substrings of the error, after "config: <path>"
		notWant             string
	}{
		{"an unknown JSON field is rejected", "c.json", `{"threshold": 1, "treshold": 2}`,
			[]string{`unknown field "treshold"`, "correct its spelling"}, ""},
		{"an unknown YAML field is rejected with its line", "c.yaml", "threshold: 1\ntreshold: 2\n",
			[]string{`line 2: unknown field "treshold"`}, ""},
		{"an unknown endpoint field is rejected", "c.yaml", "endpoints:\n  - match: x\n    limit: 3\n",
			[]string{`line 3: unknown field "limit"`}, ""},
		{"an unknown nested JSON field is rejected", "c.json", `{"params": {"page": "p"}}`,
			[]string{`unknown field "page"`}, ""},
		{"a hard cap below the threshold names both and the rule", "c.yaml", "threshold: 5000\nhardCap: 100\n",
			[]string{"invalid settings from", "hardCap 100 must be >= threshold 5000"}, ""},
		{"an endpoint's hard cap below its threshold names the endpoint", "c.json",
			`{"endpoints": [{"match": "list", "threshold": 900, "hardCap": 800}]}`,
			[]string{"endpoints[0] (list): hardCap 800 must be >= threshold 900"}, ""},
		{"an endpoint without match is rejected", "c.yaml", "endpoints:\n  - pageSize: 3\n",
			[]string{"endpoints[0].match is required"}, ""},
		{"a repeated endpoint is rejected", "c.yaml", "endpoints:\n  - match: a\n  - match: a\n",
			[]string{`endpoints[1]: match "a" repeats endpoints[0]`}, ""},
		{"a page size above the maximum is rejected", "c.json", `{"pageSize": 300}`,
			[]string{"pageSize 300 must be <= maxPageSize 200"}, ""},
		{"a negative number is rejected", "c.yaml", "storeMaxItems: -1",
			[]string{"storeMaxItems -1 must be >= 0"}, ""},
		{"an unknown mode is rejected", "c.yaml", "mode: cache",
			[]string{`mode "cache" must be one of: store replay`}, ""},
		{"a short secret is rejected without being echoed", "c.yaml", "secret: " + short,
			[]string{"secret must be at least 32"}, short},
		{"a short previous secret is rejected without being echoed", "c.json", `{"previousSecrets": ["` + short + `"]}`,
			[]string{"previousSecrets[0] must be at least 32"}, short},
		{"a YAML secret list where a string belongs is not echoed", "c.yaml", "secret: [" + short + "]",
			[]string{"line 1: field secret: want a string"}, short},
		{"a YAML secret string where a list belongs is not echoed", "c.yaml", "previousSecrets: " + short,
			[]string{"line 1: field previousSecrets: want a list"}, short},
		{"a JSON secret of the wrong type is not echoed", "c.json", `{"previousSecrets": "` + short + `"}`,
			[]string{"field previousSecrets: got string, want a list"}, short},
		{"a JSON string for a number names the field and the line", "c.json", "{\n  \"threshold\": \"4000\"\n}",
			[]string{"line 2", "field threshold: got string, want a whole number"}, ""},
		{"a YAML string for a number names the line", "c.yaml", "pageSize: ten",
			[]string{"line 1: cannot unmarshal !!str `ten` into int"}, ""},
		{"a YAML list where an object belongs names the type as ctxfit's", "c.yaml", "params: [cursor]\nendpoints: 3\n",
			[]string{"line 1: cannot unmarshal !!seq into ctxfit.Params", "line 2: cannot unmarshal !!int `3` into []ctxfit.Endpoint"}, "settings."},
		{"a JSON duration without unit names the field", "c.json", `{"cursorTTL": "10"}`,
			[]string{`field cursorTTL: "10" is not a duration`, "10m"}, ""},
		{"a YAML duration without unit names the field and line", "c.yaml", "threshold: 1\nshapeTimeout: 2\n",
			[]string{`line 2: field shapeTimeout: "2" is not a duration`, `write "600s"`}, ""},
		{"a JSON duration beyond the range of time.Duration is rejected", "c.json", `{"shapeTimeout": 1e300}`,
			[]string{"field shapeTimeout: 1e300 seconds is out of range"}, ""},
		{"a negative duration is rejected", "c.yaml", "cursorTTL: -1m",
			[]string{"cursorTTL", "must be >= 0"}, ""},
		{"JSON syntax errors give line and column", "c.json", "{\n  \"threshold\": 1,\n}",
			[]string{"line 3, column 1", "fix the JSON syntax"}, ""},
		{"YAML syntax errors give the line", "c.yaml", "threshold: 1\n  hardCap: [\n",
			[]string{"line", "fix the YAML syntax"}, ""},
		{"a truncated JSON object is rejected", "c.json", `{"threshold": 1`,
			[]string{"incomplete"}, ""},
		{"data after the JSON object is rejected", "c.json", `{"threshold": 1} {"threshold": 2}`,
			[]string{"line 1, column 18", "one JSON object"}, ""},
		{"a second YAML document is rejected", "c.yaml", "threshold: 1\n---\nthreshold: 2\n",
			[]string{"second YAML document"}, ""},
		{"an empty file is rejected", "c.yaml", " \n\t\n",
			[]string{"empty", "write {}"}, ""},
		{"a comment-only YAML file is rejected", "c.yaml", "# nothing yet\n",
			[]string{"empty"}, ""},
		{"an empty JSON file is rejected", "c.json", "",
			[]string{"empty"}, ""},
		{"a JSON array is not settings", "c.json", `[1, 2]`,
			[]string{"must be a JSON object, not array"}, ""},
		{"a YAML list is not settings", "c.yaml", "- threshold: 1",
			[]string{"line 1: the settings must be a mapping"}, ""},
		{"a file without extension is detected as JSON", "ctxfit.conf", `{"hardCap": 1}`,
			[]string{"hardCap 1 must be >= threshold 4000"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file, tt.content)
			got, err := config.LoadFile(path)
			require.Error(t, err)
			assert.Equal(t, ctxfit.Config{}, got)
			assert.True(t, strings.HasPrefix(err.Error(), "config: "), err.Error())
			assert.Contains(t, err.Error(), path, "the error names the file")
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			if tt.notWant != "" {
				assert.NotContains(t, err.Error(), tt.notWant)
			}
		})
	}

	t.Run("a missing file is fs.ErrNotExist", func(t *testing.T) {
		_, err := config.LoadFile(filepath.Join(t.TempDir(), "absent.yaml"))
		require.ErrorIs(t, err, fs.ErrNotExist)
		assert.Contains(t, err.Error(), "config: read settings file")
	})

	t.Run("an unknown format is rejected by Parse", func(t *testing.T) {
		_, err := config.Parse([]byte("{}"), config.Format(9))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "config: unknown format Format(9)")
	})

	t.Run("a long list of YAML errors is cut short", func(t *testing.T) {
		_, err := config.Parse([]byte("a: 1\nb: 1\nc: 1\nd: 1\ne: 1\nf: 1\ng: 1\n"), config.FormatYAML)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `line 5: unknown field "e"; and 2 more: remove unknown fields`)
		assert.NotContains(t, err.Error(), `"f"`)
	})

	t.Run("Parse names the detected format of an invalid document", func(t *testing.T) {
		_, err := config.Parse([]byte(`{"hardCap": 1}`), config.FormatDetect)
		require.EqualError(t, err, "config: invalid settings from the JSON document: hardCap 1 must be >= threshold 4000")
	})

	t.Run("Parse names the format of an invalid document", func(t *testing.T) {
		_, err := config.Parse([]byte("hardCap: 1"), config.FormatYAML)
		require.EqualError(t, err, "config: invalid settings from the YAML document: hardCap 1 must be >= threshold 4000")
	})
}
