package pagination_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/testing/fakeclock"
	"github.com/ctxfit/ctxfit/pagination"
)

// testSecret is a fixed 32-byte key; tests never use it for anything else.
var testSecret = []byte("pagination-test-secret-000000000")

// epoch is the start time of every test clock.
var epoch = time.Date(2025, 10, 15, 12, 0, 0, 0, time.UTC)

// clock is a settable time source for cursor.Options.Now.
type clock = fakeclock.Clock

func newClock() *clock { return fakeclock.New(epoch) }

func newCodec(tb testing.TB, clk *clock) *cursor.Codec {
	tb.Helper()
	if clk == nil {
		clk = newClock()
	}
	c, err := cursor.NewCodec([][]byte{testSecret}, &cursor.Options{Now: clk.Now})
	require.NoError(tb, err)
	return c
}

func newPager(tb testing.TB, clk *clock, opts *pagination.Options) *pagination.Pager {
	tb.Helper()
	p, err := pagination.NewPager(newCodec(tb, clk), opts)
	require.NoError(tb, err)
	return p
}

func exactCounter(tb testing.TB) budget.Counter {
	tb.Helper()
	c, err := budget.Exact(budget.O200KBase)
	require.NoError(tb, err)
	return c
}

// pageTokens counts the marshalled page the way a client receives it.
func pageTokens[T any](tb testing.TB, c budget.Counter, r pagination.Page[T]) int {
	tb.Helper()
	b, err := json.Marshal(r)
	require.NoError(tb, err)
	return c.Count(string(b))
}

// record is a typical list item.
type record struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Notes string `json:"notes,omitempty"`
}

func records(n int) []record {
	rs := make([]record, n)
	for i := range rs {
		rs[i] = record{ID: i, Name: "record " + itoa(i)}
	}
	return rs
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

var listQuery = cursor.Binding{
	Scope:   "list_records",
	Subject: "tenant-1",
	Order:   "id_asc",
	Filters: json.RawMessage(`{"status":"active"}`),
}

// collect follows nextCursor from the first page to the last and returns
// every page. limits gives the limit of each request in turn (the last one
// repeats); nil means the default.
func collect[T any](tb testing.TB, next func(pagination.Request) (pagination.Page[T], error), limits ...int) []pagination.Page[T] {
	tb.Helper()
	var pages []pagination.Page[T]
	req := pagination.Request{}
	for i := 0; ; i++ {
		if len(limits) > 0 {
			req.Limit = limits[min(i, len(limits)-1)]
		}
		r, err := next(req)
		require.NoError(tb, err, "page %d", i)
		pages = append(pages, r)
		if !r.Meta.HasMore {
			return pages
		}
		require.Less(tb, i, 1_000_000, "pagination does not end")
		req.Cursor = r.NextCursor
	}
}
