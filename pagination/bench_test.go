package pagination_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ctxfit/ctxfit/pagination"
)

var benchSizes = []int{100, 1_000, 10_000}

// benchList returns n records of a few to 400 bytes each (see randomList).
func benchList(n int) []record {
	rng := rand.New(rand.NewPCG(42, 42))
	items := randomList(rng, n, 400)
	for i := range items {
		items[i].Name = fmt.Sprintf("record %d", i)
	}
	return items
}

// BenchmarkPaginate measures one request for the second page of a list with
// the maximum limit (200), so that the default budget (4,000 tokens) cuts the
// page: a cursor is decoded, the page is fitted by exact count and the next
// cursor is issued.
func BenchmarkPaginate(b *testing.B) {
	p := newPager(b, nil, nil)
	for _, n := range benchSizes {
		items := benchList(n)
		first, err := pagination.Paginate(p, items, pagination.Request{}, listQuery)
		if err != nil {
			b.Fatal(err)
		}
		req := pagination.Request{Limit: pagination.MaxLimit, Cursor: first.NextCursor}
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				page, err := pagination.Paginate(p, items, req, listQuery)
				if err != nil {
					b.Fatal(err)
				}
				size = page.Meta.PageSize
			}
			b.ReportMetric(float64(size), "items/page")
		})
	}
}

// BenchmarkPaginateJSON measures the same request on the marshalled list:
// the whole array is validated and split, and the page is fitted as above.
// The throughput is that of the input bytes.
func BenchmarkPaginateJSON(b *testing.B) {
	p := newPager(b, nil, nil)
	for _, n := range benchSizes {
		data, err := json.Marshal(benchList(n))
		if err != nil {
			b.Fatal(err)
		}
		first, err := p.PaginateJSON(data, pagination.Request{}, listQuery)
		if err != nil {
			b.Fatal(err)
		}
		req := pagination.Request{Limit: pagination.MaxLimit, Cursor: first.NextCursor}
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			var size int
			for b.Loop() {
				page, err := p.PaginateJSON(data, req, listQuery)
				if err != nil {
					b.Fatal(err)
				}
				size = page.Meta.PageSize
			}
			b.ReportMetric(float64(size), "items/page")
		})
	}
}

// BenchmarkPaginateAll measures following every cursor of a list to its end.
func BenchmarkPaginateAll(b *testing.B) {
	p := newPager(b, nil, nil)
	for _, n := range benchSizes {
		items := benchList(n)
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := pagination.Request{Limit: pagination.MaxLimit}
				for {
					page, err := pagination.Paginate(p, items, req, listQuery)
					if err != nil {
						b.Fatal(err)
					}
					if !page.Meta.HasMore {
						break
					}
					req.Cursor = page.NextCursor
				}
			}
		})
	}
}
