package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
)

func settingsByKey(ch config.Check) map[string]config.Setting {
	m := map[string]config.Setting{}
	for _, s := range ch.Settings() {
		m[s.Key] = s
	}
	return m
}

func TestInspectAgreesWithLoad(t *testing.T) {
	file := writeFile(t, "ctxfit.yaml", "threshold: 3000\nhardCap: 9000\ncursorTTL: 5m\n")
	vars := map[string]string{"CTXFIT_HARD_CAP": "7000", "CTXFIT_MODE": "replay"}
	want, err := config.Load(file, env(vars))
	require.NoError(t, err)
	ch := config.Inspect(file, env(vars))
	assert.Empty(t, ch.Errors)
	assert.Equal(t, want, ch.Config)
	assert.Equal(t, file, ch.File)

	got := settingsByKey(ch)
	assert.Equal(t, config.Setting{Key: "threshold", Value: "3000", Source: "file"}, got["threshold"])
	assert.Equal(t, config.Setting{Key: "hardCap", Value: "7000", Source: "CTXFIT_HARD_CAP"}, got["hardCap"])
	assert.Equal(t, config.Setting{Key: "cursorTTL", Value: "5m", Source: "file"}, got["cursorTTL"])
	assert.Equal(t, config.Setting{Key: "mode", Value: "replay", Source: "CTXFIT_MODE"}, got["mode"])
	assert.Equal(t, config.Setting{Key: "pageSize", Value: "50", Source: "default"}, got["pageSize"])
	assert.Equal(t, config.Setting{Key: "shapeTimeout", Value: "2s", Source: "default"}, got["shapeTimeout"])
	assert.Equal(t, config.Setting{Key: "secret", Source: "default", Default: "random per process"}, got["secret"])
}

func TestInspectRedactsSecrets(t *testing.T) {
	secret := "a-secret-of-at-least-32-bytes-0123456789"
	ch := config.Inspect("", env(map[string]string{
		"CTXFIT_SECRET":           secret,
		"CTXFIT_PREVIOUS_SECRETS": secret + "x," + secret + "y",
		"CTXFIT_REDIS_URL":        "redis://user:hunter2@redis:6379/0",
	}))
	require.Empty(t, ch.Errors)
	got := settingsByKey(ch)
	assert.Equal(t, "'[redacted]'", got["secret"].Value)
	assert.Equal(t, "['[redacted]', '[redacted]']", got["previousSecrets"].Value)
	assert.Equal(t, "redis://user:xxxxx@redis:6379/0", got["redisURL"].Value)
	for _, s := range ch.Settings() {
		assert.NotContains(t, s.Value, "hunter2")
		assert.NotContains(t, s.Value, secret)
	}
}

func TestInspectListsEveryError(t *testing.T) {
	file := writeFile(t, "bad.yaml", "threshold: 5000\nhardCap: 100\nmode: fast\n")
	ch := config.Inspect(file, env(map[string]string{
		"CTXFIT_PAGE_SIZE":  "many",
		"CTXFIT_CURSOR_TTL": "forever",
		"CTXFIT_SECRET":     "short",
	}))
	var msgs []string
	for _, err := range ch.Errors {
		msgs = append(msgs, err.Error())
	}
	assert.ElementsMatch(t, []string{
		`config: CTXFIT_PAGE_SIZE="many" is malformed: want a whole number such as 50`,
		`config: CTXFIT_CURSOR_TTL="forever" is malformed: want a Go duration such as "10m", "30s" or "1h30m"`,
		`config: secret must be at least 32 bytes long (use a random secret of 32 bytes or more)`,
		`config: mode "fast" must be one of: store replay`,
		`config: hardCap 100 must be >= threshold 5000`,
	}, msgs)
	assert.Equal(t, 5000, ch.Config.Threshold, "what could be read is still reported")
}

func TestInspectReportsAFileThatDoesNotParseAndGoesOn(t *testing.T) {
	file := writeFile(t, "bad.yaml", "threshold: 5000\nunknownKey: 1\n")
	ch := config.Inspect(file, env(map[string]string{"CTXFIT_THRESHOLD": "-1"}))
	require.Len(t, ch.Errors, 2)
	assert.Contains(t, ch.Errors[0].Error(), "unknownKey")
	assert.Contains(t, ch.Errors[1].Error(), "threshold -1 must be >= 0")
	assert.Equal(t, ctxfit.Config{Threshold: -1}, ch.Config)
}
