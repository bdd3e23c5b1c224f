package chunk_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/chunk"
)

// maxFuzzInput bounds the texts FuzzSplit splits; the properties do not
// depend on size, and small inputs keep the run fast.
const maxFuzzInput = 4 << 10

// FuzzSplit splits arbitrary bytes under an arbitrary limit, as each kind:
// it must never panic, the chunks must be the input byte for byte, each
// within the limit by exact count, and no chunk may split a UTF-8 sequence
// (every chunk starts where decoding the input as UTF-8 starts a rune, an
// invalid byte being a rune of its own).
// Seeds are in testdata/fuzz/FuzzSplit.
func FuzzSplit(f *testing.F) {
	counter := exactCounter(f)
	f.Add("", uint16(0), uint8(0))
	f.Add("# Title\n\nSome text. More text!\n\n## Next\n\nline\nline\n", uint16(4), uint8(2))
	f.Add("2026-01-02T15:04:05Z INFO a\n\tat x\nCaused by: y\n[WARN] b\n", uint16(10), uint8(3))
	f.Add(strings.Repeat("e\u0301", 30), uint16(1), uint8(1))
	f.Add("\xff\xfe\xe3\x81 abc \xe3\x81\x82\r\n\r\n", uint16(0), uint8(0))
	kinds := []chunk.Kind{chunk.KindAuto, chunk.KindProse, chunk.KindMarkdown, chunk.KindLog, chunk.KindCode, chunk.KindJSONLines}
	f.Fuzz(func(t *testing.T, text string, limit uint16, kind uint8) {
		if len(text) > maxFuzzInput {
			t.Skip("large inputs only slow the fuzzer down")
		}
		max := chunk.MinMaxTokens + int(limit%500)
		spans, err := chunk.Split(text, &chunk.Options{MaxTokens: max, Kind: kinds[int(kind)%len(kinds)]})
		if err != nil {
			t.Fatalf("split: %v", err)
		}
		// starts are the offsets where utf8 decoding of the whole text puts a
		// rune (an invalid byte is a rune of its own), and the end.
		starts := map[int]bool{len(text): true}
		for p := 0; p < len(text); {
			starts[p] = true
			_, w := utf8.DecodeRuneInString(text[p:])
			p += w
		}
		pos := 0
		valid := utf8.ValidString(text)
		for i, s := range spans {
			if s.Start != pos || s.End < s.Start || (s.End == s.Start && text != "") {
				t.Fatalf("chunk %d is [%d,%d), after %d", i, s.Start, s.End, pos)
			}
			content := text[s.Start:s.End]
			if n := counter.Count(content); n > max || n != s.Tokens {
				t.Fatalf("chunk %d %q has %d tokens (reported %d), limit %d", i, content, n, s.Tokens, max)
			}
			if valid && !utf8.ValidString(content) {
				t.Fatalf("chunk %d %q splits a UTF-8 sequence", i, content)
			}
			if !starts[s.Start] {
				t.Fatalf("chunk %d starts inside a UTF-8 sequence, at byte %d", i, s.Start)
			}
			pos = s.End
		}
		if pos != len(text) {
			t.Fatalf("the chunks end at %d of %d", pos, len(text))
		}
	})
}
