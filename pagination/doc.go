// Package pagination splits a list into pages that fit a token budget and
// hands back a signed cursor for the rest, so that nothing is lost.
//
// A page is a [Page]:
//
//	{"items":[...],"nextCursor":"..."|null,"meta":{"totalCount":N,"pageSize":N,"hasMore":bool}}
//
// nextCursor is a string exactly when meta.hasMore is true, items is never
// null, and meta.pageSize is the number of items on the page.
//
// # Pagers
//
// A [Pager] holds the cursor codec, the token counter, the budget and the
// limits. It pages three kinds of input:
//
//   - [Paginate]: a slice already in memory;
//   - [PaginateSource]: a [Source] function that fetches a window of items
//     (offset and limit in, items and total out) from a database or an API;
//   - [Pager.PaginateJSON]: the bytes of a JSON array, paged without decoding
//     its elements into Go values; each item is kept as a [json.RawMessage]
//     holding the element's bytes exactly as they appear in the input.
//
// Every call takes a [Request] (the client's limit and cursor) and a
// [cursor.Binding] (the scope, subject, order and filters of the list). The
// binding is sealed into the next cursor and checked when that cursor comes back: a cursor
// issued for another scope, subject, order or filters is rejected with an
// error wrapping [cursor.ErrMismatch]; malformed, tampered and expired
// cursors are rejected with errors wrapping [cursor.ErrMalformed],
// [cursor.ErrInvalid] and [cursor.ErrExpired]. The limit is not sealed: a
// client may change it from one page to the next.
//
// A cursor holds the offset of the next item, not a copy of the list: if the
// list changes between two requests, items may shift across page
// boundaries. Serve lists whose order is stable, or bind Binding.Filters to a
// version of the data.
//
// # Budget
//
// A page holds at most the requested limit of items, and no more than fit
// under the budget's threshold, counted exactly by the Pager's counter on the
// page as [Page.MarshalJSON] writes it: items, nextCursor
// (the very cursor that is returned) and meta. A page always holds at least
// one item while items remain: an item that is over the threshold on its own
// goes alone on its page, and an item that alone in its page is over the
// hard cap is reported as an [*ItemTooLargeError], so that a summarizing
// strategy can take over.
//
// Each item is marshalled and counted once; the sum of the item counts, with
// the measured cost of the commas between items, picks a candidate page
// size, and one exact count of the whole marshalled page, cursor included,
// confirms it (token counts are not additive across item boundaries). When
// the page is over the threshold, or has room to spare, the estimate is
// corrected with the exact count and the page counted again; a page usually
// costs one or two exact counts of about a threshold's worth of text.
//
// The cursor is part of the page and costs tokens: about 90 to 100 with the
// o200k_base encoding for a short scope, order and filters, more with long
// filters, which it seals. With a threshold much below 150 tokens every page
// that has a next page holds a single item.
//
// # Errors
//
// Errors to branch on: [ErrInvalidLimit] (also as [*LimitError]),
// [ErrItemTooLarge] (also as [*ItemTooLargeError]), [ErrNotArray],
// [ErrSource], and the cursor sentinels listed above. Every message starts with "pagination:".
package pagination
