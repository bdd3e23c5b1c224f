package config_test

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
)

// env returns a getenv that reads m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

const (
	secretA = "secret-A-0123456789abcdefghijklmnopqrstuv"
	secretB = "secret-B-0123456789abcdefghijklmnopqrstuv"
)

func TestEnvVars(t *testing.T) {
	vars := config.EnvVars()
	typ := reflect.TypeFor[ctxfit.Config]()

	t.Run("every variable with a field names a Config field and its JSON key", func(t *testing.T) {
		for _, v := range vars {
			if v.Field == "" {
				assert.Empty(t, v.Key, v.Name)
				continue
			}
			// A dotted field is a field of a section: its key is dotted too.
			st, keys := typ, []string{}
			for name := range strings.SplitSeq(v.Field, ".") {
				f, ok := st.FieldByName(name)
				if !assert.True(t, ok, "%s: ctxfit.Config has no field %s", v.Name, v.Field) {
					break
				}
				key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				assert.Contains(t, f.Tag.Get("yaml"), key, v.Name)
				keys, st = append(keys, key), f.Type
			}
			assert.Equal(t, strings.Join(keys, "."), v.Key, v.Name)
		}
	})

	t.Run("every scalar Config field has a variable", func(t *testing.T) {
		byField := map[string]string{}
		for _, v := range vars {
			if v.Field != "" {
				byField[v.Field] = v.Name
			}
		}
		for f := range typ.Fields() {
			if f.Type.Kind() == reflect.Struct || f.Name == "Endpoints" {
				continue // Params and Endpoints are set in files only
			}
			assert.Contains(t, byField, f.Name, "ctxfit.Config.%s has no CTXFIT_* variable", f.Name)
		}
		for f := range reflect.TypeFor[ctxfit.WrapperConfig]().Fields() {
			assert.Contains(t, byField, "Wrapper."+f.Name, "ctxfit.Config.Wrapper.%s has no CTXFIT_* variable", f.Name)
		}
	})

	t.Run("names are unique and documented", func(t *testing.T) {
		seen := map[string]bool{}
		for _, v := range vars {
			assert.True(t, strings.HasPrefix(v.Name, "CTXFIT_"), v.Name)
			assert.False(t, seen[v.Name], "%s repeats", v.Name)
			seen[v.Name] = true
			assert.NotEmpty(t, v.Form, v.Name)
			assert.NotEmpty(t, v.Default, v.Name)
			assert.NotEmpty(t, v.Description, v.Name)
		}
		assert.True(t, seen[config.EnvConfig])
		assert.True(t, seen[config.EnvRedisURL])
	})

	t.Run("the secrets are marked secret", func(t *testing.T) {
		for _, v := range vars {
			want := v.Field == "Secret" || v.Field == "PreviousSecrets" || v.Name == config.EnvRedisURL
			assert.Equal(t, want, v.Secret, v.Name)
		}
	})

	t.Run("the returned table is a copy", func(t *testing.T) {
		mine := config.EnvVars()
		mine[0].Name = "CHANGED"
		assert.NotEqual(t, "CHANGED", config.EnvVars()[0].Name)
	})

	t.Run("the Markdown table has a row per variable", func(t *testing.T) {
		md := config.EnvMarkdown()
		assert.Len(t, strings.Split(strings.TrimSpace(md), "\n"), len(vars)+2)
		for _, v := range vars {
			assert.Contains(t, md, "`"+v.Name+"`")
		}
	})
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want ctxfit.Config
	}{
		{"no variables leave the base as it is", nil, ctxfit.Config{}},
		{"every variable sets its field", map[string]string{
			"CTXFIT_THRESHOLD":         "3000",
			"CTXFIT_HARD_CAP":          "9000",
			"CTXFIT_PAGE_SIZE":         "20",
			"CTXFIT_MAX_PAGE_SIZE":     "100",
			"CTXFIT_CHUNK_TOKENS":      "1000",
			"CTXFIT_CURSOR_TTL":        "15m",
			"CTXFIT_SECRET":            secretA,
			"CTXFIT_PREVIOUS_SECRETS":  secretB + "," + secretA,
			"CTXFIT_ENCODING":          "cl100k_base",
			"CTXFIT_MODE":              "replay",
			"CTXFIT_SHAPE_TIMEOUT":     "1500ms",
			"CTXFIT_MAX_BUFFER_BYTES":  "1048576",
			"CTXFIT_STORE_MAX_BYTES":   "17179869184",
			"CTXFIT_STORE_MAX_ITEMS":   "500",
			"CTXFIT_STORE_TIMEOUT":     "250ms",
			"CTXFIT_ESTIMATE_SAMPLE":   "0.5",
			"CTXFIT_REDIS_URL":         "redis://user:pass@localhost:6379/0",
			"CTXFIT_CONFIG":            "/does/not/matter.yaml",
			"CTXFIT_COMPACT_OUTPUT":    "false",
			"CTXFIT_COLLECT_METRICS":   "true",
			"CTXFIT_METRICS_FILE":      "/var/log/ctxfit/metrics.jsonl",
			"CTXFIT_FORMAT_LOG_FILE":   "/var/log/ctxfit/formats.jsonl",
			"CTXFIT_SLOW_THRESHOLD_MS": "20",
			"CTXFIT_FORMAT_TIMEOUT_MS": "80",
		}, ctxfit.Config{
			Threshold: 3000, HardCap: 9000, PageSize: 20, MaxPageSize: 100, ChunkTokens: 1000,
			CursorTTL: ctxfit.Duration(15 * time.Minute), Secret: secretA,
			PreviousSecrets: []string{secretB, secretA}, Encoding: "cl100k_base", Mode: "replay",
			ShapeTimeout: ctxfit.Duration(1500 * time.Millisecond), MaxBufferBytes: 1 << 20,
			StoreMaxBytes: 16 << 30, StoreMaxItems: 500, EstimateSample: 0.5,
			StoreTimeout: ctxfit.Duration(250 * time.Millisecond),
			RedisURL:     "redis://user:pass@localhost:6379/0",
			Wrapper: ctxfit.WrapperConfig{CompactOutput: new(false), CollectMetrics: true,
				MetricsFile: "/var/log/ctxfit/metrics.jsonl", LogFile: "/var/log/ctxfit/formats.jsonl",
				SlowThresholdMs: 20, TimeoutMs: 80},
		}},
		{"spaces around values and list entries are removed", map[string]string{
			"CTXFIT_THRESHOLD":        " 3000\n",
			"CTXFIT_MODE":             " replay ",
			"CTXFIT_PREVIOUS_SECRETS": " " + secretA + " , " + secretB + " ",
		}, ctxfit.Config{Threshold: 3000, Mode: "replay", PreviousSecrets: []string{secretA, secretB}}},
		{"an empty variable leaves the setting alone", map[string]string{"CTXFIT_THRESHOLD": ""}, ctxfit.Config{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.FromEnv(ctxfit.Config{}, env(tt.env))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("variables override the base and keep the rest", func(t *testing.T) {
		base := ctxfit.Config{Threshold: 1000, HardCap: 5000, Endpoints: []ctxfit.Endpoint{{Match: "x"}}}
		got, err := config.FromEnv(base, env(map[string]string{"CTXFIT_HARD_CAP": "6000"}))
		require.NoError(t, err)
		assert.Equal(t, ctxfit.Config{Threshold: 1000, HardCap: 6000, Endpoints: []ctxfit.Endpoint{{Match: "x"}}}, got)
		assert.Equal(t, 5000, base.HardCap, "the base is not modified")
	})

	t.Run("the result shares nothing with the base", func(t *testing.T) {
		format := &ctxfit.OutputFormat{Template: "{{.a}}", ExtractFields: []string{"a"}, Transforms: map[string]string{"a": "truncateUuid"}}
		base := ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "x", OutputFormat: format}}, Wrapper: ctxfit.WrapperConfig{CompactOutput: new(true)}}
		got, err := config.FromEnv(base, env(map[string]string{"CTXFIT_COMPACT_OUTPUT": "false"}))
		require.NoError(t, err)
		assert.False(t, *got.Wrapper.CompactOutput)
		assert.True(t, *base.Wrapper.CompactOutput, "the base keeps its switch")
		got.Endpoints[0].OutputFormat.ExtractFields[0] = "changed"
		got.Endpoints[0].OutputFormat.Transforms["a"] = "changed"
		assert.Equal(t, "a", format.ExtractFields[0], "nor does it share the format's fields")
		assert.Equal(t, "truncateUuid", format.Transforms["a"], "or transforms")
	})

	t.Run("a nil getenv reads the process environment", func(t *testing.T) {
		t.Setenv("CTXFIT_PAGE_SIZE", "7")
		got, err := config.FromEnv(ctxfit.Config{}, nil)
		require.NoError(t, err)
		assert.Equal(t, 7, got.PageSize)
	})
}

func TestFromEnvErrors(t *testing.T) {
	tests := []struct {
		name, variable, value string
		want                  []string // substrings of the error
	}{
		{"a word for a number names the variable, value and form", "CTXFIT_THRESHOLD", "lots",
			[]string{"config: CTXFIT_THRESHOLD=\"lots\"", "whole number such as 4000"}},
		{"a fraction for a whole number is rejected", "CTXFIT_PAGE_SIZE", "2.5",
			[]string{"CTXFIT_PAGE_SIZE=\"2.5\"", "whole number"}},
		{"an overflowing number is rejected", "CTXFIT_STORE_MAX_ITEMS", "99999999999999999999",
			[]string{"CTXFIT_STORE_MAX_ITEMS", "whole number"}},
		{"a duration without unit is rejected", "CTXFIT_CURSOR_TTL", "600",
			[]string{"CTXFIT_CURSOR_TTL=\"600\"", "Go duration", "10m"}},
		{"a malformed shape timeout is rejected", "CTXFIT_SHAPE_TIMEOUT", "2 seconds",
			[]string{"CTXFIT_SHAPE_TIMEOUT", "Go duration"}},
		{"NaN is not a fraction", "CTXFIT_ESTIMATE_SAMPLE", "NaN",
			[]string{"CTXFIT_ESTIMATE_SAMPLE=\"NaN\"", "number from 0 to 1"}},
		{"a fraction above one fails validation naming the variable", "CTXFIT_ESTIMATE_SAMPLE", "1.5",
			[]string{"CTXFIT_ESTIMATE_SAMPLE", "estimateSample 1.5 must be <= 1"}},
		{"a negative number fails validation", "CTXFIT_CHUNK_TOKENS", "-1",
			[]string{"CTXFIT_CHUNK_TOKENS", "chunkTokens -1 must be >= 0"}},
		{"an unknown encoding fails validation", "CTXFIT_ENCODING", "gpt2",
			[]string{"CTXFIT_ENCODING", `encoding "gpt2" must be one of: o200k_base cl100k_base`}},
		{"an unknown mode fails validation", "CTXFIT_MODE", "cache",
			[]string{"CTXFIT_MODE", "must be one of: store replay"}},
		{"a word for a switch is rejected", "CTXFIT_COMPACT_OUTPUT", "maybe",
			[]string{"CTXFIT_COMPACT_OUTPUT=\"maybe\"", "true or false"}},
		{"a format time limit over 100 ms fails validation", "CTXFIT_FORMAT_TIMEOUT_MS", "250",
			[]string{"CTXFIT_FORMAT_TIMEOUT_MS", "wrapper.timeoutMs 250 must be <= 100"}},
		{"a slow threshold at the time limit fails validation", "CTXFIT_SLOW_THRESHOLD_MS", "100",
			[]string{"CTXFIT_SLOW_THRESHOLD_MS", "wrapper.slowThresholdMs 100 must be < wrapper.timeoutMs 100"}},
		{"metrics without a file fail validation", "CTXFIT_COLLECT_METRICS", "true",
			[]string{"CTXFIT_COLLECT_METRICS", "wrapper.metricsFile is required"}},
		{"a hard cap below the threshold fails validation", "CTXFIT_HARD_CAP", "100",
			[]string{"config: invalid settings from CTXFIT_HARD_CAP", "hardCap 100 must be >= threshold 4000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := ctxfit.Config{PageSize: 10}
			got, err := config.FromEnv(base, env(map[string]string{tt.variable: tt.value}))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "config: "), err.Error())
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, base, got, "on error the base comes back")
		})
	}

	t.Run("secrets are never echoed", func(t *testing.T) {
		short := "short-secret-value"
		for _, e := range []map[string]string{
			{"CTXFIT_SECRET": short},
			{"CTXFIT_PREVIOUS_SECRETS": short},
			{"CTXFIT_PREVIOUS_SECRETS": secretA + ",," + short},
			{"CTXFIT_PREVIOUS_SECRETS": short + ","},
		} {
			_, err := config.FromEnv(ctxfit.Config{}, env(e))
			require.Error(t, err)
			assert.NotContains(t, err.Error(), short)
			assert.NotContains(t, err.Error(), secretA)
			assert.Contains(t, err.Error(), "CTXFIT_")
		}
	})

	t.Run("an empty entry in the previous secrets is reported by position", func(t *testing.T) {
		_, err := config.FromEnv(ctxfit.Config{}, env(map[string]string{"CTXFIT_PREVIOUS_SECRETS": secretA + ",," + secretB}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "CTXFIT_PREVIOUS_SECRETS (value not shown)")
		assert.Contains(t, err.Error(), "entry 2 of 3 is empty")
	})

	t.Run("every malformed variable is reported at once", func(t *testing.T) {
		_, err := config.FromEnv(ctxfit.Config{}, env(map[string]string{
			"CTXFIT_THRESHOLD": "x", "CTXFIT_CURSOR_TTL": "y",
		}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "CTXFIT_THRESHOLD")
		assert.Contains(t, err.Error(), "CTXFIT_CURSOR_TTL")
	})

	t.Run("an invalid base with no variables is blamed on the base", func(t *testing.T) {
		_, err := config.FromEnv(ctxfit.Config{Threshold: -1}, env(nil))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "config: invalid settings from the base settings: threshold -1 must be >= 0")
	})
}

func TestTheDocsHaveTheConfigurationTable(t *testing.T) {
	readme, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), config.EnvMarkdown(), "docs/configuration.md's table is config.EnvMarkdown(); paste it again")
}
