package summary_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxfit/ctxfit/summary"
)

// The size benchmarks measure the time per member of inputs of 1,000,
// 10,000 and 100,000 members in three shapes, and report it as ns/member:
// the goal is a time per member that stays within 2x from the smallest size
// to the largest (linear or n log n work). Run them with
//
//	go test -run '^$' -bench 'Sizes' -benchtime 3x ./summary/
var benchSizes = []int{1_000, 10_000, 100_000}

// wideObject returns an object of n members: an id, a name, a status, then
// scalars of every kind (short and long text, numbers, booleans, nulls,
// dates), as a wide configuration or environment listing is.
func wideObject(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"id":"W1","name":"wide object","status":"active"`)
	for i := 3; i < n; i++ {
		fmt.Fprintf(&b, `,"field_%06d":`, i)
		switch i % 6 {
		case 0:
			fmt.Fprintf(&b, `"value %d of the field"`, i)
		case 1:
			b.WriteString(strconv.Itoa(i * 7))
		case 2:
			b.WriteString(`true`)
		case 3:
			fmt.Fprintf(&b, `"2025-11-%02dT08:30:00Z"`, i%28+1)
		case 4:
			b.WriteString(`null`)
		default:
			fmt.Fprintf(&b, `"%s"`, strings.Repeat("a longer text value with words ", 3+i%5))
		}
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// elementsObject returns an object of a few fields beside an array of n-3
// small objects.
func elementsObject(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"id":"E1","name":"many elements","items":[`)
	for i := range n - 3 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d","price":%d.50}`, i, i, i%1000)
	}
	b.WriteString(`],"total":1}`)
	return []byte(b.String())
}

// maxBenchDepth keeps deepObject within the nesting encoding/json accepts
// (10,000 arrays and objects).
const maxBenchDepth = 9_990

// deepObject returns n members in objects nested n/10 deep (at most
// maxBenchDepth): each level holds nine scalars and the next level.
func deepObject(n int) []byte {
	levels := min(n/10, maxBenchDepth)
	var b strings.Builder
	for l := range levels {
		fmt.Fprintf(&b, `{"id":"L%d","name":"level %d","a":1,"b":2.5,"c":true,"d":null,"e":"text","f":"2025-11-01","g":[1,2]`, l, l)
		if l < levels-1 {
			b.WriteString(`,"next":`)
		}
	}
	b.WriteString(strings.Repeat("}", levels))
	return []byte(b.String())
}

// deepPath returns the path of the id of the deepest level of deepObject(n).
func deepPath(n int) string {
	levels := min(n/10, maxBenchDepth)
	return strings.Repeat("next.", levels-1) + "id"
}

var benchShapes = []struct {
	name    string
	make    func(n int) []byte
	members func(n int) int // the members and elements of make(n)
}{
	{"wide", wideObject, func(n int) int { return n }},
	{"elements", elementsObject, func(n int) int { return n }},
	{"deep", deepObject, func(n int) int { return 10 * min(n/10, maxBenchDepth) }},
}

// warmCounter builds the exact counter's lazily built tables (the first
// long piece of text builds them, once per process), so that no benchmark
// measures it.
func warmCounter(b *testing.B) {
	exactCounter(b).Count(strings.Repeat("}", 1000))
}

// eachSize runs one sub-benchmark per shape and size, named shape/size,
// timing the operation that op returns for the input, and reports its time
// per member.
func eachSize(b *testing.B, op func(shape string, n int, data []byte) func() error) {
	warmCounter(b)
	for _, sh := range benchShapes {
		for _, n := range benchSizes {
			data := sh.make(n)
			run := op(sh.name, n, data)
			b.Run(fmt.Sprintf("%s/%d", sh.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sh.members(n)), "ns/member")
			})
		}
	}
}

// BenchmarkSizesSummarize summarizes each shape with automatic selection
// and the default budget.
func BenchmarkSizesSummarize(b *testing.B) {
	s := newSummarizer(b, nil)
	eachSize(b, func(_ string, _ int, data []byte) func() error {
		return func() error {
			_, err := s.Summarize(data, summary.Shape{Endpoint: "/x/{id}"})
			return err
		}
	})
}

// BenchmarkSizesSummarizeFields summarizes each shape with configured
// fields (top-level ones, and an id three levels down), and the elements
// with a TopN rule that keeps the three most expensive.
func BenchmarkSizesSummarizeFields(b *testing.B) {
	s := newSummarizer(b, nil)
	eachSize(b, func(shape string, n int, data []byte) func() error {
		sh := summary.Shape{Endpoint: "/x/{id}", Fields: []string{"id", "name"}}
		switch shape {
		case "elements":
			sh.Fields = append(sh.Fields, "items")
			sh.TopN = []summary.TopN{{Path: "items", Score: "price", N: 3}}
		case "deep":
			sh.Fields = append(sh.Fields, "next.next.next.id")
		}
		return func() error {
			_, err := s.Summarize(data, sh)
			return err
		}
	})
}

// BenchmarkSizesProject projects each shape on two top-level fields and
// a field through the array or the deepest id.
func BenchmarkSizesProject(b *testing.B) {
	eachSize(b, func(shape string, n int, data []byte) func() error {
		paths := []string{"id", "name"}
		switch shape {
		case "elements":
			paths = append(paths, "items.id")
		case "deep":
			paths = append(paths, deepPath(n))
		}
		return func() error {
			_, _, err := summary.Project(data, paths)
			return err
		}
	})
}

// BenchmarkSizesServeDetails serves a drill-down of a top-level field and
// a path through the array, or the deepest id.
func BenchmarkSizesServeDetails(b *testing.B) {
	eachSize(b, func(shape string, n int, data []byte) func() error {
		fields := "id,name"
		switch shape {
		case "elements":
			fields = "id,items.price"
		case "deep":
			fields = "id," + deepPath(n)
		}
		return func() error {
			_, err := summary.ServeDetails(data, fields)
			return err
		}
	})
}
