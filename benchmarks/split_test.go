package benchmarks

import (
	"strings"
	"sync"
	"testing"
	"time"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/textsplitter"

	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

const (
	proseBytes = 1 << 20 // 1 MiB
	maxTokens  = 2000
)

var prose = sync.OnceValue(func() string { return corpus.Prose(proseBytes) })

// tiktokenGo returns tiktoken-go's o200k_base encoder with ranks from the
// files embedded in tiktoken-go-loader: tiktoken-go downloads them by
// default, and a benchmark must not touch the network.
var tiktokenGo = sync.OnceValue(func() *tiktoken.Tiktoken {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	tk, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		panic(err)
	}
	return tk
})

func tiktokenCount(s string) int { return len(tiktokenGo().Encode(s, nil, nil)) }

// langchaingo returns langchaingo's recursive character splitter (separators
// "\n\n", "\n", " ", "") with tiktoken-go as its length function, the usual
// way to split by tokens with it, and no overlap, as ctxfit. Its length
// function is the only tokenizer it uses, so it does not reach the network
// (its TokenSplitter would call tiktoken.GetEncoding itself).
func langchaingo() textsplitter.RecursiveCharacter {
	return textsplitter.NewRecursiveCharacter(
		textsplitter.WithChunkSize(maxTokens),
		textsplitter.WithChunkOverlap(0),
		textsplitter.WithLenFunc(tiktokenCount),
	)
}

func ctxfitSplit(tb testing.TB, text string) []chunk.Span {
	spans, err := chunk.Split(text, &chunk.Options{MaxTokens: maxTokens, Kind: chunk.KindProse})
	require.NoError(tb, err)
	return spans
}

// TestCtxfitChunksAreExactByTiktokenGo checks ctxfit's chunks of the
// benchmark input against tiktoken-go, an independent tokenizer: every
// chunk is within the limit, its reported count is tiktoken-go's, and the
// chunks are the input.
func TestCtxfitChunksAreExactByTiktokenGo(t *testing.T) {
	text := prose()
	spans := ctxfitSplit(t, text)
	require.Greater(t, len(spans), 100)
	var b strings.Builder
	for i, s := range spans {
		content := text[s.Start:s.End]
		n := tiktokenCount(content)
		assert.LessOrEqual(t, n, maxTokens, "chunk %d", i)
		assert.Equal(t, n, s.Tokens, "chunk %d", i)
		b.WriteString(content)
	}
	assert.Equal(t, text, b.String())
}

// BenchmarkSplitProse1MB splits 1 MiB of prose into chunks of at most 2,000
// o200k_base tokens with ctxfit and with langchaingo + tiktoken-go:
//
//	cd benchmarks && go test -run '^$' -bench SplitProse1MB -benchmem
//
// The "ratio" benchmark runs both in turn in each iteration and reports
// their times and how many times faster ctxfit is.
func BenchmarkSplitProse1MB(b *testing.B) {
	text := prose()
	tiktokenGo()
	ctxfitSplit(b, text) // load ctxfit's ranks before timing, as tiktokenGo() does tiktoken-go's
	ctx := func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		var n int
		for b.Loop() {
			n = len(ctxfitSplit(b, text))
		}
		b.ReportMetric(float64(n), "chunks")
	}
	lc := func(b *testing.B) {
		s := langchaingo()
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		var n int
		for b.Loop() {
			chunks, err := s.SplitText(text)
			if err != nil {
				b.Fatal(err)
			}
			n = len(chunks)
		}
		b.ReportMetric(float64(n), "chunks")
	}
	b.Run("ctxfit", ctx)
	b.Run("langchaingo", lc)
	b.Run("ratio", func(b *testing.B) {
		// Both splitters in turn in each iteration, so that both see the
		// same load on the machine.
		s := langchaingo()
		var ctxNs, lcNs time.Duration
		const ctxRuns = 10
		for b.Loop() {
			t0 := time.Now()
			for range ctxRuns {
				ctxfitSplit(b, text)
			}
			t1 := time.Now()
			if _, err := s.SplitText(text); err != nil {
				b.Fatal(err)
			}
			ctxNs += t1.Sub(t0) / ctxRuns
			lcNs += time.Since(t1)
		}
		b.ReportMetric(float64(ctxNs.Nanoseconds())/float64(b.N), "ctxfit-ns/op")
		b.ReportMetric(float64(lcNs.Nanoseconds())/float64(b.N), "langchaingo-ns/op")
		b.ReportMetric(float64(lcNs)/float64(ctxNs), "x-faster")
	})
}
