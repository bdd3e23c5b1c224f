// Package textgen generates texts of every kind a tool returns, for the
// property tests that hold ctxfit's chunks of a text to their promises
// (within the hard cap, rebuilt byte for byte, at most 1.3 times the
// original's tokens): texts heavy in backslash and unicode escapes, JSON
// lines, Chinese, random UTF-8, code and prose. The same seed gives the
// same text.
package textgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// ResponseEnvelope is what one answer may cost beyond the text it carries
// when a model reads a text in chunks through an MCP adapter: the
// result's JSON, the guidance line with its cursor, the _meta (the cursor
// again, the strategy, the token figures, the chunk's place) and, on the
// first answer, the link to the whole original; about 470 tokens in the
// tests. The promise (docs/how-it-works.md): reading every chunk of a text
// costs at most 1.3 times the original's tokens plus ResponseEnvelope per
// answer, whatever the text.
const ResponseEnvelope = 600

// Kinds are the kinds of text [Text] generates.
var Kinds = []string{"escapes", "json lines", "chinese", "random utf-8", "code", "prose"}

// Text returns a text of kind (one of [Kinds]) of about size bytes (at
// least size), valid UTF-8.
func Text(r *rand.Rand, kind string, size int) string {
	var b strings.Builder
	for b.Len() < size {
		switch kind {
		case "escapes":
			escapeLine(r, &b)
		case "json lines":
			jsonLine(r, &b)
		case "chinese":
			chineseLine(r, &b)
		case "random utf-8":
			randomLine(r, &b)
		case "code":
			codeLine(r, &b)
		case "prose":
			proseLine(r, &b)
		default:
			panic("textgen: no kind " + kind)
		}
	}
	return b.String()
}

var words = strings.Fields("the a of to and in that is was for on with as by at from it an be this which or are " +
	"booking guest room river tram market quiet bright apartment kitchen balcony street museum night stays old")

// escapeLine is a line as a calculator or a serializer writes it: unicode
// escapes, backslashes, quotes, control characters.
func escapeLine(r *rand.Rand, b *strings.Builder) {
	for i := 0; i < 8+r.IntN(16); i++ {
		switch r.IntN(7) {
		case 0:
			fmt.Fprintf(b, `\u%04x`, r.IntN(0x10000))
		case 1:
			b.WriteString(`\\`)
		case 2:
			b.WriteString(`\"`)
		case 3:
			b.WriteString(`C:\Users\dev\file.txt`)
		case 4:
			b.WriteByte(byte(1 + r.IntN(31))) // a control character, \u00XX in JSON
		case 5:
			b.WriteString(`"<&>"`)
		default:
			b.WriteString(words[r.IntN(len(words))])
		}
	}
	b.WriteByte('\n')
}

func jsonLine(r *rand.Rand, b *strings.Builder) {
	fmt.Fprintf(b, `{"id":%d,"level":%q,"msg":"%s %s","path":"C:\\logs\\%d.log","tags":["%s","%s"],"ok":%t}`+"\n",
		r.IntN(1000000), []string{"info", "warn", "error"}[r.IntN(3)], words[r.IntN(len(words))], words[r.IntN(len(words))],
		r.IntN(100), words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(2) == 0)
}

func chineseLine(r *rand.Rand, b *strings.Builder) {
	for i := 0; i < 10+r.IntN(40); i++ {
		b.WriteRune(rune(0x4e00 + r.IntN(0x9fff-0x4e00)))
		if r.IntN(12) == 0 {
			b.WriteString([]string{"，", "。", "、", "；"}[r.IntN(4)])
		}
	}
	b.WriteString("。\n")
}

// randomLine is random runes of every plane (valid UTF-8, no surrogates).
func randomLine(r *rand.Rand, b *strings.Builder) {
	for i := 0; i < 10+r.IntN(40); i++ {
		var c rune
		switch r.IntN(4) {
		case 0:
			c = rune(r.IntN(0x80))
		case 1:
			c = rune(0x80 + r.IntN(0x800-0x80))
		case 2:
			c = rune(0x800 + r.IntN(0x10000-0x800))
		default:
			c = rune(0x10000 + r.IntN(0x110000-0x10000))
		}
		if !utf8.ValidRune(c) {
			c = '?'
		}
		b.WriteRune(c)
	}
	b.WriteByte('\n')
}

func codeLine(r *rand.Rand, b *strings.Builder) {
	switch r.IntN(6) {
	case 0:
		fmt.Fprintf(b, "func %s%d(ctx context.Context, in *Input) (*Output, error) {\n", words[r.IntN(len(words))], r.IntN(100))
	case 1:
		fmt.Fprintf(b, "\tif err := s.%s(ctx, in.%s); err != nil {\n\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)\n\t}\n",
			words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))])
	case 2:
		fmt.Fprintf(b, "\tre := regexp.MustCompile(`^\\d{%d}\\s+\"[a-z]+\"$`) // %s\n", r.IntN(9), words[r.IntN(len(words))])
	case 3:
		fmt.Fprintf(b, "\tfor i := 0; i < len(%s) && i <= %d; i++ { total += %s[i] }\n", words[r.IntN(len(words))], r.IntN(1000), words[r.IntN(len(words))])
	case 4:
		b.WriteString("}\n\n")
	default:
		fmt.Fprintf(b, "\t// %s %s %s <T> & more\n", words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))])
	}
}

func proseLine(r *rand.Rand, b *strings.Builder) {
	for s := 0; s < 2+r.IntN(5); s++ {
		n := 6 + r.IntN(14)
		for i := 0; i < n; i++ {
			w := words[r.IntN(len(words))]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			if i < n-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString(". ")
	}
	b.WriteString("\n\n")
}
