package toon_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/toon"
)

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opts *toon.Options
		want string
	}{
		{"a uniform list of objects is a table", `[{"id":"BK1","nights":3},{"id":"BK2","nights":1}]`, nil,
			"[2]{id,nights}:\n  BK1,3\n  BK2,1"},
		{"a table under a key keeps the key", `{"bookings":[{"id":1},{"id":2}],"total":2}`, nil,
			"bookings[2]{id}:\n  1\n  2\ntotal: 2"},
		{"objects with the same keys in another order are list items, which keep each order",
			`[{"a":1,"b":2},{"b":3,"a":4}]`, nil, "[2]:\n  - a: 1\n    b: 2\n  - b: 3\n    a: 4"},
		{"an array of arrays of objects has no table in a list item (spec §9.4)", `[[{"a":1},{"a":2}]]`, nil,
			"[1]:\n  - [2]:\n    - a: 1\n    - a: 2"},
		{"a list item's first field holds its table on the hyphen line", `[{"t":[{"x":1},{"x":2}],"n":1},{"u":1}]`, nil,
			"[2]:\n  - t[2]{x}:\n      1\n      2\n    n: 1\n  - u: 1"},
		{"a list item's first field holds a nested object two levels down", `[{"o":{"p":1},"n":2},{}]`, nil,
			"[2]:\n  - o:\n      p: 1\n    n: 2\n  -"},
		{"a tab delimiter is named in headers and quotes only tabs", `{"t":[{"a":"x,y","b":"p\tq"}],"s":"x,y"}`,
			&toon.Options{Delimiter: toon.Tab}, "t[1\t]{a\tb}:\n  x,y\t\"p\\tq\"\ns: x,y"},
		{"a pipe delimiter quotes pipes in object values too (the document delimiter)", `{"s":"a|b","l":["a|b","c"]}`,
			&toon.Options{Delimiter: toon.Pipe}, "s: \"a|b\"\nl[2|]: \"a|b\"|c"},
		{"indentation follows the option", `{"a":{"b":[{"c":1},{"c":2}]}}`, &toon.Options{Indent: 4},
			"a:\n    b[2]{c}:\n        1\n        2"},
		{"empty containers", `{"a":[],"o":{},"l":[[],{}]}`, nil, "a: []\no:\nl[2]:\n  - [0]:\n  -"},
		{"an empty root object is the empty document", `{}`, nil, ""},
		{"an empty root array", ` [ ] `, nil, "[]"},
		{"a root string", `"hello world"`, nil, "hello world"},
		{"strings v4 reads as comments or numbers are quoted", `["#x","+1","+1.5e3","x#","+x"]`, nil,
			`[5]: "#x","+1","+1.5e3",x#,+x`},
		{"white space any decoder trims is quoted at either end", "[\"\u00a0x\",\"x\u2028\",\"\ufeffx\",\"a\u00a0b\"]", nil,
			"[4]: \"\u00a0x\",\"x\u2028\",\"\ufeffx\",a\u00a0b"},
		{"escapes are only those of spec §7.1", `["\b\f\u0001\/\u00e9\ud83d\ude00"]`, nil,
			"[1]: \"\\u0008\\u000c\\u0001/é😀\""},
		{"keys are quoted unless they are identifiers with dots", `{"a.b":1,"a-b":2,"":3,"1a":4,"_x":5}`, nil,
			"a.b: 1\n\"a-b\": 2\n\"\": 3\n\"1a\": 4\n_x: 5"},
		{"numbers are canonical and exact", `[1.0,-0,1e6,1E-7,2.50,12345678901234567890123,1e-400]`, nil,
			"[7]: 1,0,1000000,1e-7,2.5,1.2345678901234567890123e+22,1e-400"},
		{"repeated keys in different objects are fine", `[{"a":{"a":1}},{"a":[{"a":1}]}]`, nil,
			"[2]:\n  - a:\n      a: 1\n  - a[1]{a}:\n      1"},
		{"keys spelled differently but equal are one key: the table keeps the first spelling's text",
			`[{"\u0061":1},{"a":2}]`, nil, "[2]{a}:\n  1\n  2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toon.Encode(nil, []byte(tc.in), tc.opts)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			back, err := toon.Decode(nil, got, tc.opts)
			require.NoError(t, err)
			assert.Equal(t, toon.Normal([]byte(tc.in)), string(back), "the round trip")
		})
	}
}

func TestEncodeRefuses(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65)
	tests := []struct {
		name, in string
		opts     *toon.Options
		want     string // in the message
	}{
		{"a string with invalid UTF-8", "[\"ok\",\"caf\xe9\"]", nil, "at byte 6"},
		{"a key with invalid UTF-8", "{\"\xff\":1}", nil, "key that is not valid Unicode"},
		{"a lone high surrogate escape", `["\ud800"]`, nil, "lone surrogate"},
		{"a lone low surrogate escape", `["a\udc80b"]`, nil, "lone surrogate"},
		{"a high surrogate followed by no low one", `["\ud83d\u0041"]`, nil, "lone surrogate"},
		{"a repeated key", `{"a":1,"b":2,"a":3}`, nil, `key "a" is repeated`},
		{"a repeated key spelled differently", `{"a":1,"\u0061":2}`, nil, `key "a" is repeated`},
		{"a repeated key in the first object of a table", `[{"a":1,"a":2},{"a":1,"a":2}]`, nil, "repeated"},
		{"a repeated key among many", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k3":3}`, nil, `"k3" is repeated`},
		{"a number beyond float64", `{"n":1e400}`, nil, "1e400 is beyond float64"},
		{"a negative number beyond float64", `[-1.8e308]`, nil, "beyond float64"},
		{"an integer of 400 digits", "[1" + strings.Repeat("0", 400) + "]", nil, "beyond float64"},
		{"an exponent of 10^15", `[1e-1000000000000000]`, nil, "exponent of the number 1e-1000000000000000 is 1e+15 or more"},
		{"nesting beyond the default depth", deep, nil, "nesting deeper than 64"},
		{"nesting beyond MaxDepth", `[[[1]]]`, &toon.Options{MaxDepth: 2}, "nesting deeper than 2"},
		{"an empty object beyond MaxDepth", `[[{}]]`, &toon.Options{MaxDepth: 2}, "nesting deeper than 2"},
		{"table rows beyond MaxDepth", `[[{"a":1}]]`, &toon.Options{MaxDepth: 2}, "nesting deeper than 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("prefix")
			got, err := toon.Encode(dst, []byte(tc.in), tc.opts)
			require.ErrorIs(t, err, toon.ErrUnsupported)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, "prefix", string(got), "dst is returned without additions")
		})
	}
	_, err := toon.Encode(nil, []byte(deep), &toon.Options{MaxDepth: 65})
	assert.NoError(t, err, "a higher MaxDepth lets it through")
}

func TestEncodeRejectsInvalidJSONAndOptions(t *testing.T) {
	for _, in := range []string{"", " ", "{", `{"a":1,}`, "[1 2]", "01", "'x'", "NaN", `{"a":1}{}`, "\"\x01\""} {
		_, err := toon.Encode(nil, []byte(in), nil)
		assert.ErrorIs(t, err, toon.ErrInvalidJSON, "%q", in)
	}
	for _, o := range []toon.Options{{Delimiter: ';'}, {Indent: -1}, {MaxDepth: -1}} {
		_, err := toon.Encode(nil, []byte("1"), &o)
		assert.Error(t, err, "%+v", o)
		_, err = toon.Decode(nil, []byte("1"), &o)
		assert.Error(t, err, "%+v", o)
	}
}

func TestEncodeAppendsToDst(t *testing.T) {
	got, err := toon.Encode([]byte("data:\n"), []byte(`{"a":[1,2]}`), nil)
	require.NoError(t, err)
	assert.Equal(t, "data:\na[2]: 1,2", string(got), "the first line of the document starts without a newline")
	got, err = toon.Decode([]byte("x="), got[len("data:\n"):], nil)
	require.NoError(t, err)
	assert.Equal(t, `x={"a":[1,2]}`, string(got))
}
