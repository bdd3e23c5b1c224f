package config_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
)

func TestLoad(t *testing.T) {
	file := writeFile(t, "ctxfit.yaml", "threshold: 3000\nhardCap: 9000\npageSize: 10\n")
	other := writeFile(t, "other.json", `{"threshold": 1000}`)
	tests := []struct {
		name string
		path string
		env  map[string]string
		want ctxfit.Config
	}{
		{"no file and no variables give the defaults", "", nil, ctxfit.Config{}},
		{"the file overrides the defaults", file, nil, ctxfit.Config{Threshold: 3000, HardCap: 9000, PageSize: 10}},
		{"variables override the file", file, map[string]string{"CTXFIT_HARD_CAP": "7000", "CTXFIT_MODE": "replay"},
			ctxfit.Config{Threshold: 3000, HardCap: 7000, PageSize: 10, Mode: "replay"}},
		{"CTXFIT_CONFIG names the file when the path is empty", "", map[string]string{"CTXFIT_CONFIG": file},
			ctxfit.Config{Threshold: 3000, HardCap: 9000, PageSize: 10}},
		{"the path argument wins over CTXFIT_CONFIG", other, map[string]string{"CTXFIT_CONFIG": file},
			ctxfit.Config{Threshold: 1000}},
		{"settings are validated after merging, so a variable may complete the file", writeFile(t, "partial.yaml", "hardCap: 600\n"),
			map[string]string{"CTXFIT_THRESHOLD": "50"}, ctxfit.Config{Threshold: 50, HardCap: 600}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.Load(tt.path, env(tt.env))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("an invalid merge names the file and the variables", func(t *testing.T) {
		_, err := config.Load(file, env(map[string]string{"CTXFIT_HARD_CAP": "10", "CTXFIT_PAGE_SIZE": "5"}))
		require.Error(t, err)
		assert.Equal(t, "config: invalid settings from "+file+", CTXFIT_HARD_CAP, CTXFIT_PAGE_SIZE: hardCap 10 must be >= threshold 3000", err.Error())
	})

	t.Run("a malformed variable fails the load", func(t *testing.T) {
		_, err := config.Load(file, env(map[string]string{"CTXFIT_PAGE_SIZE": "many"}))
		require.ErrorContains(t, err, `config: CTXFIT_PAGE_SIZE="many" is malformed`)
	})

	t.Run("a missing file fails the load", func(t *testing.T) {
		_, err := config.Load("", env(map[string]string{"CTXFIT_CONFIG": file + ".missing"}))
		require.ErrorIs(t, err, os.ErrNotExist)
		assert.Contains(t, err.Error(), "CTXFIT_CONFIG")
	})

	t.Run("a nil getenv reads the process environment", func(t *testing.T) {
		t.Setenv("CTXFIT_CONFIG", file)
		t.Setenv("CTXFIT_PAGE_SIZE", "12")
		got, err := config.Load("", nil)
		require.NoError(t, err)
		assert.Equal(t, ctxfit.Config{Threshold: 3000, HardCap: 9000, PageSize: 12}, got)
	})
}

func TestRedacted(t *testing.T) {
	c := ctxfit.Config{Threshold: 1, Secret: secretA, PreviousSecrets: []string{secretA, secretB}}

	t.Run("secrets are replaced and the rest is kept", func(t *testing.T) {
		got := config.Redacted(c)
		assert.Equal(t, ctxfit.Config{Threshold: 1, Secret: "[redacted]", PreviousSecrets: []string{"[redacted]", "[redacted]"}}, got)
	})

	t.Run("the Redis URL keeps its host and loses its password", func(t *testing.T) {
		got := config.Redacted(ctxfit.Config{RedisURL: "redis://user:hunter2@redis.internal:6379/1"})
		assert.Equal(t, "redis://user:xxxxx@redis.internal:6379/1", got.RedisURL)
	})

	t.Run("the original is not modified", func(t *testing.T) {
		_ = config.Redacted(c)
		assert.Equal(t, []string{secretA, secretB}, c.PreviousSecrets)
		assert.Equal(t, secretA, c.Secret)
	})

	t.Run("unset secrets stay unset", func(t *testing.T) {
		assert.Equal(t, ctxfit.Config{Mode: "store"}, config.Redacted(ctxfit.Config{Mode: "store"}))
	})
}
