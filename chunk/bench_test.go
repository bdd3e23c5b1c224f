package chunk_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

var benchSizes = []int{10 << 10, 100 << 10, 1 << 20}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMB", n>>20)
	}
	return fmt.Sprintf("%dKB", n>>10)
}

// logText returns about n bytes of log lines, some with stack traces.
func logText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2026-01-02T15:04:%02dZ INFO request %d served in %d ms\n", i%60, i, i%97)
		if i%10 == 0 {
			b.WriteString("2026-01-02T15:04:05Z ERROR request failed\n\tat com.example.Server.handle(Server.java:42)\n\tat com.example.Main.main(Main.java:7)\nCaused by: java.io.IOException: broken pipe\n")
		}
	}
	return b.String()
}

// BenchmarkSplit measures splitting whole texts of several kinds and sizes
// into chunks of the default 2,000 tokens. The throughput is that of the
// input bytes.
//
//	go test ./chunk -run '^$' -bench Split -benchmem
func BenchmarkSplit(b *testing.B) {
	exactCounter(b) // load the ranks before timing
	kinds := []struct {
		name string
		kind chunk.Kind
		gen  func(int) string
	}{
		{"prose", chunk.KindProse, corpus.Prose},
		{"code", chunk.KindCode, corpus.Code},
		{"json", chunk.KindCode, corpus.JSON}, // indented JSON: blank-line-free blocks of lines
		{"log", chunk.KindLog, logText},
	}
	for _, k := range kinds {
		for _, n := range benchSizes {
			text := k.gen(n)
			opts := &chunk.Options{Kind: k.kind}
			b.Run(k.name+"/"+sizeName(n), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				var spans []chunk.Span
				for b.Loop() {
					var err error
					if spans, err = chunk.Split(text, opts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(spans)), "chunks")
			})
		}
	}
}

// BenchmarkChunkNext measures one continuation request: a cursor to the
// middle of a text is decoded and checked, and the one chunk it leads to is
// cut and its cursor issued.
func BenchmarkChunkNext(b *testing.B) {
	c := newChunker(b, nil, nil)
	for _, n := range benchSizes {
		text := corpus.Prose(n)
		chunks := follow(b, c, text, docBinding)
		cur := ""
		if len(chunks) > 1 {
			cur = chunks[len(chunks)/2-1].NextCursor
		}
		b.Run(sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Chunk(text, cur, docBinding); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLines measures taking lines 100 to 200 of a text.
func BenchmarkLines(b *testing.B) {
	for _, n := range benchSizes {
		text := corpus.Prose(n)
		b.Run(sizeName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := chunk.Lines(text, 10, 20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
