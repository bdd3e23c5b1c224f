package bpe

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loaderRanks returns tiktoken-go-loader's ranks of encoding name, read
// once per test binary, and the Encoding.
func loaderRanks(t *testing.T, name string) (map[string]int, *Encoding) {
	t.Helper()
	want, err := loaderFiles[name]()
	require.NoError(t, err)
	e, err := Load(name)
	require.NoError(t, err)
	return want, e
}

var loaderFiles = map[string]func() (map[string]int, error){
	O200KBase:  sync.OnceValues(func() (map[string]int, error) { return loaderFile(O200KBase) }),
	CL100KBase: sync.OnceValues(func() (map[string]int, error) { return loaderFile(CL100KBase) }),
}

func loaderFile(name string) (map[string]int, error) {
	return tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
}

// TestTokenFiles holds the embedded token files, which go generate writes,
// to tiktoken-go-loader's rank files: every rank has the same token, and
// every token is found by its bytes.
func TestTokenFiles(t *testing.T) {
	for _, name := range []string{O200KBase, CL100KBase} {
		t.Run(name, func(t *testing.T) {
			want, e := loaderRanks(t, name)
			require.Len(t, e.off, len(want)+1, "one offset per rank and one for the end")
			maxLen := 0
			for tok, r := range want {
				require.Equal(t, tok, e.token(uint32(r)), "rank %d", r)
				require.Equal(t, uint32(r), e.rank(tok), "%q", tok)
				maxLen = max(maxLen, len(tok))
			}
			assert.Equal(t, maxLen, e.maxLen)
			for b := range 256 {
				assert.Equal(t, uint32(want[string([]byte{byte(b)})]), e.byByte[b])
			}
		})
	}
}

// TestRankOfNearMisses looks up, for every token, the strings that differ
// from it in the last byte or extend it by one, which the table must tell apart by their
// bytes and lengths.
func TestRankOfNearMisses(t *testing.T) {
	for _, name := range []string{O200KBase, CL100KBase} {
		t.Run(name, func(t *testing.T) {
			want, e := loaderRanks(t, name)
			check := func(s string) {
				r, ok := want[s]
				if !ok {
					r = noRank
				}
				require.Equal(t, uint32(r), e.rank(s), "%q", s)
			}
			check("")
			check(strings.Repeat("a", e.maxLen+1))
			i := 0
			for tok := range want {
				if i++; testing.Short() && i%8 != 0 {
					continue // under -race (test.sh): an eighth of the tokens; every one without -race
				}
				last := len(tok) - 1
				check(tok[:last] + string(tok[last]^1)) // the same length
				check(tok + "\x00")                     // the same head
			}
		})
	}
}

func TestReadTokensRefusesBrokenFiles(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"a file shorter than its header", "\x01\x00", "token file of 2 bytes"},
		{"more ranks than bytes", "\x09\x00\x00\x00abc", "token file of 7 bytes for 9 ranks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readTokens(tt.file)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestNewEncodingRefusesInconsistentTokens(t *testing.T) {
	bytes := make([]byte, 256)
	ones := make([]byte, 256)
	for b := range bytes {
		bytes[b], ones[b] = byte(b), 1
	}
	tests := []struct {
		name, lens, blob, want string
	}{
		{"lengths that do not add up", string(ones) + "\x02", string(bytes) + "a", "token lengths add up to 258 bytes, have 257"},
		{"a byte without a token", string(ones[1:]), string(bytes[1:]), "255 single-byte tokens, want 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newEncoding("test", tt.lens, tt.blob)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestClassTableMatchesUnicode(t *testing.T) {
	loadClasses()
	t.Run("the basic plane's table holds every rune's classes", func(t *testing.T) {
		for r := rune(0); r < 0x10000; r++ {
			if bmp[r] != computeClass(r) {
				t.Fatalf("class of %U: table %08b, unicode %08b", r, bmp[r], computeClass(r))
			}
		}
	})
	t.Run("the supplementary planes' blocks hold every rune's classes", func(t *testing.T) {
		step := rune(1)
		if testing.Short() {
			step = 7
		}
		for r := rune(0x10000); r <= utf8.MaxRune; r += step {
			if got := suppClass(r); got != computeClass(r) {
				t.Fatalf("class of %U: table %08b, unicode %08b", r, got, computeClass(r))
			}
		}
	})
}

// BenchmarkNewEncoding measures reading an encoding from its token file, the
// work of the first Load (in a fresh process, page faults on the new tables
// add about as much again):
//
//	go test ./internal/bpe -run '^$' -bench NewEncoding
func BenchmarkNewEncoding(b *testing.B) {
	for _, l := range []struct {
		name, file string
	}{{O200KBase, o200kTokens}, {CL100KBase, cl100kTokens}} {
		b.Run(l.name, func(b *testing.B) {
			lens, blob, err := readTokens(l.file)
			require.NoError(b, err)
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				if _, err := newEncoding(l.name, lens, blob); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestFillWrapsAroundTheTable fills a table of two buckets with six tokens
// whose hash picks the last bucket and one that picks the first: two of the
// six must wrap around to the front, and every token must still be found.
func TestFillWrapsAroundTheTable(t *testing.T) {
	var first, last []string
	for c := 0; len(first) < 1 || len(last) < 6; c++ {
		tok := string([]byte{'a' + byte(c/26), 'a' + byte(c%26)})
		if _, hash := key(tok); hash>>63 == 1 && len(last) < 6 {
			last = append(last, tok)
		} else if hash>>63 == 0 && len(first) < 1 {
			first = append(first, tok)
		}
	}
	toks := append(last, first...)
	e := &Encoding{blob: strings.Join(toks, ""), maxLen: 2, table: make([]bucket, 2), shift: 63}
	for r := range toks {
		e.off = append(e.off, uint32(2*r))
	}
	e.off = append(e.off, uint32(len(e.blob)))
	e.fill(len(toks))
	for r, tok := range toks {
		assert.Equal(t, uint32(r), e.rank(tok), "%q", tok)
	}
	assert.Equal(t, uint32(noRank), e.rank("zz"))
}
