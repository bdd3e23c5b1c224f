// Package shapes generates the responses real servers send, for property
// tests of the guard's promises: objects with several arrays, a large
// string beside small fields, wide objects, deep nesting, arrays of mixed
// types, huge numbers, HTML characters, pretty-printed JSON, invalid UTF-8,
// lone surrogates, CRLF, empty containers, and texts (logs, prose, Latin-1).
// The same seed always gives the same bytes.
package shapes

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Response is a generated response.
type Response struct {
	Name        string // the shape, for test names and messages
	Body        []byte
	ContentType string // "application/json", "text/plain; charset=utf-8", or "" (sniffed)
}

// Shapes are the generators, by name; each makes a response of about n
// bytes.
var Shapes = []struct {
	Name string
	Make func(r *rand.Rand, n int) Response
}{
	{"list of records", listOfRecords},
	{"verbose record", verboseRecord},
	{"memory graph (two large arrays)", memoryGraph},
	{"several arrays", severalArrays},
	{"large string beside small fields", bigStringBeside},
	{"wide flat object", wideObject},
	{"wide object with one huge value", wideWithHuge},
	{"deep nesting", deep},
	{"array of mixed types", mixedArray},
	{"huge numbers", hugeNumbers},
	{"pretty-printed rows", prettyRows},
	{"random JSON", randomJSON},
	{"JSON string", jsonString},
	{"log text", logText},
	{"prose with CRLF", crlfText},
	{"Latin-1 text (invalid UTF-8)", latin1Text},
	{"JSON served as text/plain", jsonAsText},
}

// Generate returns the response of shape i (modulo the number of shapes)
// of about n bytes.
func Generate(r *rand.Rand, i, n int) Response {
	s := Shapes[i%len(Shapes)]
	resp := s.Make(r, n)
	resp.Name = s.Name
	return resp
}

// Sizes returns sizes as given, and under go test -short (test.sh's -race
// section) with the largest a quarter of itself: the property tests run at
// full size once, in the section without -race.
func Sizes(sizes ...int) []int {
	if testing.Short() {
		sizes = slices.Clone(sizes)
		sizes[len(sizes)-1] /= 4
	}
	return sizes
}

// w writes JSON with a style: compact or pretty, with strings that hold
// everything a JSON string can.
type w struct {
	r      *rand.Rand
	b      strings.Builder
	pretty bool
	depth  int
	nasty  bool // strings with escapes, HTML characters, invalid UTF-8, lone surrogates
}

func newW(r *rand.Rand) *w {
	return &w{r: r, pretty: r.IntN(3) == 0, nasty: r.IntN(2) == 0}
}

func (x *w) nl() {
	if x.pretty {
		x.b.WriteString("\n")
		x.b.WriteString(strings.Repeat("  ", x.depth))
	}
}

func (x *w) open(c byte) {
	x.b.WriteByte(c)
	x.depth++
}

func (x *w) close(c byte) {
	x.depth--
	x.nl()
	x.b.WriteByte(c)
}

func (x *w) sep(i int) {
	if i > 0 {
		x.b.WriteByte(',')
	}
	x.nl()
}

func (x *w) key(k string) {
	x.str(k)
	x.b.WriteByte(':')
	if x.pretty {
		x.b.WriteByte(' ')
	}
}

var words = strings.Fields(`the booking guest confirmed room price policy river tram quiet night
apartment city café naïve 東京 データ 😀 error retry timeout token budget cursor page`)

var nastyBits = []string{`<b>&amp;</b>`, `\u2028`, "\u2028", `\u0041`, `\/`, `\"quoted\"`, `\\`, `\n`, `\r\n`, `\t`,
	`\ud800`, `\udc80`, `\ud83d\ude00`, "\xff", "\xe9", "caf\xc3", `\u0000`, "é", "</script>"}

// str writes a JSON string of words.
func (x *w) str(s string) {
	x.b.WriteByte('"')
	x.b.WriteString(escape(s))
	x.b.WriteByte('"')
}

// text writes a JSON string of about n bytes of words (and nasty bits).
func (x *w) text(n int) {
	x.b.WriteByte('"')
	start := x.b.Len()
	for x.b.Len()-start < n {
		if x.nasty && x.r.IntN(8) == 0 {
			x.b.WriteString(nastyBits[x.r.IntN(len(nastyBits))])
		} else {
			x.b.WriteString(escape(words[x.r.IntN(len(words))]))
		}
		if x.r.IntN(12) == 0 {
			x.b.WriteString(`\n`)
		} else {
			x.b.WriteByte(' ')
		}
	}
	x.b.WriteByte('"')
}

func escape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, `"`, `\"`)
}

func (x *w) number() {
	switch x.r.IntN(6) {
	case 0:
		x.b.WriteString("1e400")
	case 1:
		x.b.WriteString("12345678901234567890123")
	case 2:
		x.b.WriteString("-0.000001")
	case 3:
		x.b.WriteString("2.50")
	default:
		x.b.WriteString(strconv.Itoa(x.r.IntN(100000)))
	}
}

// record writes a small object of fields.
func (x *w) record(id int) {
	x.open('{')
	fields := 3 + x.r.IntN(6)
	for i := 0; i < fields; i++ {
		x.sep(i)
		switch i {
		case 0:
			x.key("id")
			x.str(fmt.Sprintf("R%06d", id))
		case 1:
			x.key("name")
			x.text(10 + x.r.IntN(30))
		default:
			x.key(words[x.r.IntN(len(words))] + strconv.Itoa(i))
			x.scalar()
		}
	}
	x.close('}')
}

func (x *w) scalar() {
	switch x.r.IntN(7) {
	case 0:
		x.number()
	case 1:
		x.b.WriteString([]string{"true", "false", "null"}[x.r.IntN(3)])
	case 2:
		x.b.WriteString([]string{"[]", "{}", `""`}[x.r.IntN(3)])
	default:
		x.text(5 + x.r.IntN(60))
	}
}

func (x *w) records(n, from int) {
	x.open('[')
	for i := 0; x.b.Len() < n || i == 0; i++ {
		x.sep(i)
		x.record(from + i)
	}
	x.close(']')
}

func (x *w) json() Response {
	return Response{Body: []byte(x.b.String()), ContentType: []string{"application/json", ""}[x.r.IntN(2)]}
}

func listOfRecords(r *rand.Rand, n int) Response {
	x := newW(r)
	x.records(n, 0)
	return x.json()
}

// verboseRecord is one record of 8 to 64 fields, as a booking, an issue
// or a profile: scalars, nested objects, lists of small objects and long
// strings, none of them the bulk.
func verboseRecord(r *rand.Rand, n int) Response {
	x := newW(r)
	fields := 8 + r.IntN(57)
	share := max(n/fields, 40)
	x.open('{')
	for i := range fields {
		x.sep(i)
		x.key(fmt.Sprintf("%s_%d", words[r.IntN(len(words))], i))
		switch r.IntN(5) {
		case 0: // a nested object of fields, one of them an object again
			x.open('{')
			for j := range 2 + r.IntN(8) {
				x.sep(j)
				x.key(fmt.Sprintf("f%d", j))
				if j == 1 {
					x.open('{')
					x.sep(0)
					x.key("inner")
					x.text(share / 8)
					x.close('}')
					continue
				}
				x.text(share / 10)
			}
			x.close('}')
		case 1: // a list of small objects
			x.open('[')
			for j, start := 0, x.b.Len(); x.b.Len()-start < share || j == 0; j++ {
				x.sep(j)
				x.open('{')
				x.sep(0)
				x.key("code")
				x.str(fmt.Sprintf("C%03d", j))
				x.sep(1)
				x.key("label")
				x.text(10 + r.IntN(60))
				x.close('}')
			}
			x.close(']')
		case 2: // a long string
			x.text(share)
		default:
			x.scalar()
		}
	}
	x.close('}')
	return x.json()
}

func memoryGraph(r *rand.Rand, n int) Response {
	x := newW(r)
	x.open('{')
	x.sep(0)
	x.key("entities")
	x.open('[')
	for i := 0; x.b.Len() < n*3/4 || i == 0; i++ {
		x.sep(i)
		x.open('{')
		x.sep(0)
		x.key("name")
		x.str(fmt.Sprintf("entity-%d", i))
		x.sep(1)
		x.key("entityType")
		x.str(words[r.IntN(len(words))])
		x.sep(2)
		x.key("observations")
		x.open('[')
		for j := 0; j < 1+r.IntN(3); j++ {
			x.sep(j)
			x.text(20 + r.IntN(40))
		}
		x.close(']')
		x.close('}')
	}
	x.close(']')
	x.sep(1)
	x.key("relations")
	x.open('[')
	for i := 0; x.b.Len() < n || i == 0; i++ {
		x.sep(i)
		x.open('{')
		x.sep(0)
		x.key("from")
		x.str(fmt.Sprintf("entity-%d", r.IntN(100)))
		x.sep(1)
		x.key("to")
		x.str(fmt.Sprintf("entity-%d", r.IntN(100)))
		x.sep(2)
		x.key("relationType")
		x.str("knows")
		x.close('}')
	}
	x.close(']')
	x.close('}')
	return x.json()
}

func severalArrays(r *rand.Rand, n int) Response {
	x := newW(r)
	k := 2 + r.IntN(4)
	x.open('{')
	x.sep(0)
	x.key("status")
	x.str("ok")
	for i := 0; i < k; i++ {
		x.sep(i + 1)
		x.key(fmt.Sprintf("list%d", i))
		x.records(x.b.Len()+n/k, i*1000)
	}
	x.close('}')
	return x.json()
}

func bigStringBeside(r *rand.Rand, n int) Response {
	x := newW(r)
	x.open('{')
	x.sep(0)
	x.key("filesChanged")
	x.b.WriteString(strconv.Itoa(r.IntN(40)))
	x.sep(1)
	x.key("diff")
	x.text(n)
	x.sep(2)
	x.key("insertions")
	x.b.WriteString(strconv.Itoa(r.IntN(4000)))
	x.sep(3)
	x.key("deletions")
	x.b.WriteString(strconv.Itoa(r.IntN(4000)))
	x.close('}')
	return x.json()
}

func wideObject(r *rand.Rand, n int) Response {
	x := newW(r)
	x.open('{')
	for i := 0; x.b.Len() < n || i == 0; i++ {
		x.sep(i)
		x.key(fmt.Sprintf("VAR_%d_%s", i, words[r.IntN(len(words))]))
		x.scalar()
	}
	x.close('}')
	return x.json()
}

func wideWithHuge(r *rand.Rand, n int) Response {
	x := newW(r)
	x.open('{')
	huge := r.IntN(50)
	for i := 0; x.b.Len() < n || i <= huge; i++ {
		x.sep(i)
		x.key(fmt.Sprintf("VAR_%d", i))
		if i == huge {
			x.text(n / 2)
			continue
		}
		x.text(5 + r.IntN(30))
	}
	x.close('}')
	return x.json()
}

func deep(r *rand.Rand, n int) Response {
	x := newW(r)
	levels := 0
	for x.b.Len() < n/2 && levels < 2000 {
		x.open('{')
		x.sep(0)
		x.key("level")
		x.b.WriteString(strconv.Itoa(levels))
		x.sep(1)
		x.key("note")
		x.text(20 + r.IntN(200))
		x.sep(2)
		x.key("child")
		levels++
	}
	x.records(x.b.Len()+n/2, 0)
	for ; levels > 0; levels-- {
		x.close('}')
	}
	return x.json()
}

func mixedArray(r *rand.Rand, n int) Response {
	x := newW(r)
	x.open('[')
	for i := 0; x.b.Len() < n || i == 0; i++ {
		x.sep(i)
		switch r.IntN(5) {
		case 0:
			x.record(i)
		case 1:
			x.open('[')
			x.sep(0)
			x.scalar()
			x.close(']')
		case 2:
			x.text(10 + r.IntN(n/4+1))
		default:
			x.scalar()
		}
	}
	x.close(']')
	return x.json()
}

func hugeNumbers(r *rand.Rand, n int) Response {
	x := newW(r)
	x.open('[')
	for i := 0; x.b.Len() < n || i == 0; i++ {
		x.sep(i)
		if r.IntN(10) == 0 {
			x.b.WriteString("1" + strings.Repeat("0", 1+r.IntN(n/3+1)))
			continue
		}
		x.number()
	}
	x.close(']')
	return x.json()
}

func prettyRows(r *rand.Rand, n int) Response {
	x := newW(r)
	x.pretty = true
	x.records(n, 0)
	return x.json()
}

func randomJSON(r *rand.Rand, n int) Response {
	x := newW(r)
	x.value(n, 0)
	return x.json()
}

func (x *w) value(n, depth int) {
	if n < 40 || depth > 12 {
		x.scalar()
		return
	}
	switch x.r.IntN(4) {
	case 0:
		x.open('[')
		k := 1 + x.r.IntN(8)
		for i := 0; i < k; i++ {
			x.sep(i)
			x.value(n/k, depth+1)
		}
		x.close(']')
	case 1:
		x.open('{')
		k := 1 + x.r.IntN(8)
		for i := 0; i < k; i++ {
			x.sep(i)
			x.key(fmt.Sprintf("k%d", i))
			x.value(n/k, depth+1)
		}
		x.close('}')
	case 2:
		x.text(n)
	default:
		x.scalar()
	}
}

func jsonString(r *rand.Rand, n int) Response {
	x := newW(r)
	if x.pretty {
		x.b.WriteString("  ")
	}
	x.text(n)
	if x.pretty {
		x.b.WriteString("\n")
	}
	return x.json()
}

func logText(r *rand.Rand, n int) Response {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2026-11-24T05:%02d:%02d.%03dZ %s request %d %s\n", i/60%60, i%60, r.IntN(1000),
			[]string{"INFO", "WARN", "ERROR", "DEBUG"}[r.IntN(4)], i, words[r.IntN(len(words))])
		if r.IntN(20) == 0 {
			b.WriteString("\tat com.example.Handler.serve(Handler.java:42)\n\tat com.example.Main.main(Main.java:7)\n")
		}
	}
	return Response{Body: []byte(b.String()), ContentType: "text/plain; charset=utf-8"}
}

func crlfText(r *rand.Rand, n int) Response {
	var b strings.Builder
	for b.Len() < n {
		for i := 0; i < 8+r.IntN(20); i++ {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString([]string{".\r\n", ".\r\n\r\n", "! ", "? "}[r.IntN(4)])
	}
	return Response{Body: []byte(b.String()), ContentType: "text/plain"}
}

func latin1Text(r *rand.Rand, n int) Response {
	b := make([]byte, 0, n)
	for len(b) < n {
		switch r.IntN(10) {
		case 0:
			b = append(b, 0xe9, 0xe8, ' ') // é è in Latin-1
		case 1:
			b = append(b, 0xff, 0x00, '\n')
		default:
			b = append(b, words[r.IntN(4)]...)
			b = append(b, ' ')
		}
	}
	return Response{Body: b, ContentType: "text/plain; charset=iso-8859-1"}
}

func jsonAsText(r *rand.Rand, n int) Response {
	resp := listOfRecords(r, n)
	resp.ContentType = "text/plain"
	return resp
}
