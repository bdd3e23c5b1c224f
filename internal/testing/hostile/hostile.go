// Package hostile holds MCP tool results that a well-behaved server
// would not send but a real one may: thousands of links or blocks, a huge
// isError result, a huge _meta, embedded resources, media interleaved with
// text, backslash-heavy text. Each is the wire JSON of a CallToolResult,
// far over the test budgets (a threshold of 1,000 tokens), for the tests
// that hold every MCP adapter to the two promises: every result within
// the hard cap, everything reachable and rebuilt as it was.
//
// It imports no MCP SDK: test servers of each SDK serve these results.
package hostile

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// A Case is a tool result: the tool that returns it and its wire JSON.
type Case struct {
	Tool   string
	Result json.RawMessage
}

// Cases are the hostile results, one a tool. They are built once; the
// caller must not modify them. Under go test -short (test.sh's -race
// section) each is an eighth of its size, but the escapes whole, the
// images a quarter and the mixed media six blocks (every kind): still over
// the threshold of the tests, so every one is shaped (the checks require
// its link). The full sizes run once, without -race.
func Cases() []Case { return cases() }

var cases = sync.OnceValue(func() []Case {
	n := func(full int) int { return full }
	if testing.Short() {
		n = func(full int) int { return full / 8 }
	}
	return []Case{
		{"links", result(links(n(1500)), "", "", false)},
		{"embedded", result(embedded(n(120)), "", "", false)},
		{"blocks", result(texts(n(2000)), "", "", false)},
		{"huge_error", result([]string{text(words(n(15000)))}, "", "", true)},
		{"huge_meta", result([]string{text("a small result")}, meta(n(120000)), "", false)},
		{"mixed_media", result(mixed(rand.New(rand.NewPCG(1, 2)), max(n(18), 6)), "", "", false)},
		{"escapes", result([]string{text(escapes(20000))}, "", "", false)},
		{"big_blocks", result([]string{text(words(n(9000))), text("between"), text(words(n(9000)))}, "", "", false)},
		{"structured_and_links", result(links(n(500)), "", structured(n(1000)), false)},
		{"images", result(images(rand.New(rand.NewPCG(5, 6)), 2*n(600)), "", "", false)},
	}
})

// result is the wire JSON of a result of content, with _meta and
// structured content when not "".
func result(content []string, meta, structured string, isErr bool) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"content":[`)
	b.WriteString(strings.Join(content, ","))
	b.WriteByte(']')
	if structured != "" {
		b.WriteString(`,"structuredContent":`)
		b.WriteString(structured)
	}
	if isErr {
		b.WriteString(`,"isError":true`)
	}
	if meta != "" {
		b.WriteString(`,"_meta":`)
		b.WriteString(meta)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func text(s string) string { return `{"type":"text","text":` + quote(s) + `}` }

// words is n words of prose.
func words(n int) string {
	w := []string{"the", "guest", "booked", "a", "room", "with", "a", "view", "of", "the", "harbour", "and", "paid", "in", "advance."}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i%40 == 39 {
			b.WriteString("end.\n")
			continue
		}
		b.WriteString(w[i%len(w)])
	}
	return b.String()
}

// escapes is n characters of text that JSON escapes: backslashes,
// quotes, unicode escapes written out, control characters.
func escapes(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `\u%04x "q" \\path\\to\\file%d`+"\t\n", 0x2000+i%512, i)
	}
	return b.String()
}

func links(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"type":"resource_link","uri":"file:///srv/data/file-%05d.txt","name":"file-%05d.txt","mimeType":"text/plain","size":%d}`, i, i, 100+i)
	}
	return out
}

func embedded(n int) []string {
	out := make([]string, n)
	for i := range out {
		if i%2 == 0 {
			out[i] = fmt.Sprintf(`{"type":"resource","resource":{"uri":"file:///srv/doc-%d.md","mimeType":"text/markdown","text":%s}}`, i, quote(words(120)))
		} else {
			blob := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte(i), 0xff, 0}, 200))
			out[i] = fmt.Sprintf(`{"type":"resource","resource":{"uri":"file:///srv/bin-%d","mimeType":"application/octet-stream","blob":"%s"}}`, i, blob)
		}
	}
	return out
}

func images(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = Image(r, 4+r.IntN(8), 4+r.IntN(8))
	}
	return out
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = text(fmt.Sprintf("line %d of the listing", i))
	}
	return out
}

func meta(size int) string {
	var b strings.Builder
	b.WriteString(`{"example/trace":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"span":%d,"name":"step %d","ok":true}`, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func structured(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"id":%d,"name":"item %d"}`, i, i)
	}
	return `{"items":[` + strings.Join(items, ",") + `]}`
}

// mixed is n blocks of a document as a PDF server sends it: pages of
// text with images and now and then audio between them.
func mixed(r *rand.Rand, n int) []string {
	out := make([]string, 0, n)
	for i := range n {
		switch {
		case i%3 == 1:
			out = append(out, Image(r, 20+r.IntN(100), 20+r.IntN(100)))
		case i%7 == 5:
			out = append(out, Audio(r, 2000+r.IntN(4000)))
		default:
			out = append(out, text(fmt.Sprintf("Page %d.\n", i)+words(200+r.IntN(900))))
		}
	}
	return out
}

// Image is an image block of w x h pixels of noise (PNG).
func Image(r *rand.Rand, w, h int) string {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
	}
	img.Set(0, 0, color.Gray{Y: 1})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return `{"type":"image","data":"` + base64.StdEncoding.EncodeToString(b.Bytes()) + `","mimeType":"image/png"}`
}

// Audio is an audio block of n bytes of 8 kHz mono WAV.
func Audio(r *rand.Rand, n int) string {
	b := make([]byte, 44+n)
	copy(b, "RIFF")
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint32(b[28:], 8000)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(n))
	for i := 44; i < len(b); i++ {
		b[i] = byte(r.IntN(256))
	}
	return `{"type":"audio","data":"` + base64.StdEncoding.EncodeToString(b) + `","mimeType":"audio/wav"}`
}

// Generate is a random multi-block result for property tests: up to
// maxBlocks blocks of every kind (text of every size, escapes included,
// images, audio, links, embedded text and blobs) in random order, now and
// then with a large _meta, structured content or isError.
func Generate(r *rand.Rand, maxBlocks int) json.RawMessage {
	n := 1 + r.IntN(maxBlocks)
	content := make([]string, n)
	for i := range content {
		switch k := r.IntN(10); {
		case k < 4:
			var s string
			switch r.IntN(3) {
			case 0:
				s = words(1 + r.IntN(3000))
			case 1:
				s = escapes(1 + r.IntN(6000))
			default:
				s = words(r.IntN(30))
			}
			content[i] = text(s)
		case k == 4:
			content[i] = Image(r, 8+r.IntN(120), 8+r.IntN(120))
		case k == 5:
			content[i] = Audio(r, 100+r.IntN(8000))
		case k == 6:
			content[i] = links(1 + r.IntN(3))[0]
		default:
			content[i] = embedded(2)[r.IntN(2)]
		}
	}
	var m, st string
	if r.IntN(4) == 0 {
		m = meta(1000 + r.IntN(30000))
	}
	if r.IntN(5) == 0 {
		st = structured(1 + r.IntN(1500))
	}
	return result(content, m, st, r.IntN(5) == 0)
}

// Tokens counts a result's wire JSON as a client reads it: its exact
// o200k_base token count, but for the data of images and audio, which
// count what a model reads of them (the default mcpcore.MediaRule), the
// rest of their block as JSON.
func Tokens(raw json.RawMessage) (int, error) {
	exact, err := budget.Exact("")
	if err != nil {
		return 0, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return exact.Count(string(raw)), nil
	}
	var rule mcpcore.MediaRule
	media := 0
	var out bytes.Buffer
	out.WriteByte('{')
	for first := true; dec.More(); first = false {
		tok, err := dec.Token()
		if err != nil {
			return 0, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, err
		}
		var list []json.RawMessage
		if tok == "content" && json.Unmarshal(v, &list) == nil {
			for i, b := range list {
				var m struct {
					Type string `json:"type"`
					Data string `json:"data"`
				}
				if json.Unmarshal(b, &m) != nil || m.Type != "image" && m.Type != "audio" {
					continue
				}
				data, err := base64.StdEncoding.DecodeString(m.Data)
				if err != nil {
					continue
				}
				n, ok := rule.ImageTokens(data)
				if m.Type == "audio" {
					n, ok = rule.AudioTokens(data), true
				}
				if !ok {
					continue
				}
				media += n
				list[i] = json.RawMessage(strings.Replace(string(b), `"`+m.Data+`"`, `""`, 1))
			}
			v, _ = json.Marshal(list)
		}
		if !first {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(tok)
		out.Write(k)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return exact.Count(out.String()) + media, nil
}
