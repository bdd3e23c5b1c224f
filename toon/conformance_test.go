package toon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/toon"
)

// fixture is one test of the spec's conformance fixtures
// (testdata/spec/README.md says where they come from).
type fixture struct {
	Name        string          `json:"name"`
	Input       json.RawMessage `json:"input"`
	Expected    json.RawMessage `json:"expected"`
	ShouldError bool            `json:"shouldError"`
	Options     struct {
		Delimiter *string `json:"delimiter"`
		Indent    int     `json:"indent"`
		Strict    *bool   `json:"strict"`
	} `json:"options"`
}

func fixtures(t *testing.T, dir string) map[string][]fixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "spec", dir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string][]fixture{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var file struct {
			Tests []fixture `json:"tests"`
		}
		require.NoError(t, json.Unmarshal(b, &file), f)
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = file.Tests
	}
	return out
}

// encodeDeviations are the encode fixtures whose expected output Encode
// does not write on purpose, with what it writes instead. Both forms decode
// to the same objects; only Encode's keeps each object's key order.
var encodeDeviations = map[string]string{
	// A table has one field order for all rows: the spec lets objects that
	// list the same keys in other orders share one, losing their order;
	// Encode keeps it by writing them as list items.
	"uses field order from first object for tabular headers": "items[2]:\n  - a: 1\n    b: 2\n    c: 3\n  - c: 30\n    b: 20\n    a: 10",
}

func TestEncodeMatchesTheSpecFixtures(t *testing.T) {
	for file, tests := range fixtures(t, "encode") {
		for _, tc := range tests {
			t.Run(file+"/"+tc.Name, func(t *testing.T) {
				var want string
				require.NoError(t, json.Unmarshal(tc.Expected, &want))
				if dev, ok := encodeDeviations[tc.Name]; ok {
					want = dev
				}
				opts := &toon.Options{Indent: tc.Options.Indent}
				if tc.Options.Delimiter != nil {
					opts.Delimiter = toon.Delimiter((*tc.Options.Delimiter)[0])
				}
				got, err := toon.Encode(nil, tc.Input, opts)
				require.NoError(t, err)
				assert.Equal(t, want, string(got))

				back, err := toon.Decode(nil, got, opts)
				require.NoError(t, err, "decoding what Encode wrote")
				assert.Equal(t, toon.Normal(tc.Input), string(back), "decoding gives the input back")
			})
		}
	}
}

func TestDecodeMatchesTheSpecFixtures(t *testing.T) {
	lenient := 0
	for file, tests := range fixtures(t, "decode") {
		for _, tc := range tests {
			if tc.Options.Strict != nil && !*tc.Options.Strict {
				// Decode is strict only (the spec's default); lenient decoding
				// is for documents written by hand.
				lenient++
				continue
			}
			t.Run(file+"/"+tc.Name, func(t *testing.T) {
				var in string
				require.NoError(t, json.Unmarshal(tc.Input, &in))
				got, err := toon.Decode(nil, []byte(in), &toon.Options{Indent: tc.Options.Indent})
				if tc.ShouldError {
					var se *toon.SyntaxError
					assert.ErrorAs(t, err, &se, "got %s", got)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, toon.Normal(tc.Expected), string(got))
			})
		}
	}
	assert.Equal(t, 11, lenient, "the fixtures of strict=false left out")
}
