package toon_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/toon"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"CRLF line endings are accepted", "a: 1\r\nb[2]: x,y\r\n", `{"a":1,"b":["x","y"]}`},
		{"numbers are exact and canonical, never float64", "[6]: 1.5000,-0,1e400,12345678901234567890123,05,+1",
			`[1.5,0,1e+400,1.2345678901234567890123e+22,"05","+1"]`},
		{"tokens that are not JSON numbers are strings", "[5]: .5,5.,Infinity,NaN,0x1F", `[".5","5.","Infinity","NaN","0x1F"]`},
		{"strings are escaped as rawjson does", "a: \"<\\u00e9>\\t\\u0001\"\nb: x\u2028y", `{"a":"<é>\t\u0001","b":"x` + "\u2028" + `y"}`},
		{"a root primitive", "true", "true"},
		{"a table's rows end at a key-value line", "t[1]{a,b}:\n  1,2\nn: 3", `{"t":[{"a":1,"b":2}],"n":3}`},
		{"a header inside a list item keeps its own delimiter", "l[1|]:\n  - [2\t]: a|b\tc", `{"l":[["a|b","c"]]}`},
		{"a list item whose first field is an object", "[1]:\n  - o:\n      p: 1\n    n: 2", `[{"o":{"p":1},"n":2}]`},
		{"an empty object list item", "[2]:\n  -\n  - a: 1", `[{},{"a":1}]`},
		{"a table of no rows", "t[0]{a}:", `{"t":[]}`},
		{"a quoted key before a header", `"a b"[1]: x`, `{"a b":["x"]}`},
		{"an unquoted key that is not an identifier before a colon", "a-b c: 1", `{"a-b c":1}`},
		{"a value with a quote inside, not at its start", `a: say "hi"`, `{"a":"say \"hi\""}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toon.Decode(nil, []byte(tc.in), nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		want     string
	}{
		{"invalid UTF-8", "a: 1\nb: \xff", 2, "UTF-8"},
		{"a tab in the indentation", "a:\n\tb: 1", 2, "tab"},
		{"an indentation that is not a multiple", "a:\n   b: 1", 2, "multiple of 2"},
		{"an indented first line", "  a: 1", 1, "indented"},
		{"an indentation jump", "a:\n    b: 1", 2, "unexpected indentation"},
		{"an orphan line after a primitive field", "a: 1\n  b: 2", 2, "unexpected indentation"},
		{"a list item among object fields", "a: 1\n- b", 2, "list item"},
		{"a line after the root array", "[1]: x\ny: 2", 2, "after the document's end"},
		{"too many list items", "[1]:\n  - a\n  - b", 1, "declares 1 items and has 2"},
		{"too few rows", "[2]{a}:\n  1", 1, "declares 2 rows and has 1"},
		{"a row too wide", "[1]{a}:\n  1,2", 2, "2 values for 1 fields"},
		{"a blank line between rows", "[2]{a}:\n  1\n\n  2", 4, "blank line"},
		{"a repeated field in a header", "[1]{a,a}:\n  1,2", 1, "repeated"},
		{"a repeated key in a list item", "[1]:\n  - a: 1\n    a: 2", 3, "repeated"},
		{"values after a field list", "t[1]{a}: 1", 1, "values after a header with a field list"},
		{"an unterminated quoted key", `"a: 1`, 1, "unterminated"},
		{"a quoted key without a colon", `"a" 1`, 1, "characters after a quoted string"},
		{"a surrogate pair as escapes", `a: "\ud83d\ude00"`, 1, "surrogates"},
		{"an escape JSON has and TOON does not", `a: "\/"`, 1, "invalid escape"},
		{"a raw control character in a quoted string", "a: \"x\x01\"", 1, "control character"},
		{"characters after a quoted value", `a: "x"y`, 1, "after a quoted string"},
		{"an unquoted key with a space before a header", "a b[1]: x", 1, "must be quoted"},
		{"an empty unquoted key", ": 1", 1, "empty key"},
		{"an empty list item", "[1]:\n  - ", 2, "empty list item"},
		{"a missing ']'", "a[1: x", 1, "without ']'"},
		{"a missing '}'", "a[1]{x: 1", 1, "without '}'"},
		{"an empty field name", "a[1]{x,}:\n  1,2", 1, "empty field name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toon.Decode([]byte("prefix"), []byte(tc.in), nil)
			var se *toon.SyntaxError
			require.ErrorAs(t, err, &se, "decoded to %s", got)
			assert.Equal(t, tc.line, se.Line, err.Error())
			assert.Contains(t, se.Msg, tc.want)
			assert.Equal(t, "prefix", string(got), "dst is returned without additions")
		})
	}
}
