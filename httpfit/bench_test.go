package httpfit_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// listOf returns a JSON array of generated records of about n bytes.
func listOf(n int) []byte {
	sample, _ := json.Marshal(corpus.Items(100))
	b, err := json.Marshal(corpus.Items(max(1, n*100/len(sample))))
	if err != nil {
		panic(err)
	}
	return b
}

// recorder is a ResponseWriter that discards the body, so that the
// benchmarks measure the handler and the middleware, not a growing buffer.
type recorder struct {
	h      http.Header
	status int
	n      int
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) WriteHeader(code int)        { r.status = code }
func (r *recorder) Write(p []byte) (int, error) { r.n += len(p); return len(p), nil }
func (r *recorder) reset()                      { clear(r.h); r.status, r.n = 0, 0 }

func benchGuard(b *testing.B) *ctxfit.Guard {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = g.Close() })
	return g
}

// jsonHandler encodes items for every request, as an API handler does.
func jsonHandler(items []corpus.Item) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := json.Marshal(items)
		if err != nil {
			panic(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

// staticHandler writes a body encoded once.
func staticHandler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

func serveN(b *testing.B, h http.Handler, size int) {
	req := httptest.NewRequest("GET", "/api/v1/bookings?status=confirmed", nil)
	w := &recorder{h: make(http.Header)}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, req)
	}
	if w.n == 0 || (w.status != 0 && w.status != http.StatusOK) {
		b.Fatalf("status %d, %d bytes", w.status, w.n)
	}
}

// BenchmarkPassThrough compares a handler of a 2 KB JSON response under the
// threshold, bare and wrapped, in separate benchmarks (for their
// allocations; BenchmarkPassThroughOverhead measures the ratio). "encoded"
// handlers marshal the response for each request; "static" ones write
// bytes encoded once, which shows the middleware's cost alone.
func BenchmarkPassThrough(b *testing.B) {
	body := listOf(2 << 10)
	items := itemsOf(b, body)
	mw := httpfit.Middleware(benchGuard(b), nil)
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"encoded", jsonHandler(items)},
		{"static", staticHandler(body)},
	} {
		b.Run(c.name+"/bare", func(b *testing.B) { serveN(b, c.h, len(body)) })
		b.Run(c.name+"/wrapped", func(b *testing.B) { serveN(b, mw(c.h), len(body)) })
	}
}

// BenchmarkPassThroughOverhead is the figure the README reports for
// pass-through in process: it serves the 2 KB response of the "encoded"
// handler bare and wrapped in alternating blocks of the same loop (see
// interleave).
func BenchmarkPassThroughOverhead(b *testing.B) {
	body := listOf(2 << 10)
	bare := jsonHandler(itemsOf(b, body))
	wrapped := httpfit.Middleware(benchGuard(b), nil)(bare)
	req := httptest.NewRequest("GET", "/api/v1/bookings?status=confirmed", nil)
	w := &recorder{h: make(http.Header)}
	serve := func(h http.Handler) func() {
		return func() {
			w.reset()
			h.ServeHTTP(w, req)
		}
	}
	interleave(b, 32, len(body), serve(bare), serve(wrapped))
	if w.n != len(body) {
		b.Fatalf("%d bytes, want %d", w.n, len(body))
	}
}

// BenchmarkPassThroughServed is BenchmarkPassThroughOverhead as a client
// sees it: the same two handlers behind one net/http server on a loopback
// listener, one keep-alive connection, each body read to the end.
func BenchmarkPassThroughServed(b *testing.B) {
	body := listOf(2 << 10)
	bare := jsonHandler(itemsOf(b, body))
	mux := http.NewServeMux()
	mux.Handle("GET /bare/bookings", bare)
	mux.Handle("GET /wrapped/bookings", httpfit.Middleware(benchGuard(b), nil)(bare))
	srv := httptest.NewServer(mux) // 127.0.0.1
	b.Cleanup(srv.Close)
	get := func(url string) func() {
		return func() {
			resp, err := srv.Client().Get(url)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if err != nil || n != int64(len(body)) || resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
			}
		}
	}
	bareGet := get(srv.URL + "/bare/bookings?status=confirmed")
	bareGet() // open the connection
	interleave(b, 1, len(body), bareGet, get(srv.URL+"/wrapped/bookings?status=confirmed"))
}

// interleave runs bare and wrapped in alternating blocks of n calls, so that
// both see the same machine (frequency, neighbours, garbage collection) and
// their ratio is steadier than that of two benchmarks run one after the
// other on a shared machine. It reports the time per call of each and the
// wrapped one's extra time in percent of the bare one ("overhead-%").
func interleave(b *testing.B, n, size int, bare, wrapped func()) {
	var bareTime, wrappedTime time.Duration
	block := func(f func()) time.Duration {
		start := time.Now()
		for range n {
			f()
		}
		return time.Since(start)
	}
	b.ReportAllocs()
	b.SetBytes(int64(2 * n * size))
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 { // alternate which goes first
			bareTime += block(bare)
			wrappedTime += block(wrapped)
		} else {
			wrappedTime += block(wrapped)
			bareTime += block(bare)
		}
	}
	calls := float64(b.N * n)
	b.ReportMetric(float64(bareTime.Nanoseconds())/calls, "bare-ns/req")
	b.ReportMetric(float64(wrappedTime.Nanoseconds())/calls, "wrapped-ns/req")
	b.ReportMetric(100*float64(wrappedTime-bareTime)/float64(bareTime), "overhead-%")
}

// itemsOf decodes a body of listOf.
func itemsOf(b *testing.B, body []byte) []corpus.Item {
	var items []corpus.Item
	if err := json.Unmarshal(body, &items); err != nil {
		b.Fatal(err)
	}
	return items
}

// BenchmarkShape compares shaping a JSON list (the first page, in store
// mode) with what a handler that re-encodes the same payload costs:
// json.Unmarshal into []corpus.Item plus json.Marshal.
func BenchmarkShape(b *testing.B) {
	mw := httpfit.Middleware(benchGuard(b), nil)
	for _, size := range []int{100 << 10, 1 << 20} {
		body := listOf(size)
		name := fmt.Sprintf("%dKB", size>>10)
		b.Run(name+"/bare", func(b *testing.B) { serveN(b, staticHandler(body), len(body)) })
		b.Run(name+"/wrapped", func(b *testing.B) { serveN(b, mw(staticHandler(body)), len(body)) })
		b.Run(name+"/baseline-unmarshal-marshal", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var items []corpus.Item
				if err := json.Unmarshal(body, &items); err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(items); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkShapeWithUI measures what a page of UI costs a shaped response
// (the first page of a 100 KB list, in store mode): the token of the
// original it asks for and the call it records, against the same guard
// without a page. The token is needed (ReadResource reads an original
// only through one, and the snapshot it names is the one the next cursor
// already kept); it costs one cursor encoding (cursor's BenchmarkEncode,
// some microseconds) beside milliseconds of shaping, which a run of this
// benchmark does not tell apart from noise. The bytes the page adds are
// the copy of what the client received, which its ring keeps.
func BenchmarkShapeWithUI(b *testing.B) {
	body := listOf(100 << 10)
	b.Run("without a page", func(b *testing.B) {
		serveN(b, httpfit.Middleware(benchGuard(b), nil)(staticHandler(body)), len(body))
	})
	b.Run("with a page", func(b *testing.B) {
		g := benchGuard(b)
		_ = httpfit.UI(g, nil)
		serveN(b, httpfit.Middleware(g, nil)(staticHandler(body)), len(body))
	})
}
