package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// countClass is one input class of the benchmarks module's BenchmarkCount.
type countClass struct {
	name, label, what string
	goal              float64 // the speed-up over tiktoken-go to reach (issue 30)
}

var countClasses = []countClass{
	{"prose", "prose", "English prose: Newton's *Opticks*, 512 KiB", 40},
	{"code", "Go code", "Go code: this repository's, 512 KiB", 40},
	{"json", "JSON", "JSON: `go list -json` of this repository, 512 KiB", 40},
	{"chinese", "Chinese", "Chinese: 1 MiB drawn from *The Art of War*'s character pairs", 15},
	{"japanese", "Japanese", "Japanese: 1 MiB drawn from *Rashōmon*'s character pairs", 15},
	{"korean", "Korean", "Korean: 1 MiB drawn from *A Lucky Day*'s character pairs", 15},
	{"random-utf8", "random UTF-8", "random UTF-8 (1- to 4-byte characters), 1 MiB", 15},
	{"random-bytes", "random bytes", "random bytes, 1 MiB", 15},
}

// linearSizes are BenchmarkCountLinear's sizes; the first is the yardstick.
var linearSizes = []string{"16KiB", "64KiB", "256KiB", "1024KiB"}

// linearGoal is the most the time per byte may grow from the first size to
// the last.
const linearGoal = 1.3

// firstUseGoal is the most, in ns, that building an encoding's tables may take.
const firstUseGoal = 50e6

// startupGoal is the most, in ns, that any ctxfit subcommand (`ctxfit
// count` of a tiny file the slowest measured) may take from process start to
// exit on a quiet machine; on a loaded one the table holds the process's
// CPU time to it.
const startupGoal = 25e6

// countOnlyGoal is the most, in MB, that a program importing only budget may
// weigh (TestWeight holds it there too).
const countOnlyGoal = 6.0

// tables returns the Markdown blocks of the docs, by name, drawn from res.
func tables(res results) (map[string]string, error) {
	var errs []error
	median := func(bench, unit string) float64 {
		v, err := res.median(bench, unit)
		errs = append(errs, err)
		return v
	}
	var b strings.Builder
	b.WriteString("| input | ctxfit | tiktoken-go | ctxfit is faster | goal |\n|---|--:|--:|--:|---|\n")
	for _, c := range countClasses {
		name := "BenchmarkCount/" + c.name
		ours, theirs := median(name, "ctxfit-ns/op"), median(name, "tiktoken-go-ns/op")
		// MB/s is over both sides' time: ctxfit's own is that times ns/op over its part.
		mbs := median(name, "MB/s") * median(name, "ns/op") / ours
		ratio := median(name, "x-tiktoken-go")
		fmt.Fprintf(&b, "| %s | %s (%.1f MB/s) | %s | **%s** | at least %s: %s |\n",
			c.what, formatTime(ours), mbs, formatTime(theirs), formatRatio(ratio), formatRatio(c.goal), met(ratio >= c.goal))
	}
	count := b.String()

	b.Reset()
	b.WriteString("| size | ctxfit's time per byte | over 16 KiB's |\n|---|--:|--:|\n")
	first := median("BenchmarkCountLinear", linearSizes[0]+"-ns/B")
	for _, size := range linearSizes {
		perByte := median("BenchmarkCountLinear", size+"-ns/B")
		fmt.Fprintf(&b, "| %s | %.0f ns | %s |\n", strings.TrimSuffix(size, "KiB")+" KiB", perByte, formatRatio(perByte/first))
	}
	growth := median("BenchmarkCountLinear", "x-16KiB")
	fmt.Fprintf(&b, "\nThe median of each run's own ratio, 1 MiB over 16 KiB: **%s** (goal: at most %.1fx: %s).\n",
		formatRatio(growth), linearGoal, met(growth <= linearGoal))
	linear := b.String()

	b.Reset()
	b.WriteString("| splitter | time | allocations | chunks |\n|---|--:|--:|--:|\n")
	ours, theirs := "BenchmarkSplitProse1MB/ctxfit", "BenchmarkSplitProse1MB/langchaingo"
	fmt.Fprintf(&b, "| ctxfit `chunk.Split` (exact bounds) | %s | %.0f | %.0f |\n",
		formatTime(median(ours, "ns/op")), median(ours, "allocs/op"), median(ours, "chunks"))
	fmt.Fprintf(&b, "| langchaingo + tiktoken-go | %s | %.1f million | %.0f |\n",
		formatTime(median(theirs, "ns/op")), median(theirs, "allocs/op")/1e6, median(theirs, "chunks"))
	fmt.Fprintf(&b, "| ratio | **%s faster** | | |\n", formatRatio(median(theirs, "ns/op")/median(ours, "ns/op")))
	split := b.String()

	b.Reset()
	b.WriteString("| step | o200k_base | cl100k_base |\n|---|--:|--:|\n")
	for _, step := range []struct{ label, bench string }{
		{"read the rank table (`BenchmarkNewEncoding`, the first count of any text)", "BenchmarkNewEncoding/"},
		{"build the long-piece tables (`BenchmarkBuildBacktracker`, once 64 KiB of pieces over 48 bytes were merged)", "BenchmarkBuildBacktracker/"},
	} {
		o, c := median(step.bench+"o200k_base", "cpu-ns/op"), median(step.bench+"cl100k_base", "cpu-ns/op")
		fmt.Fprintf(&b, "| %s | %s | %s |\n", step.label, formatTime(o), formatTime(c))
	}
	o, c := median("BenchmarkFirstCount/o200k_base", "cpu-ns/op"), median("BenchmarkFirstCount/cl100k_base", "cpu-ns/op")
	fmt.Fprintf(&b, "| first use: read the rank table, count 64 KiB of JSON with a 4 KiB long piece (`BenchmarkFirstCount`; goal: under %.0f ms) | **%s**: %s | **%s**: %s |\n",
		firstUseGoal/1e6, formatTime(o), met(o < firstUseGoal), formatTime(c), met(c < firstUseGoal))
	firstUse := b.String()

	b.Reset()
	fmt.Fprintf(&b, "Load average during the runs: %.1f (wall times grow with it; CPU times much less).\n\n", median("BenchmarkCountStartup/count/o200k_base", "load-avg"))
	b.WriteString("| program, from process start to exit | wall time | CPU time | goal |\n|---|--:|--:|---|\n")
	ms := func(bench string) float64 { return median(bench, "ms/run") * 1e6 }
	cpu := func(bench string) float64 { return median(bench, "cpu-ms/run") * 1e6 }
	for _, row := range []struct{ label, bench string }{
		{"`ctxfit help` (no tokenizer: what every command pays)", "BenchmarkCountStartup/help"},
		{"`ctxfit version`", "BenchmarkCountStartup/version"},
	} {
		fmt.Fprintf(&b, "| %s | %s | %s | |\n", row.label, formatTime(ms(row.bench)), formatTime(cpu(row.bench)))
	}
	o200k := cpu("BenchmarkCountStartup/count/o200k_base")
	fmt.Fprintf(&b, "| `ctxfit count` of a 6-byte file, o200k_base | %s | **%s** | within %.0f ms: %s |\n",
		formatTime(ms("BenchmarkCountStartup/count/o200k_base")), formatTime(o200k), startupGoal/1e6, met(o200k <= startupGoal))
	fmt.Fprintf(&b, "| `ctxfit count --encoding cl100k_base` of the same file | %s | %s | |\n",
		formatTime(ms("BenchmarkCountStartup/count/cl100k_base")), formatTime(cpu("BenchmarkCountStartup/count/cl100k_base")))
	size := median("BenchmarkCountOnlyStartup", "MB")
	fmt.Fprintf(&b, "| a program that imports only `budget` (`budget/testdata/countonly`, %.1f MB), the same file | %s | %s | at most %.0f MB: %s |\n",
		size, formatTime(ms("BenchmarkCountOnlyStartup")), formatTime(cpu("BenchmarkCountOnlyStartup")), countOnlyGoal, met(size <= countOnlyGoal))
	startup := b.String()

	return map[string]string{"count": count, "linear": linear, "chunk": split, "firstuse": firstUse, "startup": startup}, errors.Join(errs...)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// formatTime writes a duration in ns as 0.38 ms, 12.5 ms, 1.03 s.
func formatTime(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e7:
		return fmt.Sprintf("%.0f ms", ns/1e6)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	}
	return fmt.Sprintf("%.2f ms", ns/1e6)
}

var block = regexp.MustCompile(`(?s)(<!-- benchplot:([a-z]+) -->\n).*?(<!-- /benchplot -->)`)

// rewrite replaces each block of doc, between <!-- benchplot:NAME --> and
// <!-- /benchplot -->, with the table of that name. A block with no table is
// an error.
func rewrite(doc string, tabs map[string]string) (string, error) {
	var errs []error
	out := block.ReplaceAllStringFunc(doc, func(m string) string {
		sub := block.FindStringSubmatch(m)
		t, ok := tabs[sub[2]]
		if !ok {
			errs = append(errs, fmt.Errorf("no table named %q", sub[2]))
			return m
		}
		return sub[1] + t + sub[3]
	})
	return out, errors.Join(errs...)
}
