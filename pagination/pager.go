package pagination

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/cursor"
)

// Options configure a [Pager]. The zero value (or a nil *Options) gives the
// defaults listed with each field.
type Options struct {
	// Counter counts the tokens of a marshalled page. Nil means
	// budget.Exact("o200k_base"). It must be safe for concurrent use.
	Counter budget.Counter
	// Budget bounds every page: a page holds no more items than fit under
	// Budget.Threshold, and a page holding a single item may not exceed
	// Budget.HardCap. The zero Budget means [budget.Default] (4,000 and
	// 12,000 tokens); any other value must pass [budget.Budget.Validate].
	Budget budget.Budget
	// DefaultLimit is the page limit of a request that gives none. Zero
	// means [DefaultLimit] (50). It must be at most MaxLimit.
	DefaultLimit int
	// MaxLimit is the largest limit a request may ask for. Zero means
	// [MaxLimit] (200).
	MaxLimit int
}

// Pager cuts lists into budget-fitted pages and issues and checks their
// cursors.
//
// A Pager is immutable after [NewPager] and safe for concurrent use by
// multiple goroutines. The zero value is not usable; create one with
// NewPager.
type Pager struct {
	codec        *cursor.Codec
	counter      budget.Counter
	budget       budget.Budget
	defaultLimit int
	maxLimit     int
	maxRule      string // the rule a limit above maxLimit breaks (see Limit)
}

// NewPager returns a Pager that seals cursors with codec. opts is copied;
// nil means the defaults. It fails when codec is nil or an option is out of
// range, with an error that names the field.
func NewPager(codec *cursor.Codec, opts *Options) (*Pager, error) {
	if codec == nil {
		return nil, errors.New("pagination: NewPager needs a cursor codec; create one with cursor.NewCodec")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Counter == nil {
		c, err := budget.Exact(budget.O200KBase)
		if err != nil {
			return nil, fmt.Errorf("pagination: default counter: %w", err)
		}
		o.Counter = c
	}
	if o.Budget == (budget.Budget{}) {
		o.Budget = budget.Default()
	} else if err := o.Budget.Validate(); err != nil {
		return nil, fmt.Errorf("pagination: Options.Budget: %w", err)
	}
	if o.DefaultLimit == 0 {
		o.DefaultLimit = DefaultLimit
	}
	if o.MaxLimit == 0 {
		o.MaxLimit = MaxLimit
	}
	vo := validatedOptions{DefaultLimit: o.DefaultLimit, MaxLimit: o.MaxLimit}
	if err := validate.Struct(vo); err != nil {
		return nil, newOptionsError(err, vo)
	}
	return &Pager{
		codec:        codec,
		counter:      o.Counter,
		budget:       o.Budget,
		defaultLimit: o.DefaultLimit,
		maxLimit:     o.MaxLimit,
		maxRule:      maxRule(o.MaxLimit),
	}, nil
}

// Budget returns the budget the Pager fits pages into.
func (p *Pager) Budget() budget.Budget { return p.budget }

// position is where a request starts: the item offset and the page number.
type position struct {
	offset int
	index  int64
}

// start validates req and returns its limit and starting position.
func (p *Pager) start(req Request, q *cursor.Binding) (limit int, pos position, err error) {
	if limit, err = p.Limit(req); err != nil {
		return 0, pos, err
	}
	if len(q.Filters) > 0 && !json.Valid(q.Filters) {
		return 0, pos, errors.New("pagination: Query.Filters is not valid JSON; pass a JSON value, or nil for no filters")
	}
	if req.Cursor == "" {
		return limit, pos, nil
	}
	pl, err := p.codec.Decode(req.Cursor, expect(q))
	if err != nil {
		return 0, pos, fmt.Errorf("pagination: %w", err)
	}
	if q.Snapshot != "" && pl.Snapshot != q.Snapshot {
		return 0, pos, fmt.Errorf("pagination: %w (it was issued for other data)", cursor.ErrMismatch)
	}
	if pl.Offset > math.MaxInt || pl.Offset < 0 || pl.Index < 0 {
		return 0, pos, fmt.Errorf("pagination: %w (offset out of range)", cursor.ErrInvalid)
	}
	return limit, position{offset: int(pl.Offset), index: pl.Index}, nil
}

// Paginate returns the page of items that req asks for, bound to q.
//
// Without a cursor it starts at the first item; with one it resumes right
// after the last item of the page that issued it, provided the cursor was
// issued by p's codec for the same q and has not expired. The page holds at
// most the request's limit of items and as many as fit under the threshold
// (see the package documentation); Items is a subslice of items, not a copy.
// If the list has shrunk past the cursor, the page is empty and final.
//
// Errors wrap [ErrInvalidLimit], a cursor sentinel ([cursor.ErrMalformed],
// [cursor.ErrInvalid], [cursor.ErrExpired], [cursor.ErrMismatch]),
// [ErrItemTooLarge], or report an item that encoding/json cannot marshal.
func Paginate[T any](p *Pager, items []T, req Request, q cursor.Binding) (Page[T], error) {
	limit, pos, err := p.start(req, &q)
	if err != nil {
		return Page[T]{}, err
	}
	var window []T
	if pos.offset < len(items) {
		window = items[pos.offset : pos.offset+min(limit, len(items)-pos.offset)]
	}
	return page(context.Background(), p, window, len(items), pos, &q)
}

// Source fetches a window of a list that lives elsewhere (a database, an
// API): up to limit items starting at offset (0-based), in the list's
// order, and the number of items in the whole list.
//
// It is called once per page, with limit the request's page limit. It may
// return fewer than limit items, for example when its backend pages by
// smaller amounts, but none only when offset >= total; items beyond limit
// are ignored. Errors are returned to the caller of [PaginateSource]
// wrapped in [ErrSource]. A Source used by concurrent requests must be safe
// for concurrent use.
type Source[T any] func(ctx context.Context, offset, limit int) (items []T, total int, err error)

// PaginateSource returns the page that req asks for of the list src serves,
// bound to q. It calls src once, with the page's offset and limit, and then
// fits the items it returns to the budget as [Paginate] does; the next
// cursor resumes after the last item sent, so the items src returned but the
// page had no room for are fetched again by the next call.
//
// Errors are those of Paginate, plus errors wrapping [ErrSource] when src
// fails, reports a negative total, or returns no items before the total.
func PaginateSource[T any](ctx context.Context, p *Pager, src Source[T], req Request, q cursor.Binding) (Page[T], error) {
	limit, pos, err := p.start(req, &q)
	if err != nil {
		return Page[T]{}, err
	}
	if src == nil {
		return Page[T]{}, fmt.Errorf("%w: no source function given", ErrSource)
	}
	items, total, err := src(ctx, pos.offset, limit)
	switch {
	case err != nil:
		return Page[T]{}, fmt.Errorf("%w: %w", ErrSource, err)
	case total < 0:
		return Page[T]{}, fmt.Errorf("%w: total is %d; it must be >= 0", ErrSource, total)
	case len(items) == 0 && pos.offset < total:
		return Page[T]{}, fmt.Errorf("%w: no items at offset %d of a list of %d; a source returns at least one item while offset < total",
			ErrSource, pos.offset, total)
	case len(items) > 0 && pos.offset+min(len(items), limit) > total:
		return Page[T]{}, fmt.Errorf("%w: %d items at offset %d run past the total of %d; report the size of the whole list as total",
			ErrSource, min(len(items), limit), pos.offset, total)
	}
	if len(items) > limit {
		items = items[:limit]
	}
	return page(ctx, p, items, total, pos, &q)
}

// page fits window (the items from pos.offset on, at most the limit) to the
// budget and builds the response.
func page[T any](ctx context.Context, p *Pager, window []T, total int, pos position, q *cursor.Binding) (Page[T], error) {
	f := fitter{
		p:      p,
		ctx:    ctx,
		n:      len(window),
		total:  total,
		pos:    pos,
		q:      q,
		encode: func(i int) ([]byte, error) { return marshalItem(&window[i]) },
	}
	k, next, err := f.fit()
	if err != nil {
		return Page[T]{}, err
	}
	items := window[:k:k]
	if items == nil {
		items = []T{}
	}
	return Page[T]{
		Items:      items,
		NextCursor: next,
		Meta:       Meta{TotalCount: total, PageSize: k, HasMore: next != ""},
	}, nil
}
