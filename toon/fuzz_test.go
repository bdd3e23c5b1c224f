package toon_test

import (
	"errors"
	"testing"

	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/toon"
)

// maxFuzzInput bounds the inputs of the fuzz targets; the properties do
// not depend on size.
const maxFuzzInput = 8 << 10

// FuzzEncode encodes arbitrary bytes with each delimiter: input that is
// not JSON must be ErrInvalidJSON, and valid JSON must either be refused
// with ErrUnsupported or decode back to the same value, keys in order.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{
		`[{"id":1,"name":"Ada"},{"id":2,"name":"Bob, Jr."}]`,
		`{"a":{"b":[1,"x",true,null]},"c":[[],[{}],[{"d":"e|f"}]],"":{"-":"#"}}`,
		`[{"a":1,"b":2},{"b":1,"a":2}]`,
		`["", " x", "- y", "#z", "+1", "05", "true", "a:b", "[1]", "\t\n\u0000", "\u00a0", "😀", "\ud83d\ude00"]`,
		`[-0, 1.0, 1e6, 1E-7, 12345678901234567890123, 1e-400, 1e400]`,
		`{"a":1,"a":2}`, `["\ud800"]`, "[\"\xff\"]", `[[[[{"x":[[1]]}]]]]`, `{}`, `[]`, `"s"`, `1`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, d uint8) {
		if len(data) > maxFuzzInput {
			t.Skip("large inputs only slow the fuzzer down")
		}
		opts := &toon.Options{Delimiter: delimiters[int(d)%len(delimiters)], Indent: 1 + int(d/3)%4}
		out, err := toon.Encode(nil, data, opts)
		switch {
		case !rawjson.Valid(data):
			if !errors.Is(err, toon.ErrInvalidJSON) {
				t.Fatalf("invalid JSON %q: %v", data, err)
			}
			return
		case errors.Is(err, toon.ErrUnsupported):
			return
		case err != nil:
			t.Fatalf("%q: %v", data, err)
		}
		back, err := toon.Decode(nil, out, opts)
		if err != nil {
			t.Fatalf("%q encodes to\n%s\nwhich does not decode: %v", data, out, err)
		}
		if want := toon.Normal(data); string(back) != want {
			t.Fatalf("%q encodes to\n%s\nwhich decodes to\n%s\nnot\n%s", data, out, back, want)
		}
	})
}

// FuzzDecode decodes arbitrary text: it must never panic, what it accepts
// must be valid JSON in the form Decode writes, and encoding that JSON
// (when Encode accepts it) and decoding again must give it back.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"items[2]{sku,qty,price}:\n  A1,2,9.99\n  B2,1,14.5",
		"a:\n  b[2|]: x|\"y|z\"\n  c: []\nd:",
		"[3]:\n  - 1\n  - a: 1\n    b[1]{c}:\n      2\n  - [2\t]: \"\\t\"\t\"\\u0001\"",
		"[1]:\n  - t[1]{x}:\n      1\n    n: 2",
		"\"a b\"[1]: x\n\"\": 05\ne: -0\nf: 1e400\ng: say \"hi\"",
		"hello", "[]", "", "  a: 1", "a: \"\\ud800\"", "a\r\nb", "[2]: a", "x[1]{a}:\n\n  1",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > maxFuzzInput {
			t.Skip("large inputs only slow the fuzzer down")
		}
		out, err := toon.Decode(nil, src, nil)
		if err != nil {
			var se *toon.SyntaxError
			if !errors.As(err, &se) || se.Line < 1 {
				t.Fatalf("%q: an error that is not a *SyntaxError with a line: %v", src, err)
			}
			return
		}
		if !rawjson.Valid(out) {
			t.Fatalf("%q decodes to invalid JSON %s", src, out)
		}
		if n := toon.Normal(out); n != string(out) {
			t.Fatalf("%q decodes to %s, not in normal form %s", src, out, n)
		}
		again, err := toon.Encode(nil, out, nil)
		if errors.Is(err, toon.ErrUnsupported) {
			return // a number beyond float64, or deep nesting
		}
		if err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		back, err := toon.Decode(nil, again, nil)
		if err != nil || string(back) != string(out) {
			t.Fatalf("%q decodes to %s, which encodes to\n%s\nwhich decodes to %s (%v)", src, out, again, back, err)
		}
	})
}
