package budget_test

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

var (
	tkOnce sync.Once
	tks    = map[string]*tiktoken.Tiktoken{}
)

// tiktokenGo returns tiktoken-go's encoder for name, with ranks from the
// embedded files (tiktoken-go downloads them by default).
func tiktokenGo(tb testing.TB, name string) *tiktoken.Tiktoken {
	tb.Helper()
	tkOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		for _, n := range []string{budget.O200KBase, budget.CL100KBase} {
			tk, err := tiktoken.GetEncoding(n)
			if err != nil {
				panic(err)
			}
			tks[n] = tk
		}
	})
	return tks[name]
}

var inputs = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"json":  corpus.JSON(100 << 10),
		"prose": corpus.Prose(100 << 10),
		"code":  corpus.Code(100 << 10),
	}
})

// BenchmarkCount compares the exact counter with tiktoken-go on ~100 KB of
// JSON, prose and code, for both encodings, in one run. Each ctxfit line
// reports x-tiktoken-go: how many times faster than tiktoken-go's line just
// before it.
//
//	go test ./budget -run '^$' -bench '^BenchmarkCount$' -benchmem
func BenchmarkCount(b *testing.B) {
	for _, enc := range []string{budget.O200KBase, budget.CL100KBase} {
		for _, kind := range []string{"json", "prose", "code"} {
			text := inputs()[kind]
			var yardstick float64 // tiktoken-go's ns per count in this run
			b.Run(enc+"/"+kind+"/tiktoken-go", func(b *testing.B) {
				tk := tiktokenGo(b, enc)
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					_ = len(tk.EncodeOrdinary(text))
				}
				yardstick = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			})
			b.Run(enc+"/"+kind+"/ctxfit", func(b *testing.B) {
				c, err := budget.Exact(enc)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC() // leave tiktoken-go's garbage out of ctxfit's time
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					c.Count(text)
				}
				if yardstick > 0 {
					b.ReportMetric(yardstick/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "x-tiktoken-go")
				}
			})
		}
	}
}

// BenchmarkCountAdversarial measures one 64 KB piece of a single character
// class (the input that makes tiktoken-go quadratic) beside ordinary prose of
// the same size. Each line after prose reports x-prose: its time per byte
// over prose's in the same run. Random letters, the costliest, also run at 16
// KB and 256 KB: the same time per byte at every size is what linear means.
//
//	go test ./budget -run '^$' -bench CountAdversarial -benchmem
func BenchmarkCountAdversarial(b *testing.B) {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 256<<10)
	for i := range random {
		random[i] = 'a' + byte(r.IntN(26))
	}
	cases := []struct{ name, text string }{
		{"prose-64KB", corpus.Prose(64 << 10)[:64<<10]},
		{"one-word-64KB", strings.Repeat("a", 64<<10)},
		{"one-punct-64KB", strings.Repeat("=", 64<<10)},
		{"one-space-64KB", strings.Repeat(" ", 64<<10) + "x"},
		{"mixed-letter-64KB", strings.Repeat("abcdefghij", 64<<10/10)},
		{"random-letter-16KB", string(random[:16<<10])},
		{"random-letter-64KB", string(random[:64<<10])},
		{"random-letter-256KB", string(random)},
	}
	var prose float64 // prose's ns per byte in this run
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			c.Count(bc.text) // builds the long-piece tables once, before timing
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				c.Count(bc.text)
			}
			perByte := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(bc.text))
			if prose == 0 {
				prose = perByte
			} else {
				b.ReportMetric(perByte/prose, "x-prose")
			}
		})
	}
}

func BenchmarkEstimator(b *testing.B) {
	text := inputs()["json"]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		budget.Estimator{}.Count(text)
	}
}
