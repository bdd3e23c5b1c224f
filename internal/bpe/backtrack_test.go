package bpe

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests hold the backtracking search (backtrack.go) to tiktoken's own
// merge, as mergeShort and mergeLong implement it, on the real encodings and
// on small random vocabularies.

func loadBacktracker(t testing.TB, name string) (*Encoding, *backtracker) {
	t.Helper()
	e, err := Load(name)
	require.NoError(t, err)
	bt := e.backtracker()
	require.NotNil(t, bt, "%s must meet the search's assumptions, or long pieces are slow", name)
	return e, bt
}

// mergeTokens returns tiktoken's merge of piece: mergeLong's tokens, checked
// against mergeShort's when the piece is short enough for it.
func mergeTokens(t testing.TB, e *Encoding, piece string) []uint32 {
	t.Helper()
	var toks []uint32
	e.mergeLong(piece, func(a, b int) { toks = append(toks, e.rank(piece[a:b])) })
	if len(piece) <= shortPiece {
		var starts [shortPiece + 1]int32
		n := e.mergeShort(piece, &starts)
		short := make([]uint32, n)
		for k := range n {
			short[k] = e.rank(piece[starts[k]:starts[k+1]])
		}
		require.Equal(t, short, toks, "mergeShort and mergeLong disagree on %q", piece)
	}
	return toks
}

// searchTokens returns the backtracking search's tokens for piece.
func searchTokens(t testing.TB, bt *backtracker, sc *btScratch, piece string) []uint32 {
	t.Helper()
	require.True(t, bt.encode(piece, sc), "search failed on %q", piece)
	toks := make([]uint32, len(sc.stack))
	for i, x := range sc.stack {
		toks[i] = x &^ guessed
	}
	return toks
}

func TestCanonicalSplitsMatchOwnMerge(t *testing.T) {
	for _, name := range []string{O200KBase, CL100KBase} {
		t.Run(name, func(t *testing.T) {
			e, bt := loadBacktracker(t, name)
			starts := make([]int32, e.maxLen+1)
			ranks := make([]uint32, e.maxLen)
			for id := range len(bt.off) - 1 {
				tok := bt.token(uint32(id))
				if len(tok) < 2 || testing.Short() && id%8 != 0 { // under -race (test.sh): an eighth of the tokens
					continue
				}
				whole, cut, monotone := e.ownMerge(tok, starts, ranks)
				if !whole {
					assert.Zero(t, bt.tokLen[id], "unreachable %q", tok)
					continue
				}
				require.True(t, monotone, "%q", tok)
				require.Equal(t, split{e.rank(tok[:cut]), e.rank(tok[cut:])}, bt.split[id], "%q", tok)
				require.Equal(t, uint32(id), bt.pair(bt.split[id].left, bt.split[id].right))
			}
		})
	}
}

// firstByteIndex lists the reachable tokens by first byte.
func firstByteIndex(bt *backtracker) [256][]uint32 {
	var idx [256][]uint32
	for id, n := range bt.tokLen {
		if n > 0 {
			idx[bt.token(uint32(id))[0]] = append(idx[bt.token(uint32(id))[0]], uint32(id))
		}
	}
	return idx
}

func TestValidPairMatchesMerge(t *testing.T) {
	for _, name := range []string{O200KBase, CL100KBase} {
		t.Run(name, func(t *testing.T) {
			e, bt := loadBacktracker(t, name)
			check := func(a, b uint32) {
				got := bt.validPair(a, b)
				want := slices.Equal(mergeTokens(t, e, bt.token(a)+bt.token(b)), []uint32{a, b})
				require.Equal(t, want, got, "pair %q + %q", bt.token(a), bt.token(b))
				require.Equal(t, want, bt.valid(a, b))
			}
			// Every pair of tokens made of one repeated byte: the densest
			// merges there are.
			for _, c := range "= -*#a0.\n!" {
				var run []uint32
				for k := 1; k <= e.maxLen; k++ {
					if r := e.rank(strings.Repeat(string(c), k)); r != noRank {
						run = append(run, r)
					}
				}
				for _, a := range run {
					for _, b := range run {
						check(a, b)
					}
				}
			}
			// Random tokens, and b chosen to start with a's last byte.
			idx := firstByteIndex(bt)
			var all []uint32
			for id, n := range bt.tokLen {
				if n > 0 {
					all = append(all, uint32(id))
				}
			}
			r := rand.New(rand.NewPCG(5, 6))
			cases := 40000
			if !exhaustive() {
				cases = 4000
			}
			for range cases {
				a := all[r.IntN(len(all))]
				b := all[r.IntN(len(all))]
				check(a, b)
				next := idx[bt.token(a)[len(bt.token(a))-1]]
				check(a, next[r.IntN(len(next))])
			}
		})
	}
}

// pieceMakers generate pieces whose merges are dense: small alphabets of
// letters, punctuation, spaces, CJK and combining marks, runs, repeats, real
// words and vocabulary tokens glued together.
func pieceMakers(bt *backtracker) map[string]func(r *rand.Rand, n int) string {
	fromSet := func(set ...string) func(r *rand.Rand, n int) string {
		return func(r *rand.Rand, n int) string {
			var b strings.Builder
			for b.Len() < n {
				b.WriteString(set[r.IntN(len(set))])
			}
			return b.String()
		}
	}
	var letterTokens []string
	for id, n := range bt.tokLen {
		if n > 1 && strings.Trim(bt.token(uint32(id)), "abcdefghijklmnopqrstuvwxyz") == "" {
			letterTokens = append(letterTokens, bt.token(uint32(id)))
		}
	}
	var anyTokens []string
	for id, n := range bt.tokLen {
		if n > 0 {
			anyTokens = append(anyTokens, bt.token(uint32(id)))
		}
	}
	words := strings.Fields(`the of and to in is that for it as with was on be at by this had not are but
		from or have an they which one you were her all she there would their we him been has when who will
		more no if out so said what up its about into than them can only other new some could time these two
		may then do first any my now such like our over man me even most made after also did many before must
		through back years where much your way well down should because each just those people how too little
		state good very make world still own see men work long get here between both life being under never
		day same another know while last might us great old year off come since against go came right used take
		three tokenization internationalization counter budget pagination cursor`)
	return map[string]func(r *rand.Rand, n int) string{
		"letters":     fromSet("a", "b", "e", "r", "s", "t", "n", "o"),
		"two letters": fromSet("a", "b"),
		"punctuation": fromSet("=", "-", "*", "#", "!", "/", ".", "_", "{", "}"),
		"two puncts":  fromSet("=", "-"),
		"spaces":      fromSet(" ", " ", " ", "\t", "\n"),
		"cjk":         fromSet("日", "本", "語", "の", "テ", "キ", "ス", "ト", "一"),
		"marks":       fromSet("a", "e", "\u0301", "\u0308", "\u0327", "é"),
		"bytes":       fromSet("\x80", "\xe3", "\x81", "a", " ", "\xff"),
		"words":       fromSet(words...),
		"letter toks": fromSet(letterTokens...),
		"any toks":    fromSet(anyTokens...),
		"mixed":       fromSet("a", "=", " ", "日", "\u0301", "0", "'"),
		"run":         func(r *rand.Rand, n int) string { return strings.Repeat(string("= -*#a0.\n!"[r.IntN(10)]), n) },
		"run and tail": func(r *rand.Rand, n int) string {
			return strings.Repeat("=", n) + fromSet("-", "=", "*")(r, 1+r.IntN(5))
		},
		"repeat": func(r *rand.Rand, n int) string {
			unit := fromSet("a", "b", "c", "=", " ", "-", "日")(r, 1+r.IntN(6))
			return strings.Repeat(unit, n/len(unit)+1)[:n]
		},
	}
}

func TestBacktrackMatchesMerge(t *testing.T) {
	for _, name := range []string{O200KBase, CL100KBase} {
		e, bt := loadBacktracker(t, name)
		makers := pieceMakers(bt)
		kinds := make([]string, 0, len(makers))
		for k := range makers {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		for _, kind := range kinds {
			t.Run(name+"/"+kind, func(t *testing.T) {
				r := rand.New(rand.NewPCG(7, uint64(len(kind))))
				sc := new(btScratch) // reused, as the pool does
				cases := 400
				if !exhaustive() {
					cases = 40
				}
				for i := range cases {
					n := 1 + r.IntN(64)
					switch i % 5 {
					case 1:
						n = 1 + r.IntN(400)
					case 2:
						n = 1 + r.IntN(3000)
					case 3:
						n = 1 + r.IntN(shortPiece)
					}
					piece := makers[kind](r, n)
					want := mergeTokens(t, e, piece)
					if !assert.Equal(t, want, searchTokens(t, bt, sc, piece), "case %d: %q", i, trunc(piece, 200)) {
						return
					}
				}
			})
		}
	}
}

func TestBacktrackMatchesMergeOnRuns(t *testing.T) {
	for _, name := range []string{O200KBase, CL100KBase} {
		e, bt := loadBacktracker(t, name)
		sc := new(btScratch)
		for _, c := range []string{"=", " ", "-", "*", "#", "a", "0", ".", "!", "日", "ab", "=-", " \n"} {
			t.Run(fmt.Sprintf("%s/%q", name, c), func(t *testing.T) {
				lengths := append(seq(1, 300), 511, 512, 513, 1000, 4095, 4096, 4097)
				if !testing.Short() { // under -race (test.sh) the lengths stop at 4097
					lengths = append(lengths, 20000)
				}
				for _, n := range lengths {
					piece := strings.Repeat(c, n)
					require.Equal(t, mergeTokens(t, e, piece), searchTokens(t, bt, sc, piece), "%d × %q", n, c)
				}
			})
		}
	}
}

func TestSearchGivesUpPastItsWorkLimit(t *testing.T) {
	e, bt := loadBacktracker(t, O200KBase)
	piece := strings.Repeat("=", 1000) + "-" + strings.Repeat("=", 77)
	sc := new(btScratch)
	assert.False(t, bt.search(piece, sc, 20), "a search allowed 20 tries must give up")
	assert.Empty(t, sc.stack)
	// The same scratch then serves a full search, and the counts, which fall
	// back to mergeLong when the search gives up, agree with the merge.
	want := mergeTokens(t, e, piece)
	assert.Equal(t, want, searchTokens(t, bt, sc, piece))
	assert.Equal(t, len(want), e.Count(piece))
}

func seq(from, to int) []int {
	s := make([]int, 0, to-from+1)
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// FuzzBacktrackMatchesMerge feeds arbitrary bytes, as one piece, to the
// search and to the merge; repeating the input makes it long and periodic:
//
//	go test ./internal/bpe -run '^$' -fuzz FuzzBacktrackMatchesMerge
func FuzzBacktrackMatchesMerge(f *testing.F) {
	f.Add("=-", uint8(80))
	f.Add(" ", uint8(200))
	f.Add("qzkxjvbwpmfy", uint8(9))
	f.Add("日本\u0301", uint8(20))
	f.Fuzz(func(t *testing.T, unit string, times uint8) {
		piece := strings.Repeat(unit, int(times))
		if piece == "" || len(piece) > 4000 {
			return
		}
		for _, name := range []string{O200KBase, CL100KBase} {
			e, bt := loadBacktracker(t, name)
			require.Equal(t, mergeTokens(t, e, piece), searchTokens(t, bt, new(btScratch), piece), "%s: %q", name, piece)
		}
	})
}

// synthetic returns an encoding with all 256 bytes at ranks 0 to 255 and then
// tokens, in rank order.
func synthetic(tokens []string) *Encoding {
	var lens, blob []byte
	for b := range 256 {
		lens, blob = append(lens, 1), append(blob, byte(b))
	}
	for _, tok := range tokens {
		lens, blob = append(lens, byte(len(tok))), append(blob, tok...)
	}
	e, err := newEncoding("synthetic", string(lens), string(blob))
	if err != nil {
		panic(err)
	}
	return e
}

// TestBacktrackOnRandomVocabularies runs the search on random small
// vocabularies over "abc", whose tokens may be unreachable or merge out of
// rank order: the build must refuse exactly the latter, and otherwise the
// search must agree with the merge on every pair and every random piece.
func TestBacktrackOnRandomVocabularies(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	vocabs := 1500
	if !exhaustive() {
		vocabs = 150
	}
	built, withUnreachable := 0, 0
	for v := range vocabs {
		alphabet := []string{"a", "b", "c"}[:2+v%2]
		known := slices.Clone(alphabet)
		seen := map[string]bool{}
		for _, a := range alphabet {
			seen[a] = true
		}
		var toks []string
		for len(toks) < 5+r.IntN(40) {
			var s string
			switch r.IntN(6) {
			case 0: // a run
				s = strings.Repeat(known[r.IntN(len(known))], 2+r.IntN(3))
			case 1: // any string, likely unreachable
				for n := 2 + r.IntN(5); len(s) < n; {
					s += alphabet[r.IntN(len(alphabet))]
				}
			default: // two known tokens glued, as training does
				s = known[r.IntN(len(known))] + known[r.IntN(len(known))]
			}
			if len(s) > 12 || seen[s] {
				continue
			}
			seen[s] = true
			known = append(known, s)
			toks = append(toks, s)
		}
		if r.IntN(3) == 0 { // some ranks out of training order
			i, j := r.IntN(len(toks)), r.IntN(len(toks))
			toks[i], toks[j] = toks[j], toks[i]
		}
		e := synthetic(toks)
		starts := make([]int32, e.maxLen+1)
		ranks := make([]uint32, e.maxLen)
		outOfOrder, unreachable := false, false
		for _, tok := range toks {
			whole, _, monotone := e.ownMerge(tok, starts, ranks)
			outOfOrder = outOfOrder || whole && !monotone
			unreachable = unreachable || !whole
		}
		bt := buildBacktracker(e)
		require.Equal(t, outOfOrder, bt == nil, "vocabulary %d: %q", v, toks)
		if bt == nil {
			continue
		}
		built++
		if unreachable {
			withUnreachable++
		}
		for _, a := range toks {
			for _, b := range toks {
				ra, rb := e.rank(a), e.rank(b)
				if bt.tokLen[ra] == 0 || bt.tokLen[rb] == 0 {
					continue
				}
				want := slices.Equal(mergeTokens(t, e, a+b), []uint32{ra, rb})
				require.Equal(t, want, bt.validPair(ra, rb), "vocabulary %q: pair %q + %q", toks, a, b)
			}
		}
		sc := new(btScratch)
		for i := range 40 {
			set := known
			if i%2 == 0 {
				set = alphabet
			}
			var b strings.Builder
			for n := 1 + r.IntN(300); b.Len() < n; {
				b.WriteString(set[r.IntN(len(set))])
			}
			piece := b.String()
			require.Equal(t, mergeTokens(t, e, piece), searchTokens(t, bt, sc, piece), "vocabulary %q: piece %q", toks, piece)
		}
	}
	t.Logf("%d of %d vocabularies met the assumptions, %d of them with unreachable tokens", built, vocabs, withUnreachable)
	assert.Greater(t, built, vocabs/4, "too few vocabularies met the assumptions to test the search")
	assert.Greater(t, withUnreachable, vocabs/10, "too few vocabularies with unreachable tokens")
}

// BenchmarkBuildBacktracker measures building the long-piece tables and
// reports their size:
//
//	go test ./internal/bpe -run '^$' -bench BuildBacktracker
func BenchmarkBuildBacktracker(b *testing.B) {
	for _, name := range []string{O200KBase, CL100KBase} {
		b.Run(name, func(b *testing.B) {
			e, err := Load(name)
			require.NoError(b, err)
			b.ReportAllocs()
			var bt *backtracker
			start := cpuTime()
			for b.Loop() {
				bt = buildBacktracker(e)
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(bt.size())/(1<<20), "MiB")
		})
	}
}

// size returns the bytes that bt holds, not counting the tokens' bytes and
// offsets, which it shares with the Encoding.
func (bt *backtracker) size() int {
	n := int(unsafe.Sizeof(*bt))
	n += len(bt.tokLen) + len(bt.split)*8 + len(bt.shorter)*4
	n += len(bt.pairs)*8 + len(bt.node)*8 + len(bt.label)
	for _, r := range bt.runs {
		n += len(r) * 8
	}
	return n
}

func TestMergeCountsMidPiecesAsTheScanDoesOnceTheSearchIsBuilt(t *testing.T) {
	for _, name := range []string{O200KBase, CL100KBase} {
		e, bt := loadBacktracker(t, name)
		require.True(t, e.btBuilt.Load(), "building the search's tables sends pieces of midPiece bytes on to it")
		makers := pieceMakers(bt)
		for _, kind := range slices.Sorted(maps.Keys(makers)) {
			t.Run(name+"/"+kind, func(t *testing.T) {
				r := rand.New(rand.NewPCG(11, uint64(len(kind))))
				var starts [shortPiece + 1]int32
				for i := range 200 {
					piece := makers[kind](r, midPiece+r.IntN(shortPiece-midPiece+1))
					if len(piece) > shortPiece || e.rank(piece) != noRank {
						continue
					}
					if !assert.Equal(t, e.mergeShort(piece, &starts), e.merge(piece), "case %d: %q", i, piece) {
						return
					}
				}
			})
		}
	}
}

// freshEncoding reads name's token file into a new Encoding, whose long-piece
// tables are not built yet.
func freshEncoding(t testing.TB, name string) *Encoding {
	t.Helper()
	loadClasses()
	file := map[string]string{O200KBase: o200kTokens, CL100KBase: cl100kTokens}[name]
	lens, blob, err := readTokens(file)
	require.NoError(t, err)
	e, err := newEncoding(name, lens, blob)
	require.NoError(t, err)
	return e
}

func TestLongPiecesBuildTheSearchOnlyPastBuildAfterBytes(t *testing.T) {
	for _, name := range []string{O200KBase, CL100KBase} {
		t.Run(name, func(t *testing.T) {
			e := freshEncoding(t, name)
			ref, err := Load(name)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(3, 4))
			letters := func(n int) string {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte('a' + r.IntN(26))
				}
				return string(b)
			}
			small := letters(1000) + " " + letters(2000)
			assert.Equal(t, ref.Count(small), e.Count(small), "counts the same before the tables are built")
			assert.Equal(t, ref.Encode(small), e.Encode(small), "encodes the same before the tables are built")
			assert.False(t, e.btBuilt.Load(), "a few KiB of long pieces do not build the tables")
			big := letters(buildAfter)
			assert.Equal(t, ref.Count(big), e.Count(big), "counts the same when it builds them")
			assert.True(t, e.btBuilt.Load(), "more than buildAfter bytes of long pieces build the tables")
		})
	}
}

// BenchmarkFirstCount measures what the first count in a process costs: a
// fresh encoding read from its token file, then a count of 64 KiB of JSON
// that holds a 4 KiB string of lowercase letters (one long piece, as an
// identifier or an encoded blob in a tool's response may be):
//
//	go test ./internal/bpe -run '^$' -bench FirstCount
func BenchmarkFirstCount(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	blob := make([]byte, 4096)
	for i := range blob {
		blob[i] = byte('a' + r.IntN(26))
	}
	var sb strings.Builder
	sb.WriteString(`{"attachment":"` + string(blob) + `","items":[`)
	for i := 0; sb.Len() < 64<<10; i++ {
		fmt.Fprintf(&sb, `{"id":%d,"name":"item %d","price":%d.%02d,"tags":["a","b"]},`, i, r.IntN(1e6), r.IntN(1000), r.IntN(100))
	}
	sb.WriteString(`{}]}`)
	text := sb.String()
	for _, name := range []string{O200KBase, CL100KBase} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				e := freshEncoding(b, name)
				e.Count(text)
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
