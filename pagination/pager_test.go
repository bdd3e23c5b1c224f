package pagination_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/pagination"
)

// ids returns the IDs of the records on every page, in order.
func ids(pages []pagination.Page[record]) []int {
	out := []int{}
	for _, pg := range pages {
		for _, r := range pg.Items {
			out = append(out, r.ID)
		}
	}
	return out
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// assertPageInvariants checks what every page must satisfy.
func assertPageInvariants[T any](t *testing.T, pages []pagination.Page[T], total int) {
	t.Helper()
	for i, pg := range pages {
		assert.NotNil(t, pg.Items, "page %d: items is never nil", i)
		assert.Equal(t, len(pg.Items), pg.Meta.PageSize, "page %d: pageSize counts the items on the page", i)
		assert.Equal(t, total, pg.Meta.TotalCount, "page %d: totalCount", i)
		assert.Equal(t, pg.Meta.HasMore, pg.NextCursor != "", "page %d: nextCursor is set exactly when hasMore", i)
		assert.Equal(t, i < len(pages)-1, pg.Meta.HasMore, "page %d: only the last page is final", i)
		if total > 0 {
			assert.NotEmpty(t, pg.Items, "page %d: a page of a non-empty list is never empty", i)
		}
	}
}

func TestPaginateFollowsCursorsToTheEnd(t *testing.T) {
	p := newPager(t, nil, nil)
	tests := []struct {
		name      string
		n         int
		limit     int
		wantPages int
	}{
		{name: "an empty list is one empty final page", n: 0, wantPages: 1},
		{name: "a single item is one final page", n: 1, wantPages: 1},
		{name: "a list of exactly the limit is one page", n: 50, wantPages: 1},
		{name: "one item more than the limit takes two pages", n: 51, wantPages: 2},
		{name: "a list of ten limits takes ten pages", n: 100, limit: 10, wantPages: 10},
		{name: "pages of one item each", n: 7, limit: 1, wantPages: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := records(tt.n)
			pages := collect(t, func(req pagination.Request) (pagination.Page[record], error) {
				return pagination.Paginate(p, items, req, listQuery)
			}, tt.limit)
			assert.Len(t, pages, tt.wantPages)
			assert.Equal(t, seq(tt.n), ids(pages))
			assertPageInvariants(t, pages, tt.n)
		})
	}
}

func TestPaginateReturnsASmallListWhole(t *testing.T) {
	p := newPager(t, nil, nil)
	items := records(20)
	page, err := pagination.Paginate(p, items, pagination.Request{}, listQuery)
	require.NoError(t, err)
	assert.Equal(t, items, page.Items)
	assert.Empty(t, page.NextCursor)
	assert.Equal(t, pagination.Meta{TotalCount: 20, PageSize: 20, HasMore: false}, page.Meta)

	b, err := json.Marshal(page)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"nextCursor":null`)
}

func TestPaginateFitsTheBudget(t *testing.T) {
	counter := exactCounter(t)
	b := budget.Budget{Threshold: 400, HardCap: 2000}
	p := newPager(t, nil, &pagination.Options{Budget: b, Counter: counter})
	items := records(300)
	for i := range items {
		items[i].Notes = strings.Repeat("lorem ipsum ", i%7)
	}
	pages := collect(t, func(req pagination.Request) (pagination.Page[record], error) {
		return pagination.Paginate(p, items, req, listQuery)
	}, 200)
	require.Greater(t, len(pages), 2, "the budget, not the limit, cuts the pages")
	assert.Equal(t, seq(300), ids(pages))
	assertPageInvariants(t, pages, 300)
	for i, pg := range pages {
		tokens := pageTokens(t, counter, pg)
		assert.LessOrEqual(t, tokens, b.Threshold, "page %d is within the threshold", i)
		if i < len(pages)-1 {
			// One more item would not have fitted by much: the page is full.
			assert.Greater(t, tokens, b.Threshold*3/4, "page %d is reasonably full", i)
		}
	}
}

func TestPaginateOversizeItems(t *testing.T) {
	counter := exactCounter(t)
	b := budget.Budget{Threshold: 300, HardCap: 1000}
	p := newPager(t, nil, &pagination.Options{Budget: b, Counter: counter})
	big := strings.Repeat("word ", 500) // ~500 tokens: over the threshold, under the hard cap
	huge := strings.Repeat("word ", 2000)

	t.Run("an item over the threshold goes alone on its page", func(t *testing.T) {
		items := records(5)
		items[2].Notes = big
		pages := collect(t, func(req pagination.Request) (pagination.Page[record], error) {
			return pagination.Paginate(p, items, req, listQuery)
		})
		require.Len(t, pages, 3)
		assert.Equal(t, []int{0, 1}, ids(pages[:1]))
		assert.Equal(t, []int{2}, ids(pages[1:2]))
		assert.Equal(t, []int{3, 4}, ids(pages[2:]))
		tokens := pageTokens(t, counter, pages[1])
		assert.Greater(t, tokens, b.Threshold)
		assert.LessOrEqual(t, tokens, b.HardCap)
	})

	t.Run("an item over the hard cap is an ItemTooLargeError once it is reached", func(t *testing.T) {
		items := records(5)
		items[3].Notes = huge
		first, err := pagination.Paginate(p, items, pagination.Request{}, listQuery)
		require.NoError(t, err, "the items before the huge one are served")
		assert.Equal(t, []int{0, 1, 2}, ids([]pagination.Page[record]{first}))

		_, err = pagination.Paginate(p, items, pagination.Request{Cursor: first.NextCursor}, listQuery)
		require.Error(t, err)
		assert.ErrorIs(t, err, pagination.ErrItemTooLarge)
		var tooLarge *pagination.ItemTooLargeError
		require.ErrorAs(t, err, &tooLarge)
		assert.Equal(t, 3, tooLarge.Index)
		assert.Equal(t, 1000, tooLarge.HardCap)
		assert.Greater(t, tooLarge.Tokens, 2000)
	})

	t.Run("a single-item list over the hard cap reports the exact count", func(t *testing.T) {
		items := []record{{ID: 0, Notes: huge}}
		_, err := pagination.Paginate(p, items, pagination.Request{}, listQuery)
		var tooLarge *pagination.ItemTooLargeError
		require.ErrorAs(t, err, &tooLarge)
		whole, merr := json.Marshal(pagination.Page[record]{Items: items, Meta: pagination.Meta{TotalCount: 1, PageSize: 1}})
		require.NoError(t, merr)
		assert.Equal(t, pagination.ItemTooLargeError{Index: 0, Tokens: counter.Count(string(whole)), HardCap: 1000}, *tooLarge)
	})

	t.Run("an item that cannot be marshalled is an error naming it", func(t *testing.T) {
		items := []any{1, 2, make(chan int)}
		_, err := pagination.Paginate(p, items, pagination.Request{}, listQuery)
		assert.ErrorContains(t, err, "pagination: item 2: json: unsupported type: chan int")
	})
}

func TestPaginateHonoursALimitChangeBetweenPages(t *testing.T) {
	p := newPager(t, nil, nil)
	items := records(100)
	pages := collect(t, func(req pagination.Request) (pagination.Page[record], error) {
		return pagination.Paginate(p, items, req, listQuery)
	}, 10, 30, 5, 0)
	sizes := make([]int, len(pages))
	for i, pg := range pages {
		sizes[i] = pg.Meta.PageSize
	}
	assert.Equal(t, []int{10, 30, 5, 50, 5}, sizes)
	assert.Equal(t, seq(100), ids(pages))
}

func TestPaginateWhenTheListShrinks(t *testing.T) {
	p := newPager(t, nil, nil)
	first, err := pagination.Paginate(p, records(100), pagination.Request{Limit: 60}, listQuery)
	require.NoError(t, err)

	page, err := pagination.Paginate(p, records(40), pagination.Request{Cursor: first.NextCursor}, listQuery)
	require.NoError(t, err)
	assert.Equal(t, pagination.Meta{TotalCount: 40}, page.Meta, "a cursor past the end gives an empty final page")
	assert.NotNil(t, page.Items)
}

func TestCursorIsBoundToTheQuery(t *testing.T) {
	p := newPager(t, nil, nil)
	items := records(10)
	first, err := pagination.Paginate(p, items, pagination.Request{Limit: 3}, listQuery)
	require.NoError(t, err)
	require.True(t, first.Meta.HasMore)

	with := func(edit func(q *cursor.Binding)) cursor.Binding {
		q := listQuery
		edit(&q)
		return q
	}
	tests := []struct {
		name string
		q    cursor.Binding
	}{
		{name: "another scope is rejected", q: with(func(q *cursor.Binding) { q.Scope = "list_other" })},
		{name: "another subject is rejected", q: with(func(q *cursor.Binding) { q.Subject = "tenant-2" })},
		{name: "no subject is rejected", q: with(func(q *cursor.Binding) { q.Subject = "" })},
		{name: "another order is rejected", q: with(func(q *cursor.Binding) { q.Order = "id_desc" })},
		{name: "other filters are rejected", q: with(func(q *cursor.Binding) { q.Filters = json.RawMessage(`{"status":"archived"}`) })},
		{name: "no filters are rejected", q: with(func(q *cursor.Binding) { q.Filters = nil })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pagination.Paginate(p, items, pagination.Request{Cursor: first.NextCursor}, tt.q)
			require.Error(t, err)
			assert.ErrorIs(t, err, cursor.ErrMismatch)
			assert.True(t, strings.HasPrefix(err.Error(), "pagination: cursor: mismatch"), err.Error())
			assert.NotContains(t, err.Error(), first.NextCursor, "the message never echoes the token")
		})
	}

	t.Run("the same filters in another key order and spacing are accepted", func(t *testing.T) {
		q := with(func(q *cursor.Binding) { q.Filters = json.RawMessage(`{ "status" : "active" }`) })
		page, err := pagination.Paginate(p, items, pagination.Request{Cursor: first.NextCursor}, q)
		require.NoError(t, err)
		assert.Equal(t, 3, page.Items[0].ID)
	})

	t.Run("the raw JSON path checks the binding too", func(t *testing.T) {
		data, err := json.Marshal(items)
		require.NoError(t, err)
		_, err = p.PaginateJSON(data, pagination.Request{Cursor: first.NextCursor}, with(func(q *cursor.Binding) { q.Scope = "x" }))
		assert.ErrorIs(t, err, cursor.ErrMismatch)
	})
}

func TestRejectedCursors(t *testing.T) {
	clk := newClock()
	p := newPager(t, clk, nil)
	items := records(10)
	first, err := pagination.Paginate(p, items, pagination.Request{Limit: 3}, listQuery)
	require.NoError(t, err)
	token := first.NextCursor

	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	otherCodec, err := cursor.NewCodec([][]byte{[]byte("another-secret-of-32-bytes-000000")}, nil)
	require.NoError(t, err)
	otherPager, err := pagination.NewPager(otherCodec, nil)
	require.NoError(t, err)
	foreign, err := pagination.Paginate(otherPager, items, pagination.Request{Limit: 3}, listQuery)
	require.NoError(t, err)

	// Damage is reported as ErrMalformed or ErrInvalid depending on whether
	// it breaks the encoding or only the signature.
	tampered := []error{cursor.ErrMalformed, cursor.ErrInvalid}
	tests := []struct {
		name   string
		cursor string
		want   []error // any of
	}{
		{name: "garbage is malformed", cursor: "not a cursor", want: []error{cursor.ErrMalformed}},
		{name: "an over-long cursor is malformed", cursor: strings.Repeat("A", 5000), want: []error{cursor.ErrMalformed}},
		{name: "a truncated cursor is rejected", cursor: token[:len(token)-4], want: tampered},
		{name: "a cursor with one character changed in the middle is rejected", cursor: flip(token, len(token)/2), want: tampered},
		{name: "a cursor with its first character changed is rejected", cursor: flip(token, 0), want: tampered},
		{name: "a cursor with its last character changed is rejected", cursor: flip(token, len(token)-1), want: tampered},
		{name: "a cursor with a character appended is rejected", cursor: token + "A", want: tampered},
		{name: "a cursor signed with another key is invalid", cursor: foreign.NextCursor, want: []error{cursor.ErrInvalid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pagination.Paginate(p, items, pagination.Request{Cursor: tt.cursor}, listQuery)
			require.Error(t, err)
			matched := false
			for _, want := range tt.want {
				matched = matched || errors.Is(err, want)
			}
			assert.True(t, matched, "unexpected error: %v", err)
			assert.True(t, strings.HasPrefix(err.Error(), "pagination: cursor: "), err.Error())
		})
	}

	t.Run("a cursor is accepted until it expires", func(t *testing.T) {
		clk.Advance(cursor.DefaultTTL)
		page, err := pagination.Paginate(p, items, pagination.Request{Cursor: token}, listQuery)
		require.NoError(t, err)
		assert.Equal(t, 3, page.Items[0].ID)
	})

	t.Run("an expired cursor is rejected", func(t *testing.T) {
		clk.Advance(cursor.DefaultSkew + time.Second)
		_, err := pagination.Paginate(p, items, pagination.Request{Cursor: token}, listQuery)
		assert.ErrorIs(t, err, cursor.ErrExpired)
		assert.True(t, strings.HasPrefix(err.Error(), "pagination: cursor: expired"), err.Error())
	})
}

// sliceSource serves items as a Source and records the calls.
type sliceSource struct {
	items []record
	calls [][2]int
}

func (s *sliceSource) fetch(ctx context.Context, offset, limit int) ([]record, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	s.calls = append(s.calls, [2]int{offset, limit})
	if offset >= len(s.items) {
		return nil, len(s.items), nil
	}
	return s.items[offset:min(offset+limit, len(s.items))], len(s.items), nil
}

func TestPaginateSource(t *testing.T) {
	counter := exactCounter(t)
	b := budget.Budget{Threshold: 300, HardCap: 1000}
	p := newPager(t, nil, &pagination.Options{Budget: b, Counter: counter})

	t.Run("following the cursors fetches every item once and in order", func(t *testing.T) {
		src := &sliceSource{items: records(120)}
		pages := collect(t, func(req pagination.Request) (pagination.Page[record], error) {
			return pagination.PaginateSource(context.Background(), p, src.fetch, req, listQuery)
		}, 40)
		assert.Equal(t, seq(120), ids(pages))
		assertPageInvariants(t, pages, 120)
		offset := 0
		for i, pg := range pages {
			assert.Equal(t, [2]int{offset, 40}, src.calls[i], "page %d asks the source for the window after the last item sent", i)
			assert.LessOrEqual(t, pageTokens(t, counter, pg), b.Threshold)
			offset += pg.Meta.PageSize
		}
	})

	t.Run("a source that returns short windows is followed to the end", func(t *testing.T) {
		src := &sliceSource{items: records(30)}
		short := func(ctx context.Context, offset, limit int) ([]record, int, error) {
			return src.fetch(ctx, offset, min(limit, 4))
		}
		pages := collect(t, func(req pagination.Request) (pagination.Page[record], error) {
			return pagination.PaginateSource(context.Background(), p, short, req, listQuery)
		})
		assert.Len(t, pages, 8)
		assert.Equal(t, seq(30), ids(pages))
	})

	t.Run("items beyond the limit are ignored", func(t *testing.T) {
		all := records(30)
		greedy := func(context.Context, int, int) ([]record, int, error) { return all, 30, nil }
		page, err := pagination.PaginateSource(context.Background(), p, greedy, pagination.Request{Limit: 5}, listQuery)
		require.NoError(t, err)
		assert.Equal(t, all[:5], page.Items)
		assert.True(t, page.Meta.HasMore)
	})

	errBackend := errors.New("backend down")
	tests := []struct {
		name    string
		src     pagination.Source[record]
		wantErr string
	}{
		{
			name:    "a failing source is an ErrSource wrapping its error",
			src:     func(context.Context, int, int) ([]record, int, error) { return nil, 0, errBackend },
			wantErr: "pagination: source: backend down",
		},
		{
			name:    "a negative total is an error",
			src:     func(context.Context, int, int) ([]record, int, error) { return nil, -1, nil },
			wantErr: "pagination: source: total is -1; it must be >= 0",
		},
		{
			name:    "no items before the total is an error",
			src:     func(context.Context, int, int) ([]record, int, error) { return nil, 5, nil },
			wantErr: "pagination: source: no items at offset 0 of a list of 5; a source returns at least one item while offset < total",
		},
		{
			name:    "items past the total are an error",
			src:     func(context.Context, int, int) ([]record, int, error) { return records(3), 2, nil },
			wantErr: "pagination: source: 3 items at offset 0 run past the total of 2; report the size of the whole list as total",
		},
		{
			name:    "a nil source is an error",
			src:     nil,
			wantErr: "pagination: source: no source function given",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pagination.PaginateSource(context.Background(), p, tt.src, pagination.Request{}, listQuery)
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, pagination.ErrSource)
		})
	}

	t.Run("the source error stays reachable", func(t *testing.T) {
		_, err := pagination.PaginateSource(context.Background(), p, tests[0].src, pagination.Request{}, listQuery)
		assert.ErrorIs(t, err, errBackend)
	})

	t.Run("the context reaches the source", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		src := &sliceSource{items: records(3)}
		_, err := pagination.PaginateSource(ctx, p, src.fetch, pagination.Request{}, listQuery)
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, pagination.ErrSource)
	})

	t.Run("an invalid limit never reaches the source", func(t *testing.T) {
		src := &sliceSource{items: records(3)}
		_, err := pagination.PaginateSource(context.Background(), p, src.fetch, pagination.Request{Limit: 201}, listQuery)
		assert.ErrorIs(t, err, pagination.ErrInvalidLimit)
		assert.Empty(t, src.calls)
	})
}

func TestPagerIsSafeForConcurrentUse(t *testing.T) {
	p := newPager(t, nil, &pagination.Options{Budget: budget.Budget{Threshold: 200, HardCap: 1000}})
	items := records(200)
	done := make(chan []int)
	for range 8 {
		go func() {
			var got []int
			req := pagination.Request{Limit: 30}
			for {
				page, err := pagination.Paginate(p, items, req, listQuery)
				if err != nil {
					done <- nil
					return
				}
				for _, r := range page.Items {
					got = append(got, r.ID)
				}
				if !page.Meta.HasMore {
					done <- got
					return
				}
				req.Cursor = page.NextCursor
			}
		}()
	}
	for range 8 {
		assert.Equal(t, seq(200), <-done)
	}
}

func TestInvalidFiltersAreRejected(t *testing.T) {
	p := newPager(t, nil, nil)
	q := listQuery
	q.Filters = json.RawMessage(`{"status":`)
	_, err := pagination.Paginate(p, records(3), pagination.Request{}, q)
	assert.EqualError(t, err, "pagination: Query.Filters is not valid JSON; pass a JSON value, or nil for no filters")
}

func TestCursorsAreBoundToTheSnapshot(t *testing.T) {
	p := newPager(t, nil, nil)
	items := make([]int, 300)
	q := cursor.Binding{Scope: "list", Snapshot: "snap-1"}
	first, err := pagination.Paginate(p, items, pagination.Request{Limit: 10}, q)
	require.NoError(t, err)
	require.NotEmpty(t, first.NextCursor)

	_, err = pagination.Paginate(p, items, pagination.Request{Cursor: first.NextCursor}, q)
	assert.NoError(t, err, "the same snapshot accepts the cursor")

	other := q
	other.Snapshot = "snap-2"
	_, err = pagination.Paginate(p, items, pagination.Request{Cursor: first.NextCursor}, other)
	assert.ErrorIs(t, err, cursor.ErrMismatch, "another snapshot rejects it")
}
