package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigCheckPrintsTheEffectiveSettings(t *testing.T) {
	t.Setenv("CTXFIT_THRESHOLD", "3000")
	t.Setenv("CTXFIT_REDIS_URL", "redis://:hunter2@localhost:6379/0")
	t.Setenv("CTXFIT_SECRET", "example-secret-0123456789abcdefghijklmnopqrstuvwxyz")
	code, out, errOut := runCLI(t, "", "config", "check", filepath.Join("..", "..", "config", "testdata", "example.yaml"))
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut, "the shipped example writes no secret, so there is nothing to warn about")
	assert.Regexp(t, `(?m)^threshold: 3000 +# CTXFIT_THRESHOLD$`, out)
	assert.Regexp(t, `(?m)^hardCap: 12000 +# file$`, out)
	assert.Regexp(t, `(?m)^secret: '\[redacted\]' +# CTXFIT_SECRET$`, out)
	assert.Regexp(t, `(?m)^redisURL: redis://:xxxxx@localhost:6379/0 +# CTXFIT_REDIS_URL$`, out)
	assert.Contains(t, out, "  - match: GET /api/v1/bookings\n")
	assert.Contains(t, out, "# The settings are valid.\n")
	assert.NotContains(t, out, "hunter2")
	assert.NotContains(t, out, "example-secret")
}

func TestConfigCheckExitsOneListingEveryError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(file, []byte("threshold: 5000\nhardCap: 100\n"), 0o600))
	t.Setenv("CTXFIT_PAGE_SIZE", "many")
	t.Setenv("CTXFIT_SECRET", "short-but-secret")
	code, out, errOut := runCLI(t, "", "config", "check", file)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "threshold: 5000")
	assert.Contains(t, errOut, "the settings are invalid, 3 errors:\n")
	assert.Contains(t, errOut, `  - config: CTXFIT_PAGE_SIZE="many" is malformed`)
	assert.Contains(t, errOut, "  - config: secret must be at least 32 bytes long")
	assert.Contains(t, errOut, "  - config: hardCap 100 must be >= threshold 5000")
	assert.NotContains(t, out+errOut, "short-but-secret")
}

func TestConfigCheckReadsCTXFIT_CONFIG(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ctxfit.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"pageSize": 20}`), 0o600))
	t.Setenv("CTXFIT_CONFIG", file)
	code, out, errOut := runCLI(t, "", "config", "check")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, file)
	assert.Regexp(t, `(?m)^pageSize: 20 +# file$`, out)
}

func TestConfigRefusesBadInvocations(t *testing.T) {
	for _, args := range [][]string{{"config"}, {"config", "lint"}, {"config", "check", "a.yaml", "b.yaml"}} {
		code, _, errOut := runCLI(t, "", args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.NotEmpty(t, errOut)
	}
}

func TestConfigCheckListsEveryErrorOfAFileAndNoDefaultsInItsPlace(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file, content string
		want                []string
	}{
		{"a JSON file with several bad members", "bad.json", "{\"threshold\": \"abc\",\n \"hardCap\": \"x\", \"foo\": 1}", []string{
			"3 errors:",
			"line 1, column 19: field threshold: got string, want a whole number",
			"line 2, column 15: field hardCap: got string, want a whole number",
			`line 2, column 24: unknown field "foo"`,
		}},
		{"a JSON file with a bad duration beside other errors", "durations.json", `{"cursorTTL": "soon", "pageSize": "x"}`, []string{
			"2 errors:", `field cursorTTL: "soon" is not a duration`, "field pageSize: got string, want a whole number",
		}},
		{"a YAML file with several bad keys", "bad.yaml", "threshold: abc\nhardCap: x\nfoo: 1\n", []string{
			"line 1: cannot unmarshal", "line 2: cannot unmarshal", `line 3: unknown field "foo"`,
		}},
		{"a missing file", "missing.yaml", "", []string{"1 error:", "no such file or directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" gets every error and no listing", func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			if tt.content != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			}
			code, out, errOut := runCLI(t, "", "config", "check", path)
			assert.Equal(t, 1, code)
			assert.Empty(t, out, "the defaults are not the file's settings")
			for _, w := range tt.want {
				assert.Contains(t, errOut, w)
			}
		})
	}
}

func TestConfigCheckShowsTheTrueDefaultOfMaxResultSizeChars(t *testing.T) {
	t.Setenv("CTXFIT_HARD_CAP", "20000")
	code, out, errOut := runCLI(t, "", "config", "check")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^maxResultSizeChars: 160000 +# default: 8 x the hard cap$`, out)
}

func TestConfigCheckWarnsAboutASecretWrittenInTheFile(t *testing.T) {
	for _, tt := range []struct {
		name, file, warns string
	}{
		{"the secret", "secret: a-secret-of-at-least-32-bytes-0123456789\n", "set CTXFIT_SECRET"},
		{"previous secrets", "previousSecrets: [a-previous-secret-of-32-bytes-0123456789]\n", "set CTXFIT_PREVIOUS_SECRETS"},
		{"a password in the Redis URL", "redisURL: redis://:hunter2@localhost:6379/0\n", "set CTXFIT_REDIS_URL"},
	} {
		t.Run(tt.name+" is valid but warned about", func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "ctxfit.yaml")
			require.NoError(t, os.WriteFile(file, []byte(tt.file), 0o600))
			code, out, errOut := runCLI(t, "", "config", "check", file)
			assert.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "# The settings are valid.")
			assert.Contains(t, errOut, "warning: "+file)
			assert.Contains(t, errOut, tt.warns)
			assert.NotContains(t, out+errOut, "hunter2")
			assert.NotContains(t, out+errOut, "0123456789")
		})
	}
	t.Run("a Redis URL without a password is not", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "ctxfit.yaml")
		require.NoError(t, os.WriteFile(file, []byte("redisURL: redis://localhost:6379/0\n"), 0o600))
		code, _, errOut := runCLI(t, "", "config", "check", file)
		assert.Equal(t, 0, code)
		assert.Empty(t, errOut)
	})
}
