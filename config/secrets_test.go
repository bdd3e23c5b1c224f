package config_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/config"
)

func TestTheShippedExamplesWriteNoSecret(t *testing.T) {
	key := regexp.MustCompile(`(?m)^\s*"?(secret|previousSecrets)"?\s*:`)
	for _, name := range []string{"example.yaml", "example.json"} {
		t.Run(name+" has no secret key", func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", name))
			require.NoError(t, err)
			assert.NotRegexp(t, key, string(b))
			ch := config.Inspect(filepath.Join("testdata", name), func(string) string { return "" })
			assert.Empty(t, ch.Errors)
			assert.Empty(t, ch.Warnings)
		})
	}
}

func TestInspectWarnsAboutEachSecretWrittenInTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ctxfit.yaml")
	require.NoError(t, os.WriteFile(file, []byte("secret: a-secret-of-at-least-32-bytes-0123456789\n"+
		"previousSecrets: [a-previous-secret-of-32-bytes-0123456789]\n"+
		"redisURL: redis://user:hunter2@localhost:6379/0\n"), 0o600))
	ch := config.Inspect(file, func(string) string { return "" })
	assert.Empty(t, ch.Errors, "valid settings")
	require.Len(t, ch.Warnings, 3)
	for i, env := range []string{"CTXFIT_SECRET", "CTXFIT_PREVIOUS_SECRETS", "CTXFIT_REDIS_URL"} {
		assert.Contains(t, ch.Warnings[i], env)
		assert.NotContains(t, ch.Warnings[i], "hunter2")
		assert.NotContains(t, ch.Warnings[i], "0123456789")
	}
}
