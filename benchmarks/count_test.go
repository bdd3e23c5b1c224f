package benchmarks

import (
	"flag"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
)

var fullCorpora = flag.Bool("full", false, "TestCountIsExactOnEveryCorpus checks the whole of every corpus (about 25 s), not its first 256 KiB")

func TestCountIsExactOnEveryCorpus(t *testing.T) {
	c, err := budget.Exact(budget.O200KBase)
	require.NoError(t, err)
	for _, class := range countClasses {
		t.Run(class+" counts as many tokens as tiktoken-go encodes", func(t *testing.T) {
			text := countInput(class)
			switch { // a cut may split a character: both sides see the same bytes
			case *fullCorpora:
			case testing.Short():
				text = text[:64<<10]
			default:
				text = text[:256<<10]
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
// every input class of countInput. Each iteration counts the text with both,
// one after the other, and takes the CPU time of each (the process's user and
// system time: on two cores shared with other work, wall time measures the
// neighbours), so the two sides of a line ran under the same load: the line
// reports ctxfit-ns/op, tiktoken-go-ns/op and their ratio, x-tiktoken-go (how
// many times faster ctxfit is). tiktoken-go's time includes collecting its
// garbage.
//
//	GOWORK=off go test -run '^$' -bench '^BenchmarkCount$' -benchtime=3x -count=3
func BenchmarkCount(b *testing.B) {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		b.Fatal(err)
	}
	tk := tiktokenGo()
	for _, class := range countClasses {
		text := countInput(class)
		c.Count(text) // builds the tables once, before timing
		b.Run(class, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			var ours, theirs time.Duration
			for b.Loop() {
				start := cpuTime()
				_ = len(tk.EncodeOrdinary(text))
				runtime.GC() // leave tiktoken-go's garbage out of ctxfit's time
				mid := cpuTime()
				c.Count(text)
				ours += cpuTime() - mid
				theirs += mid - start
			}
			n := float64(b.N)
			b.ReportMetric(float64(ours.Nanoseconds())/n, "ctxfit-ns/op")
			b.ReportMetric(float64(theirs.Nanoseconds())/n, "tiktoken-go-ns/op")
			b.ReportMetric(float64(theirs)/float64(ours), "x-tiktoken-go")
		})
	}
}

// BenchmarkCountLinear counts random lowercase letters, one piece as long as
// the text, at 16 KiB, 64 KiB, 256 KiB and 1 MiB. Each iteration counts 1 MiB
// at every size (64 texts of 16 KiB, ..., one of 1 MiB), one size after the
// other, so every size runs under the same load; the line reports each size's
// CPU time per byte (16KiB-ns/B, ...) and x-16KiB, 1 MiB's time per byte over 16
// KiB's (1 is linear; the goal is at most 1.3).
//
//	GOWORK=off go test -run '^$' -bench '^BenchmarkCountLinear$' -benchtime=3x -count=3
func BenchmarkCountLinear(b *testing.B) {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		b.Fatal(err)
	}
	const total = 1 << 20
	letters := randomLetters(total, 3)
	sizes := []int{16 << 10, 64 << 10, 256 << 10, 1 << 20}
	c.Count(letters) // builds the tables once, before timing
	spent := make([]time.Duration, len(sizes))
	b.SetBytes(int64(total * len(sizes)))
	for b.Loop() {
		for i, n := range sizes {
			start := cpuTime()
			for at := 0; at < total; at += n {
				c.Count(letters[at : at+n])
			}
			spent[i] += cpuTime() - start
		}
	}
	for i, n := range sizes {
		b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N)/total, fmt.Sprintf("%dKiB-ns/B", n>>10))
	}
	b.ReportMetric(float64(spent[len(sizes)-1])/float64(spent[0]), "x-16KiB")
}
