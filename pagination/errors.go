package pagination

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test with [errors.Is].
var (
	// ErrInvalidLimit: the requested limit is negative or above the maximum.
	// The error is a [*LimitError] that carries the numbers.
	ErrInvalidLimit = errors.New("pagination: invalid limit")
	// ErrItemTooLarge: one item on its own, in its page, is over the hard
	// cap. The error is an [*ItemTooLargeError] that carries the numbers.
	ErrItemTooLarge = errors.New("pagination: item too large for a page")
	// ErrNotArray: the input of [Pager.PaginateJSON] is not valid JSON, or
	// not a JSON array.
	ErrNotArray = errors.New("pagination: not a JSON array")
	// ErrSource: a [Source] failed or returned an inconsistent window. The
	// source's own error, if any, is wrapped too.
	ErrSource = errors.New("pagination: source")
)

// LimitError reports a [Request.Limit] that breaks a validation rule. It
// wraps [ErrInvalidLimit].
type LimitError struct {
	Limit int    // the limit requested
	Max   int    // the maximum the Pager accepts
	Rule  string // the validation rule broken, e.g. "gte=0" or "lte=200"
}

// Error says which rule the limit breaks and what to send instead.
func (e *LimitError) Error() string {
	if e.Limit < 0 {
		return fmt.Sprintf("pagination: limit %d must not be negative (rule %s); omit limit or send 0 for the default page size, or a value from 1 to %d",
			e.Limit, e.Rule, e.Max)
	}
	return fmt.Sprintf("pagination: limit %d exceeds the maximum of %d (rule %s); request at most %d items per page and follow nextCursor for the rest",
		e.Limit, e.Max, e.Rule, e.Max)
}

// Unwrap returns [ErrInvalidLimit].
func (e *LimitError) Unwrap() error { return ErrInvalidLimit }

// ItemTooLargeError reports an item that cannot be sent even on a page of
// its own: the page holding only that item (with its nextCursor and meta) is
// over the hard cap. It wraps [ErrItemTooLarge]. Pages before the item were
// served normally; a summarizing or chunking strategy should take over from
// here.
type ItemTooLargeError struct {
	Index   int // index of the item in the whole list (0-based)
	Tokens  int // exact token count of the page holding only that item
	HardCap int // the budget's hard cap
}

// Error describes the item and the limit it breaks.
func (e *ItemTooLargeError) Error() string {
	return fmt.Sprintf("pagination: item %d takes %d tokens on a page of its own, more than the hard cap of %d; it cannot be paginated and must be summarized or chunked",
		e.Index, e.Tokens, e.HardCap)
}

// Unwrap returns [ErrItemTooLarge].
func (e *ItemTooLargeError) Unwrap() error { return ErrItemTooLarge }
