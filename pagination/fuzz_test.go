package pagination_test

import (
	"testing"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/pagination"
)

// maxFuzzInput bounds the inputs FuzzPaginateJSON follows to the end.
const maxFuzzInput = 16 << 10

// FuzzPaginateJSON feeds arbitrary bytes to the raw JSON path: it must never
// panic, must accept exactly the JSON arrays that encoding/json accepts, and
// following the cursors of an array must return its elements byte for byte,
// each once and in order. Seeds are in testdata/fuzz/FuzzPaginateJSON.
func FuzzPaginateJSON(f *testing.F) {
	// A small threshold makes several pages; a large hard cap keeps every
	// element pageable.
	p := newPager(f, nil, &pagination.Options{Budget: budget.Budget{Threshold: 300, HardCap: 1 << 30}})
	f.Add([]byte(`[1,"two",{"three":[3]},null,true,false,-4.5e6]`), uint8(2))
	f.Add([]byte(`[]`), uint8(0))
	f.Add([]byte(`{"not":"an array"}`), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		if len(data) > maxFuzzInput {
			t.Skip("every page scans the whole input: large inputs make the run quadratic")
		}
		checkAgainstEncodingJSON(t, p, data, int(limit)%(pagination.MaxLimit+1))
	})
}
