package jsonwire_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/jsonwire"
)

func TestObjectKeepsItsMembersInOrderAndAsWritten(t *testing.T) {
	o, err := jsonwire.ParseObject([]byte(` {"z": 1.50, "a" : "<b>", "m":[1, 2]} `))
	require.NoError(t, err)
	assert.Equal(t, `1.50`, string(o.Get("z")))
	assert.Nil(t, o.Get("nope"))
	o.Set("a", json.RawMessage(`"x"`))
	o.Set("new", json.RawMessage(`null`))
	assert.Equal(t, `{"z":1.50,"a":"x","m":[1, 2],"new":null}`, string(o.Marshal()))

	for _, bad := range []string{``, `[]`, `{"a":}`, `{"a":1`, `{"a":1} {}`} {
		_, err := jsonwire.ParseObject([]byte(bad))
		assert.Error(t, err, bad)
	}
	var zero jsonwire.Object
	assert.Equal(t, `{}`, string(zero.Marshal()))
}

func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[true,null]}`, `{"a":{"b":"\u003c"}}`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := jsonwire.ParseObject(b)
		if err != nil {
			return
		}
		out := o.Marshal()
		require.True(t, json.Valid(out), "%s", out)
		again, err := jsonwire.ParseObject(out)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again.Marshal()), "marshalling is stable")
	})
}
