package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
)

// FuzzParse feeds arbitrary bytes to Parse in each format. Seeds: the two
// examples and testdata/fuzz/FuzzParse. Run with
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 60s ./config
func FuzzParse(f *testing.F) {
	for _, name := range []string{"example.yaml", "example.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(data, uint8(config.FormatDetect))
		f.Add(data, uint8(config.FormatOf(name)))
	}
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		c, err := config.Parse(data, config.Format(format%3))
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "config: "), err.Error())
			assert.Equal(t, ctxfit.Config{}, c, "a failed parse returns the zero Config")
			return
		}
		require.NoError(t, c.Validate(), "accepted settings validate")

		// Accepted settings survive a JSON round trip unchanged.
		b, err := json.Marshal(c)
		require.NoError(t, err)
		again, err := config.Parse(b, config.FormatJSON)
		require.NoError(t, err, "re-reading %s", b)
		b2, err := json.Marshal(again)
		require.NoError(t, err)
		assert.Equal(t, string(b), string(b2))
	})
}
