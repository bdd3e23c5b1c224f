package rawjson_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/rawjson"
)

var validityCases = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+10`, `1e400`, `12345678901234567890123`, `true`, `false`, `null`,
	` [1, "a", {"b": [null]}] `, `{"a":1,"a":2}`, "\"\xff\"", `"\ud800"`, `"\ud83d\ude00"`,
	`[1,]`, `{"a"}`, `{"a":}`, `01`, `1.`, `.5`, `"\x"`, "\"a\nb\"", `[`, `]`, `nul`, `{"a":1}x`, ``, ` `,
	`[1 2]`, `{"a":1,}`, `"\u12"`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		assert.Equal(t, json.Valid([]byte(c)), rawjson.Valid([]byte(c)), "%.40q", c)
	}
}

func TestIterWalksItemsWithTheirSpans(t *testing.T) {
	data := []byte(`{ "a" : 1 , "b":[ 2 ,3 ],"c" :"x\"y" }`)
	it, ok := rawjson.Open(data, 0)
	require.True(t, ok)
	var keys, vals []string
	for {
		item, ok := it.Next()
		if !ok {
			break
		}
		keys = append(keys, string(data[item.Start:item.KeyEnd]))
		vals = append(vals, string(data[item.Value:item.End]))
	}
	assert.False(t, it.Err())
	assert.Equal(t, []string{`"a"`, `"b"`, `"c"`}, keys)
	assert.Equal(t, []string{`1`, `[ 2 ,3 ]`, `"x\"y"`}, vals)
	assert.Equal(t, byte('}'), data[it.Pos()])

	t.Run("resumes from a position it returned", func(t *testing.T) {
		arr := []byte(`[10, 20 ,30]`)
		it, _ := rawjson.Open(arr, 0)
		_, _ = it.Next()
		again := rawjson.At(arr, it.Pos(), false)
		var got []string
		for item, ok := again.Next(); ok; item, ok = again.Next() {
			got = append(got, string(arr[item.Start:item.End]))
		}
		assert.Equal(t, []string{"20", "30"}, got)
	})
	t.Run("stops at malformed input", func(t *testing.T) {
		for _, bad := range []string{`[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`, `[1`} {
			it, _ := rawjson.Open([]byte(bad), 0)
			for _, ok := it.Next(); ok; _, ok = it.Next() {
			}
			assert.True(t, it.Err(), bad)
		}
	})
}

func TestEscapeRoundTripsEveryByteString(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\r\t\b\f\x01\x1f\x7f", "<&>\u2028\u2029", "é😀",
		"latin-1 caf\xe9", "\xff\xfe\x80", "\xed\xa0\x80 (an encoded surrogate)", "truncated \xe2\x82"} {
		enc, m := rawjson.Escape(nil, []byte(s))
		quoted := append(append([]byte{'"'}, enc...), '"')
		require.True(t, json.Valid(quoted), "%q", s)
		assert.Equal(t, []byte(s), rawjson.Unescape(enc), "%q", s)
		assert.Equal(t, len(enc), rawjson.EscapedLen([]byte(s)))
		if utf8.ValidString(s) {
			var back string
			require.NoError(t, json.Unmarshal(quoted, &back))
			assert.Equal(t, s, back, "valid UTF-8 decodes with any JSON decoder")
		}
		assert.Equal(t, len(enc), m.Encoded(len(s)))
		assert.Equal(t, len(s), m.Text(len(enc)))
	}
}

func TestDecodeMapsTextOffsetsToBodyOffsets(t *testing.T) {
	body := []byte(`ab\ncd\u00e9\ud800x\ud83d\ude00y\/z`)
	text, m := rawjson.Decode(body)
	assert.Equal(t, "ab\ncd\u00e9\ufffdx😀y/z", string(text))
	for _, c := range []struct{ text, enc int }{{0, 0}, {2, 2}, {3, 4}, {5, 6}, {7, 12}, {10, 18}, {11, 19}, {15, 31}, {16, 32}, {17, 34}} {
		assert.Equal(t, c.enc, m.Encoded(c.text), "text offset %d", c.text)
		assert.Equal(t, c.text, m.Text(c.enc), "body offset %d", c.enc)
	}
}

func FuzzRawJSON(f *testing.F) {
	for _, c := range validityCases[:len(validityCases)-2] {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if rawjson.Valid(data) != json.Valid(data) {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, rawjson.Valid(data), json.Valid(data))
		}
		enc, _ := rawjson.Escape(nil, data)
		if !bytes.Equal(rawjson.Unescape(enc), data) {
			t.Fatalf("Escape/Unescape lost %q", data)
		}
		start, end, ok := rawjson.Root(data)
		if ok {
			if bs, be := rawjson.Bounds(data); bs != start || be != end {
				t.Fatalf("Bounds(%q) = %d, %d; Root says %d, %d", data, bs, be, start, end)
			}
		}
		if ok && data[start] == '"' {
			text, m := rawjson.Decode(data[start+1 : end-1])
			if m.Encoded(len(text)) != end-start-2 {
				t.Fatalf("Decode map ends at %d, not %d", m.Encoded(len(text)), end-start-2)
			}
		}
		if !ok || (data[start] != '[' && data[start] != '{') {
			return
		}
		// Items and the separators between them rebuild the container.
		it, _ := rawjson.Open(data, start)
		var b []byte
		prev := start + 1
		b = append(b, data[start:prev]...)
		for item, ok := it.Next(); ok; item, ok = it.Next() {
			b = append(b, data[prev:item.Start]...)
			b = append(b, data[item.Start:item.End]...)
			prev = item.End
		}
		if it.Err() {
			t.Fatalf("Iter failed on valid %q", data)
		}
		b = append(b, data[prev:end]...)
		if !bytes.Equal(b, data[start:end]) {
			t.Fatalf("items rebuild %q, not %q", b, data[start:end])
		}
	})
}

func TestEscapeLatin1RoundTripsAnyBytes(t *testing.T) {
	for _, s := range []string{"", "caf\xe9", "\xff\x00\x80 \"q\" \\", "plain"} {
		enc := rawjson.EscapeLatin1(nil, []byte(s))
		require.True(t, json.Valid(append(append([]byte{'"'}, enc...), '"')))
		assert.Equal(t, []byte(s), rawjson.UnescapeLatin1(enc))
	}
	assert.True(t, rawjson.MultiByte([]byte("a é")))
	assert.False(t, rawjson.MultiByte([]byte("caf\xe9 \xff")))
}

func TestCanonicalSortsKeysKeepsNumbersAndInvalidBytes(t *testing.T) {
	got, err := rawjson.Canonical(nil, []byte(" { \"b\" : [1.50, \"\\u0041<\"], \"a\":1, \"a\":2, \"c\":\"\xff\" } "))
	require.NoError(t, err)
	assert.Equal(t, `{"a":2,"b":[1.50,"A<"],"c":"\udcff"}`, string(got))
	_, err = rawjson.Canonical(nil, []byte(`{`))
	assert.ErrorIs(t, err, rawjson.ErrInvalid)
}
