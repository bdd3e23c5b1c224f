// Command benchplot draws the benchmark ratios of docs/benchmarks.md as SVG bar charts
// from the output of `go test -bench`, so that the pictures are made from
// measurements and stay true when the benchmarks are run again.
//
//	go run ./scripts/benchplot -o docs docs/bench/*.txt
//
// With -md FILE (repeatable) it also rewrites the tables of FILE between
// <!-- benchplot:NAME --> and <!-- /benchplot --> (count, linear, chunk, firstuse, startup) from the
// same medians, so the figures of docs/benchmarks.md come from the output too.
//
// It reads every file given (or standard input), takes the median of each
// benchmark's runs (-count), and writes:
//
//	bench-speedup.svg     ctxfit against tiktoken-go (exact counting, BenchmarkCount) and
//	                      langchaingo (chunking, BenchmarkSplitProse1MB): how many times faster
//	bench-middleware.svg  httpfit wrapped against bare (BenchmarkPassThroughServed,
//	                      BenchmarkPassThroughOverhead) and shaping against a re-encoding handler
//	                      (BenchmarkShape): how many times the time
//
// A benchmark a chart needs that is missing from the input is an error:
// scripts/benchplots.sh runs the benchmarks the charts need.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	out := flag.String("o", "docs", "directory to write the SVG files to")
	var docs []string
	flag.Func("md", "a Markdown file whose benchplot blocks to rewrite with the tables (repeatable)", func(s string) error {
		docs = append(docs, s)
		return nil
	})
	flag.Parse()
	results := results{}
	var inputs []string
	if flag.NArg() == 0 {
		if err := results.read(os.Stdin); err != nil {
			fail(err)
		}
	}
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err != nil {
			fail(err)
		}
		err = results.read(f)
		f.Close()
		if err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
		inputs = append(inputs, filepath.ToSlash(name))
	}
	files, err := render(results, inputs)
	if err != nil {
		fail(err)
	}
	for _, name := range slices.Sorted(mapKeys(files)) {
		if err := os.WriteFile(filepath.Join(*out, name), files[name], 0o644); err != nil {
			fail(err)
		}
	}
	if len(docs) == 0 {
		return
	}
	tabs, err := tables(results)
	if err != nil {
		fail(err)
	}
	for _, name := range docs {
		doc, err := os.ReadFile(name)
		if err != nil {
			fail(err)
		}
		text, err := rewrite(string(doc), tabs)
		if err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchplot:", err)
	os.Exit(1)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// results holds, by benchmark name (without the -GOMAXPROCS suffix) and
// unit, the values of every run.
type results map[string]map[string][]float64

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// read adds the benchmark lines of r.
func (res results) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		fields := strings.Fields(m[2])
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return fmt.Errorf("%q: %w", sc.Text(), err)
			}
			if res[m[1]] == nil {
				res[m[1]] = map[string][]float64{}
			}
			res[m[1]][fields[i+1]] = append(res[m[1]][fields[i+1]], v)
		}
	}
	return sc.Err()
}

// median returns the median of a benchmark's values in unit.
func (res results) median(bench, unit string) (float64, error) {
	vs := slices.Clone(res[bench][unit])
	if len(vs) == 0 {
		return 0, fmt.Errorf("no %s of %s in the input", unit, bench)
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], nil
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, nil
}

// ref names one measurement: a benchmark and a unit.
type ref struct{ bench, unit string }

// bar is one ratio, num / den.
type bar struct {
	label    string
	num, den ref
	goal     float64 // a tick at the ratio to reach (at least for a speed-up); 0: none
}

// value returns the bar's ratio: the median of num over the median of den,
// or num's median when den is zero (a ratio the benchmark reports itself,
// from both sides measured in each run).
func (b bar) value(res results) (float64, error) {
	num, err := res.median(b.num.bench, b.num.unit)
	if b.den == (ref{}) || err != nil {
		return num, err
	}
	den, err := res.median(b.den.bench, b.den.unit)
	return num / den, err
}

// chart is one SVG file.
type chart struct {
	file, title, axis string
	bars              []bar
	goal              float64 // a dashed line at this ratio; 0: none
}

func charts() []chart {
	speedup := chart{file: "bench-speedup.svg",
		title: "ctxfit against other Go libraries: how many times faster (median of the runs)",
		axis:  "other library's time / ctxfit's time; a grey tick marks each goal"}
	for _, c := range countClasses {
		speedup.bars = append(speedup.bars, bar{"count " + c.label + " vs tiktoken-go",
			ref{"BenchmarkCount/" + c.name, "x-tiktoken-go"}, ref{}, c.goal})
	}
	speedup.bars = append(speedup.bars, bar{"chunk 1 MB prose vs langchaingo",
		ref{"BenchmarkSplitProse1MB/langchaingo", "ns/op"}, ref{"BenchmarkSplitProse1MB/ctxfit", "ns/op"}, 0})

	middleware := chart{file: "bench-middleware.svg",
		title: "httpfit: the time of a request with ctxfit against without (median of the runs)",
		axis:  "wrapped time / bare or baseline time", goal: 1,
		bars: []bar{
			{"pass-through 2 KB, served over HTTP", ref{"BenchmarkPassThroughServed", "wrapped-ns/req"}, ref{"BenchmarkPassThroughServed", "bare-ns/req"}, 1.05},
			{"pass-through 2 KB, ServeHTTP in process", ref{"BenchmarkPassThroughOverhead", "wrapped-ns/req"}, ref{"BenchmarkPassThroughOverhead", "bare-ns/req"}, 0},
			{"shape 100 KB list vs unmarshal+marshal", ref{"BenchmarkShape/100KB/wrapped", "ns/op"}, ref{"BenchmarkShape/100KB/baseline-unmarshal-marshal", "ns/op"}, 3},
			{"shape 1 MB list vs unmarshal+marshal", ref{"BenchmarkShape/1024KB/wrapped", "ns/op"}, ref{"BenchmarkShape/1024KB/baseline-unmarshal-marshal", "ns/op"}, 3},
		}}
	return []chart{speedup, middleware}
}

// render returns the SVG files, by name; inputs name the files read, for
// the charts' captions.
func render(res results, inputs []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	var errs []error
	for _, c := range charts() {
		values := make([]float64, len(c.bars))
		for i, b := range c.bars {
			v, err := b.value(res)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c.file, err))
				continue
			}
			values[i] = v
		}
		out[c.file] = svg(c, values, inputs)
	}
	return out, errors.Join(errs...)
}

// Layout of a chart, in pixels.
const (
	width    = 840
	labelW   = 300
	barH     = 22
	gap      = 8
	top      = 48
	rightPad = 140
)

// svg draws c's bars with their values, longest bar = widest.
func svg(c chart, values []float64, inputs []string) []byte {
	maxV := c.goal
	for i, v := range values {
		maxV = max(maxV, v, c.bars[i].goal)
	}
	plotW := float64(width - labelW - rightPad)
	scale := plotW / maxV
	height := top + len(values)*(barH+gap) + 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="13">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="22" font-size="15" font-weight="600" fill="#1f2328">%s</text>`+"\n", html.EscapeString(c.title))
	fmt.Fprintf(&b, `<text x="10" y="38" font-size="11" fill="#59636e">%s</text>`+"\n", html.EscapeString(c.axis))
	for i, v := range values {
		y := top + i*(barH+gap)
		w := v * scale
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#1f2328">%s</text>`+"\n", labelW-8, y+barH/2+4, html.EscapeString(c.bars[i].label))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" rx="3" fill="#0969da"/>`+"\n", labelW, y, w, barH)
		text := formatRatio(v)
		if g := c.bars[i].goal; g > 0 {
			gx := float64(labelW) + g*scale
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#59636e" stroke-width="2"/>`+"\n", gx, y-2, gx, y+barH+2)
			text += " (goal " + formatRatio(g) + ")"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#1f2328">%s</text>`+"\n", max(float64(labelW)+w, float64(labelW)+c.bars[i].goal*scale)+6, y+barH/2+4, text)
	}
	if c.goal > 0 {
		x := float64(labelW) + c.goal*scale
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#59636e" stroke-dasharray="4 3"/>`+"\n", x, top-4, x, top+len(values)*(barH+gap))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#59636e" text-anchor="middle">1x: no cost</text>`+"\n", x, top+len(values)*(barH+gap)+12)
	}
	fmt.Fprintf(&b, `<text x="10" y="%d" font-size="11" fill="#59636e">drawn by scripts/benchplot from %s</text>`+"\n", height-8, html.EscapeString(strings.Join(inputs, ", ")))
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// formatRatio writes 37x, 2.4x, 1.04x.
func formatRatio(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0fx", v)
	case v >= 2:
		return fmt.Sprintf("%.1fx", v)
	}
	return fmt.Sprintf("%.2fx", v)
}
