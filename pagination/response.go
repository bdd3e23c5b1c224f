package pagination

import (
	"fmt"
	"strconv"

	"github.com/ctxfit/ctxfit/internal/jsonwire"
)

// Meta describes a page.
//
// The zero Meta describes an empty, final page. Meta is a plain value, safe
// to copy and share.
type Meta struct {
	// TotalCount is the number of items in the whole list, as known when
	// the page was made.
	TotalCount int `json:"totalCount"`
	// PageSize is the number of items on this page (not the limit asked for).
	PageSize int `json:"pageSize"`
	// HasMore reports whether items follow this page; then NextCursor is set.
	HasMore bool `json:"hasMore"`
}

// Page is one page of a list of T.
//
// Pages made by a [Pager] satisfy: Items holds Meta.PageSize items;
// NextCursor is non-empty exactly when Meta.HasMore is true; following
// NextCursor yields the item after the last one of this page.
//
// It marshals (see [Page.MarshalJSON]) as
//
//	{"items":[...],"nextCursor":"..."|null,"meta":{"totalCount":N,"pageSize":N,"hasMore":bool}}
//
// and unmarshals from the same shape with encoding/json. The zero value is
// an empty, final page. A Page is a plain value; it is safe for
// concurrent reads, and Items may share memory with the list it was cut from.
type Page[T any] struct {
	// Items are the items of this page, in list order.
	Items []T `json:"items"`
	// NextCursor continues the list after the last item of Items; "" on the
	// final page, which marshals as null.
	NextCursor string `json:"nextCursor"`
	// Meta describes the page.
	Meta Meta `json:"meta"`
}

// MarshalJSON writes the page in compact form: items as a JSON array (never
// null, even when Items is nil), nextCursor as a string or null when empty,
// then meta. Each item is encoded as encoding/json encodes an element of a
// []T, so strings are HTML-escaped and a [json.RawMessage] item is compacted.
//
// The bytes are exactly those the [Pager] counted against the budget, and
// json.Marshal of a page returns the same bytes. Indenting them (for example
// with json.MarshalIndent) adds tokens the Pager did not count.
func (r Page[T]) MarshalJSON() ([]byte, error) {
	items := make([][]byte, len(r.Items))
	for i := range r.Items {
		b, err := marshalItem(&r.Items[i])
		if err != nil {
			return nil, fmt.Errorf("pagination: item %d: %w", i, err)
		}
		items[i] = b
	}
	return appendPage(nil, items, r.NextCursor, r.Meta), nil
}

// marshalItem encodes one item as encoding/json encodes an element of a
// slice: through a pointer, so that methods with pointer receivers apply.
// Invalid UTF-8 is written as \ufffd whatever the toolchain's encoding/json
// (package jsonwire).
func marshalItem[T any](v *T) ([]byte, error) {
	return jsonwire.Marshal(v)
}

// pageLen returns the length of the page appendPage writes, give or take
// the digits of the numbers.
func pageLen(items [][]byte, quotedCursorLen int) int {
	n := len(`{"items":[],"nextCursor":null,"meta":{"totalCount":,"pageSize":,"hasMore":false}}`) + 2*20 + quotedCursorLen
	for _, it := range items {
		n += len(it) + 1
	}
	return n
}

// appendPage appends the JSON of a page whose items are already encoded.
// The output is compact and byte-identical to json.Marshal of the
// Page.
func appendPage(dst []byte, items [][]byte, cursor string, m Meta) []byte {
	var quoted []byte
	if cursor != "" {
		quoted = quoteString(cursor)
	}
	if dst == nil {
		dst = make([]byte, 0, pageLen(items, len(quoted)))
	}
	dst = append(dst, `{"items":[`...)
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, it...)
	}
	dst = append(dst, `],"nextCursor":`...)
	if quoted == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, quoted...)
	}
	dst = append(dst, `,"meta":{"totalCount":`...)
	dst = strconv.AppendInt(dst, int64(m.TotalCount), 10)
	dst = append(dst, `,"pageSize":`...)
	dst = strconv.AppendInt(dst, int64(m.PageSize), 10)
	dst = append(dst, `,"hasMore":`...)
	dst = strconv.AppendBool(dst, m.HasMore)
	return append(dst, "}}"...)
}

// quoteString returns s as a JSON string, exactly as json.Marshal writes it.
func quoteString(s string) []byte {
	if isPlainASCII(s) {
		b := make([]byte, 0, len(s)+2)
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	b, _ := jsonwire.Marshal(s) // a string always marshals
	return b
}

// isPlainASCII reports whether s needs no escaping in JSON: printable ASCII
// other than '"', '\\' and the HTML-escaped '<', '>' and '&'. Cursors
// (base64url) always are.
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
