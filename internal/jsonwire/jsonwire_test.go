package jsonwire_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/jsonwire"
)

func TestMarshalWritesTheSameBytesOnEveryToolchain(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"invalid UTF-8 is the escape \\ufffd", []string{"\xff", "a\xc3"}, `["\ufffd","a\ufffd"]`},
		{"the replacement character itself is the escape too", "\uFFFD", `"\ufffd"`},
		{"an invalid map key is escaped the same way", map[string]int{"\xff": 1}, `{"\ufffd":1}`},
		{"HTML characters and line separators stay escaped as encoding/json escapes them", "<a&b>\u2028", `"\u003ca\u0026b\u003e\u2028"`},
		{"valid UTF-8 other than U+FFFD is written as it is", "héllo ✓", `"héllo ✓"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonwire.Marshal(tc.v)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestNormalizeKeepsTheMeaning(t *testing.T) {
	in := []byte(`{"a":"x` + "\uFFFD" + `y","b":["` + "\uFFFD\uFFFD" + `"]}`)
	out := jsonwire.Normalize(in)
	var before, after any
	require.NoError(t, json.Unmarshal(in, &before))
	require.NoError(t, json.Unmarshal(out, &after))
	assert.Equal(t, before, after)
	assert.Equal(t, `{"a":"x\ufffdy","b":["\ufffd\ufffd"]}`, string(out))
}

func TestNormalizeReturnsItsArgumentWhenThereIsNothingToDo(t *testing.T) {
	in := []byte(`{"a":"plain"}`)
	assert.Same(t, &in[0], &jsonwire.Normalize(in)[0])
}

func TestMarshalUnescapedLeavesHTMLCharactersAlone(t *testing.T) {
	got, err := jsonwire.MarshalUnescaped([]string{"a && b <c>", "\xff"})
	require.NoError(t, err)
	assert.Equal(t, `["a && b <c>","\ufffd"]`, string(got))
}
