package httpfit_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/corpus"
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

func benchGuard(b *testing.B, counter budget.Counter) *ctxfit.Guard {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret}, Counter: counter})
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
// threshold, bare and wrapped. "encoded" handlers marshal the response for
// each request; "static" ones write bytes encoded once (the worst case for
// the relative overhead). "wrapped-estimator" uses the chars/4 estimator
// instead of the exact tokenizer, to show what the middleware and the
// engine cost without exact counting (the guard then also counts 1% of the
// responses exactly, to sample the estimator's error).
func BenchmarkPassThrough(b *testing.B) {
	body := listOf(2 << 10)
	var items []corpus.Item
	if err := json.Unmarshal(body, &items); err != nil {
		b.Fatal(err)
	}
	mw := httpfit.Middleware(benchGuard(b, nil), nil)
	mwEstimator := httpfit.Middleware(benchGuard(b, budget.Estimator{}), nil)
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"encoded", jsonHandler(items)},
		{"static", staticHandler(body)},
	} {
		b.Run(c.name+"/bare", func(b *testing.B) { serveN(b, c.h, len(body)) })
		b.Run(c.name+"/wrapped", func(b *testing.B) { serveN(b, mw(c.h), len(body)) })
		b.Run(c.name+"/wrapped-estimator", func(b *testing.B) { serveN(b, mwEstimator(c.h), len(body)) })
	}
}

// BenchmarkShape compares shaping a JSON list (the first page, in store
// mode) with what a handler that re-encodes the same payload costs:
// json.Unmarshal into []corpus.Item plus json.Marshal.
func BenchmarkShape(b *testing.B) {
	mw := httpfit.Middleware(benchGuard(b, nil), nil)
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
