package benchmarks

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
)

func TestCountIsExactOnEveryCorpus(t *testing.T) {
	c, err := budget.Exact(budget.O200KBase)
	require.NoError(t, err)
	for _, class := range countClasses {
		t.Run(class+" counts as many tokens as tiktoken-go encodes", func(t *testing.T) {
			text := countInput(class)
			if testing.Short() {
				text = text[:64<<10] // may cut a character: both sides see the same bytes
			}
			assert.Equal(t, len(tiktokenGo().EncodeOrdinary(text)), c.Count(text))
		})
	}
	t.Run("the generated classes are as large as the docs say", func(t *testing.T) {
		for _, class := range countClasses[3:] {
			assert.Greater(t, len(countInput(class)), 1<<20-4, class)
		}
	})
}

// BenchmarkCount compares the exact counter (o200k_base) with tiktoken-go on
// every input class of countInput, in one run. Each ctxfit line reports
// x-tiktoken-go: how many times faster than the tiktoken-go line just before
// it, so the ratio holds two sides measured under the same load.
//
//	GOWORK=off go test -run '^$' -bench '^BenchmarkCount$' -benchtime=5x -count=3
func BenchmarkCount(b *testing.B) {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		b.Fatal(err)
	}
	for _, class := range countClasses {
		text := countInput(class)
		c.Count(text)         // builds the tables once, before timing (BenchmarkCountFirstUse times that)
		var yardstick float64 // tiktoken-go's ns per count in this run
		b.Run(class+"/tiktoken-go", func(b *testing.B) {
			tk := tiktokenGo()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				_ = len(tk.EncodeOrdinary(text))
			}
			yardstick = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(class+"/ctxfit", func(b *testing.B) {
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

// BenchmarkCountLinear counts random lowercase letters, one piece as long as
// the text, from 16 KiB to 1 MiB. Each line after the first reports
// x-16KiB: its time per byte over the 16 KiB line's in the same run (1 is
// linear; the goal is at most 1.3).
//
//	GOWORK=off go test -run '^$' -bench '^BenchmarkCountLinear$' -benchtime=5x -count=3
func BenchmarkCountLinear(b *testing.B) {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		b.Fatal(err)
	}
	letters := randomLetters(1<<20, 3)
	var first float64
	for _, n := range []int{16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		text := letters[:n]
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			c.Count(text)
			b.SetBytes(int64(n))
			for b.Loop() {
				c.Count(text)
			}
			perByte := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(n)
			if first == 0 {
				first = perByte
			} else {
				b.ReportMetric(perByte/first, "x-16KiB")
			}
		})
	}
}
