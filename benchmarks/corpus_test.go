package benchmarks

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// The input classes of BenchmarkCount, in the order of its output and of the
// docs' table. testdata/corpus/README.md says where each text comes from.
var countClasses = []string{"prose", "code", "json", "chinese", "japanese", "korean", "random-utf8", "random-bytes"}

// countInput returns the text of one input class.
//
// prose, code and json are real texts shipped in testdata/corpus, 512 KiB
// each, used as they are: no repetition, so the per-text piece cache of the
// counter meets each text's own vocabulary once, as on a real response.
//
// chinese, japanese and korean are 1 MiB generated with a fixed seed by a
// character bigram chain trained on a real text of each language (Sunzi's Art
// of War, Akutagawa's Rashomon, Hyun Jin-geon's A Lucky Day): the characters
// and the pairs they form follow the real text's frequencies, but the text does
// not repeat, so repeated pieces do not flatter the cache.
//
// random-utf8 is 1 MiB of random scalar values, a quarter each of one-, two-,
// three- and four-byte UTF-8; random-bytes is 1 MiB of random bytes (mostly
// not UTF-8).
func countInput(class string) string {
	return corpora()[class]
}

var corpora = sync.OnceValue(func() map[string]string {
	m := map[string]string{
		"prose": readCorpus("prose-opticks.txt.gz"),
		"code":  readCorpus("code-ctxfit.go.txt.gz"),
		"json":  readCorpus("json-golist.json.gz"),
	}
	for i, lang := range []struct{ class, file string }{
		{"chinese", "chinese-sunzi.txt"},
		{"japanese", "japanese-rashomon.txt"},
		{"korean", "korean-unsu.txt"},
	} {
		m[lang.class] = bigramText(readCorpus(lang.file), 1<<20, uint64(i+1))
	}
	m["random-utf8"] = randomUTF8(1<<20, 7)
	m["random-bytes"] = randomBytes(1<<20, 8)
	return m
})

func readCorpus(name string) string {
	data, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
	if err != nil {
		panic(err)
	}
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			panic(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			panic(err)
		}
	}
	return string(data)
}

// bigramText returns n bytes (at most; whole characters) drawn from the
// character bigram chain of source: each character follows the one before it
// with the frequency that pair has in source. The header lines of the
// x/text test files (up to "--------") are left out.
func bigramText(source string, n int, seed uint64) string {
	if _, after, ok := strings.Cut(source, "--------\n"); ok {
		source = after
	}
	runes := []rune(source)
	next := map[rune][]rune{} // every successor, as often as it follows
	for i := 0; i+1 < len(runes); i++ {
		next[runes[i]] = append(next[runes[i]], runes[i+1])
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var b strings.Builder
	cur := runes[0]
	for {
		succ := next[cur]
		if len(succ) == 0 { // the text's last character: start again anywhere
			cur = runes[r.IntN(len(runes))]
			continue
		}
		cur = succ[r.IntN(len(succ))]
		if b.Len()+utf8.RuneLen(cur) > n {
			return b.String()
		}
		b.WriteRune(cur)
	}
}

// randomUTF8 returns n bytes (at most) of random scalar values, a quarter
// each of one-, two-, three- and four-byte encodings.
func randomUTF8(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	ranges := [][2]rune{{0x20, 0x7f}, {0x80, 0x800}, {0x800, 0x10000}, {0x10000, 0x110000}}
	var b strings.Builder
	for {
		rg := ranges[r.IntN(len(ranges))]
		c := rg[0] + rune(r.IntN(int(rg[1]-rg[0])))
		if c >= 0xd800 && c < 0xe000 { // surrogates are not scalar values
			continue
		}
		if b.Len()+utf8.RuneLen(c) > n {
			return b.String()
		}
		b.WriteRune(c)
	}
}

func randomBytes(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// randomLetters returns n random lowercase ASCII letters: one piece as long
// as the text, the hardest input for a byte-pair merge's linearity.
func randomLetters(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	return string(b)
}
