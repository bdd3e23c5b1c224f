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
