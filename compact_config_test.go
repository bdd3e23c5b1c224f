package ctxfit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
)

func TestConfigValidateOutputFormats(t *testing.T) {
	format := func(f ctxfit.OutputFormat) ctxfit.Config {
		return ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "search_nodes", OutputFormat: &f}}}
	}
	valid := ctxfit.OutputFormat{Template: "{{len .nodes}} nodes", ExtractFields: []string{"nodes.name"}}
	tests := []struct {
		name    string
		cfg     ctxfit.Config
		wantErr string
	}{
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
