// Package contbench is the continuation benchmark that the root package
// (in-memory store) and store/redisstore (Redis) run alike, and the data it
// runs on: a JSON list of generated bookings and a text log of any size.
package contbench

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// List returns a JSON list of corpus items of about n bytes.
func List(n int) []byte {
	one, _ := json.Marshal(corpus.Items(1)[0])
	b, _ := json.Marshal(corpus.Items(max(1, n/(len(one)+1))))
	return b
}

// Log returns a text log of about n bytes.
func Log(n int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2026-11-24T08:%02d:%02dZ INFO request %d served in %d ms for /api/v1/bookings?page=%d\n", i/60%60, i%60, i, i%97, i%13)
	}
	return []byte(b.String())
}

// Run times the second page of a list and the second chunk of a log, from
// a 100 KB snapshot and from a 10 MB one, each through a Guard newGuard
// returns, and reports on the 10 MB line its time over the 100 KB line's
// ("x-small"; issue 13's goal is at most 1.5).
func Run(b *testing.B, newGuard func(*testing.B) *ctxfit.Guard) {
	for _, kind := range []struct {
		name        string
		make        func(int) []byte
		contentType string
	}{
		{"list", List, "application/json"},
		{"text", Log, "text/plain"},
	} {
		var small float64
		for _, size := range []struct {
			name  string
			bytes int
		}{{"100KB", 100 << 10}, {"10MB", 10 << 20}} {
			b.Run(kind.name+"/"+size.name, func(b *testing.B) {
				g := newGuard(b)
				body := kind.make(size.bytes)
				fetch := func(context.Context) (ctxfit.Response, error) {
					return ctxfit.Response{Body: body, ContentType: kind.contentType}, nil
				}
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
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				if size.name == "100KB" {
					small = ns
				} else if small > 0 {
					b.ReportMetric(ns/small, "x-small")
				}
			})
		}
	}
}
