package ctxfit_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
)

func TestConfigValidate(t *testing.T) {
	format := func(f ctxfit.OutputFormat) ctxfit.Config {
		return ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "search_nodes", OutputFormat: &f}}}
	}
	valid := ctxfit.OutputFormat{Template: "{{len .nodes}} nodes", ExtractFields: []string{"nodes.name"}}
	tests := []struct {
		name    string
		cfg     ctxfit.Config
		wantErr string
	}{
		{"the zero config is the default and valid", ctxfit.Config{}, ""},
		{"a hard cap below the threshold is refused", ctxfit.Config{Threshold: 500, HardCap: 100}, "hardCap 100 must be >= threshold 500"},
		{"a negative threshold is refused", ctxfit.Config{Threshold: -1}, "threshold -1 must be >= 0"},
		{"a short secret is refused", ctxfit.Config{Secret: "short"}, "secret must be at least 32"},
		{"an unknown mode is refused", ctxfit.Config{Mode: "magic"}, `mode "magic" must be one of: store replay`},
		{"an unknown encoding is refused", ctxfit.Config{Encoding: "p50k_base"}, "encoding"},
		{"a page size over the maximum is refused", ctxfit.Config{PageSize: 300}, "pageSize 300 must be <= maxPageSize 200"},
		{"an endpoint without match is refused", ctxfit.Config{Endpoints: []ctxfit.Endpoint{{}}}, "endpoints[0].match is required"},
		{"an endpoint page size over its maximum is refused", ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "x", PageSize: 20, MaxPageSize: 10}}}, "endpoints[0] (x): pageSize 20 must be <= maxPageSize 10"},
		{"repeated endpoints are refused", ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "x"}, {Match: "x"}}}, `match "x" repeats`},
		{"a format with a template and fields is valid", format(valid), ""},
		{"the wrapper's defaults are valid", ctxfit.Config{Wrapper: ctxfit.WrapperConfig{}}, ""},
		{"a slow threshold below the time limit is valid", ctxfit.Config{Wrapper: ctxfit.WrapperConfig{SlowThresholdMs: 20, TimeoutMs: 30}}, ""},
		{"a slow threshold equal to the time limit is refused",
			ctxfit.Config{Wrapper: ctxfit.WrapperConfig{SlowThresholdMs: 80, TimeoutMs: 80}},
			"wrapper.slowThresholdMs 80 must be < wrapper.timeoutMs 80"},
		{"a time limit below the default slow threshold is refused, naming the default",
			ctxfit.Config{Wrapper: ctxfit.WrapperConfig{TimeoutMs: 40}},
			"wrapper.slowThresholdMs 50 must be < wrapper.timeoutMs 40"},
		{"a time limit over 100 ms is refused",
			ctxfit.Config{Wrapper: ctxfit.WrapperConfig{TimeoutMs: 150}}, "wrapper.timeoutMs 150 must be <= 100"},
		{"a negative slow threshold is refused",
			ctxfit.Config{Wrapper: ctxfit.WrapperConfig{SlowThresholdMs: -1}}, "wrapper.slowThresholdMs -1 must be >= 0"},
		{"metrics without a file are refused",
			ctxfit.Config{Wrapper: ctxfit.WrapperConfig{CollectMetrics: true}}, "wrapper.metricsFile is required when wrapper.collectMetrics is true"},
		{"a format without a template is refused",
			format(ctxfit.OutputFormat{ExtractFields: []string{"a"}}), "endpoints[0].outputFormat.template is required"},
		{"a format without fields is refused",
			format(ctxfit.OutputFormat{Template: "{{.a}}"}), "endpoints[0].outputFormat.extractFields must list at least 1 entries"},
		{"a template that does not parse is refused with the endpoint",
			format(ctxfit.OutputFormat{Template: "{{range .a}}", ExtractFields: []string{"a"}}),
			"endpoints[0] (search_nodes): outputFormat: summary: output format \"search_nodes\": the template does not parse"},
		{"a template without a placeholder is refused",
			format(ctxfit.OutputFormat{Template: "nothing", ExtractFields: []string{"a"}}), "at least one placeholder"},
		{"an unknown transform is refused",
			format(ctxfit.OutputFormat{Template: "{{.a}}", ExtractFields: []string{"a"}, Transforms: map[string]string{"a": "shout"}}),
			`transform "shout" of "a" is not one of relativeTime, truncateUuid, truncateText:N`},
		{"truncateText without a length is refused",
			format(ctxfit.OutputFormat{Template: "{{.a}}", ExtractFields: []string{"a"}, Transforms: map[string]string{"a": "truncateText"}}),
			"is not one of"},
		{"a bad format ID is refused",
			format(ctxfit.OutputFormat{FormatID: "a-b", Template: "{{.a}}", ExtractFields: []string{"a"}}), "letters, digits and underscores"},
		{"a negative maximum length is refused",
			format(ctxfit.OutputFormat{Template: "{{.a}}", ExtractFields: []string{"a"}, MaxLength: -1}), "endpoints[0].outputFormat.maxLength -1 must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestDurationReadsStringsAndSeconds(t *testing.T) {
	var v struct {
		A ctxfit.Duration `json:"a"`
		B ctxfit.Duration `json:"b"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"a":"10m","b":1.5}`), &v))
	assert.Equal(t, ctxfit.Duration(10*time.Minute), v.A)
	assert.Equal(t, ctxfit.Duration(1500*time.Millisecond), v.B)
	assert.Error(t, json.Unmarshal([]byte(`{"a":1e300}`), &v), "an out-of-range number is refused")
	assert.Error(t, json.Unmarshal([]byte(`{"a":"soon"}`), &v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":"10m0s","b":"1.5s"}`, string(out))
}
