package bpe_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/bpe"
)

var encodings = []string{bpe.O200KBase, bpe.CL100KBase}

var (
	refOnce sync.Once
	refs    map[string]*tiktoken.Tiktoken
)

// reference returns tiktoken-go's encoder, loaded offline from the same
// embedded ranks.
func reference(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	refOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		refs = map[string]*tiktoken.Tiktoken{}
		for _, n := range encodings {
			tk, err := tiktoken.GetEncoding(n)
			if err != nil {
				panic(err)
			}
			refs[n] = tk
		}
	})
	return refs[name]
}

func load(t testing.TB, name string) *bpe.Encoding {
	t.Helper()
	e, err := bpe.Load(name)
	require.NoError(t, err)
	return e
}

// tricky holds inputs aimed at each branch of the split patterns.
var tricky = []string{
	"", "a", " ", "\n", "hello world", "Hello, World!", "  indented\n  \n\tcode\n",
	"line\r\nline\r\n\r\n", "a  \n b", "trailing   ", "   leading", "x \n\n y",
	"don't I'LL we'Re they've he'd she's 'S 'sup ''s", "1234567 12 3.14159 1,000,000",
	"½ ⅔ Ⅻ ٣٤٥", "日本語のテキスト、句読点。", "한국어 텍스트", "emoji 😀👍🏽 👨‍👩‍👧",
	"Ünïcödé ÀÉÎÕÜ àéîõü", "ǅungla ǈ ǋ", "ʰʲʷ ˈstress", "a\u0301e\u0301 \u0301x", "\u0301\u0302",
	"\u00a0nbsp\u2003em\u3000ideographic", "\u0085next-line\u2028ls\u2029ps",
	"{\"key\": [1, 2, {\"nested\": null}], \"s\": \"va/lue\"}\n", "path/to/file.go:12:34",
	"!!!???...,,,;;; --- ***", " !\n", " !!\r\n/", "a/b//c\n/", "HTTPServer XMLHttpRequest iOS",
	"CamelCaseWordsAndALLCAPS", "\t\t\n\t\t\n", "   \n   ", "\r\r\r\n\n", "x\u200by",
	strings.Repeat("a", 300), strings.Repeat(" ", 300) + "x", strings.Repeat("!", 300),
	strings.Repeat("ab", 200), strings.Repeat("9", 100), strings.Repeat("日", 200),
	"\xff\xfe invalid \xc3 utf8 \xed\xa0\x80", "\x00\x01\x02", "Ǆ\u0345ß", "ﬁﬂ",
}

func TestEncodeMatchesTiktokenOnTrickyInputs(t *testing.T) {
	for _, name := range encodings {
		e, ref := load(t, name), reference(t, name)
		for _, s := range tricky {
			t.Run(fmt.Sprintf("%s/%q", name, trunc(s)), func(t *testing.T) {
				want := ref.EncodeOrdinary(s)
				if len(want) == 0 {
					want = nil
				}
				assert.Equal(t, want, e.Encode(s))
				assert.Equal(t, len(want), e.Count(s))
			})
		}
	}
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// alphabet mixes every character class the patterns distinguish.
var alphabet = []string{
	"a", "b", "e", "s", "t", "l", "A", "S", "T", "L", "E", "'", "\"", " ", "  ", "\t", "\n", "\r", "\r\n",
	"0", "1", "9", ",", ".", "!", "?", "/", "\\", "{", "}", "[", "]", ":", "-", "_", "=",
	"é", "É", "ß", "ǅ", "ʰ", "日", "本", "한", "\u0301", "\u0345", "😀", "🏽", "\u200d", "½", "Ⅻ", "٣",
	"\u00a0", "\u3000", "\u2028", "\u0085", "\xff", "\xc3", "the", "The", "THE", "ing", "http", "://",
}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func TestCountMatchesTiktokenOnRandomText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range encodings {
		e, ref := load(t, name), reference(t, name)
		n := 3000
		if testing.Short() {
			n = 600 // under -race (test.sh); 3,000 without -race
		}
		for i := range n {
			s := randomText(r, r.IntN(60))
			want := ref.EncodeOrdinary(s)
			if len(want) == 0 {
				want = nil
			}
			if !assert.Equal(t, want, e.Encode(s), "%s case %d: %q", name, i, s) {
				return
			}
		}
	}
}

func FuzzMatchesTiktoken(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	// Long pieces, for the backtracking search: runs ending in each way,
	// random letters and punctuation.
	f.Add(strings.Repeat("=", 97) + "-" + strings.Repeat("=", 50))
	f.Add(strings.Repeat(" ", 130) + "\t" + strings.Repeat(" ", 70) + "x")
	f.Add("qzkxjvbwpmfyhgltdnrcsaeiouqzkxjvbwpmfyhgltdnrcsaeiouqzkxjvbwpmfyhglt")
	f.Add("*=-*==-**=--=*-=**=-=--**==-=*-*=-==*--=**-*=-=*=--==*-*=*-=--*==*-=*")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 2000 {
			return
		}
		for _, name := range encodings {
			want := reference(t, name).EncodeOrdinary(s)
			got := load(t, name).Encode(s)
			if len(want) == 0 {
				want = nil
			}
			require.Equal(t, want, got, "%s: %q", name, s)
			require.Equal(t, len(want), load(t, name).Count(s))
		}
	})
}

func TestCountMatchesTiktokenOnLongPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sets := map[string][]string{
		"letters":     {"a", "b", "e", "r", "s", "é", "日", "\u0301", "A"},
		"lower":       {"a", "b", "e", "r", "s", "t", "n", "o"},
		"punctuation": {"!", "=", "-", "{", "}", "*", "\"", ":"},
		"two puncts":  {"=", "-"},
		"spaces":      {" ", " ", " ", "\t", "\n", "\r\n"},
		"cjk":         {"日", "本", "語", "の", "テ", "キ", "ス", "ト"},
		"marks":       {"a", "e", "\u0301", "\u0308", "\u0327"},
		"words":       {"the", "token", "ization", "inter", "national", "budget", "counter", "of"},
	}
	names := make([]string, 0, len(sets))
	for name := range sets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range encodings {
		e, ref := load(t, name), reference(t, name)
		check := func(t *testing.T, s string) bool {
			want := ref.EncodeOrdinary(s)
			return assert.Equal(t, want, e.Encode(s), "%q", trunc(s)) &&
				assert.Equal(t, len(want), e.Count(s), "%q", trunc(s))
		}
		for _, set := range names {
			t.Run(name+"/"+set, func(t *testing.T) {
				for range 40 {
					var b strings.Builder
					for n := 50 + r.IntN(1500); b.Len() < n; {
						b.WriteString(sets[set][r.IntN(len(sets[set]))])
					}
					if !check(t, b.String()) {
						return
					}
				}
			})
		}
		// Runs of one character, with every tail length up to the longest
		// token, so each way a run can end is checked.
		t.Run(name+"/runs", func(t *testing.T) {
			for _, c := range []string{"=", " ", "-", "*", "a", "日"} {
				for n := 49; n <= 300; n++ {
					if !check(t, strings.Repeat(c, n)) || !check(t, strings.Repeat(c, n)+"x") {
						return
					}
				}
			}
		})
	}
}
