package ctxfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/corpus"
)

// The engine's benchmarks compare, in one run, what shaping costs with a
// yardstick measured just before it, and print the ratio as a metric:
//
//	go test -run '^$' -bench 'FirstPage|Continuation' -benchtime 20x .
//
// BenchmarkFirstPage: the first page of a list, against json.Unmarshal
// into []any and json.Marshal of the same list ("x-unmarshal-marshal"; the
// goal is at most 0.5). BenchmarkContinuation: a page from the middle of a
// large snapshot, against the same page from a small one ("x-small"; the
// goal is at most 1.5), for lists and for text.

var benchSizes = []struct {
	name  string
	bytes int
}{{"100KB", 100 << 10}, {"1MB", 1 << 20}, {"10MB", 10 << 20}}

// listOf returns a JSON list of corpus items of about n bytes.
func listOf(n int) []byte {
	one, _ := json.Marshal(corpus.Items(1)[0])
	items := corpus.Items(max(1, n/(len(one)+1)))
	b, _ := json.Marshal(items)
	return b
}

// logOf returns a text log of about n bytes.
func logOf(n int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2026-11-24T08:%02d:%02dZ INFO request %d served in %d ms for /api/v1/bookings?page=%d\n", i/60%60, i%60, i, i%97, i%13)
	}
	return []byte(b.String())
}

// benchGuard returns a Guard whose limits do not interfere with a
// benchmark: in store mode, with a store large enough for a 10 MB snapshot.
func benchGuard(b *testing.B) *ctxfit.Guard {
	b.Helper()
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret, StoreMaxBytes: 1 << 30,
		ShapeTimeout: ctxfit.Duration(time.Minute), AdmissionWait: ctxfit.Duration(time.Minute)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = g.Close() })
	return g
}

func nsPerOp(b *testing.B) float64 { return float64(b.Elapsed().Nanoseconds()) / float64(b.N) }

func BenchmarkFirstPage(b *testing.B) {
	for _, size := range benchSizes {
		body := listOf(size.bytes)
		var yardstick float64
		b.Run(size.name+"/unmarshal-marshal", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var v []any
				if err := json.Unmarshal(body, &v); err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(v); err != nil {
					b.Fatal(err)
				}
			}
			yardstick = nsPerOp(b)
		})
		b.Run(size.name+"/ctxfit", func(b *testing.B) {
			g := benchGuard(b)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "list", Path: "/list"}, serve(body, "application/json"))
				if err != nil || !res.Shaped {
					b.Fatal(err, res.Strategy)
				}
			}
			if yardstick > 0 {
				b.ReportMetric(nsPerOp(b)/yardstick, "x-unmarshal-marshal")
			}
		})
	}
}

func BenchmarkContinuation(b *testing.B) {
	for _, kind := range []struct {
		name        string
		make        func(int) []byte
		contentType string
	}{
		{"list", listOf, "application/json"},
		{"text", logOf, "text/plain"},
	} {
		var small float64
		for _, size := range []struct {
			name  string
			bytes int
		}{{"100KB", 100 << 10}, {"10MB", 10 << 20}} {
			b.Run(kind.name+"/"+size.name, func(b *testing.B) {
				g := benchGuard(b)
				body := kind.make(size.bytes)
				fetch := serve(body, kind.contentType)
				req := ctxfit.Request{Endpoint: "data", Path: "/data"}
				res, err := g.Handle(context.Background(), req, fetch)
				if err != nil || res.Next == "" {
					b.Fatal(err, res.Strategy)
				}
				req.Cursor = res.Next // the second page
				runtime.GC()          // not the garbage of making a 10 MB body
				b.ReportAllocs()
				for b.Loop() {
					if res, err := g.Handle(context.Background(), req, fetch); err != nil || len(res.Body) == 0 {
						b.Fatal(err)
					}
				}
				if size.name == "100KB" {
					small = nsPerOp(b)
				} else if small > 0 {
					b.ReportMetric(nsPerOp(b)/small, "x-small")
				}
			})
		}
	}
}
