package cursor

import (
	"encoding/json"
	"errors"
	"time"
)

// Kind says what a cursor continues. Any value but zero may be sealed;
// the packages of this module use the two below, and callers may define
// their own.
type Kind uint8

// Cursor kinds.
const (
	KindPage  Kind = 1 // the next page of a list
	KindChunk Kind = 2 // the next chunk of a text
)

// Payload is what a cursor holds.
//
// A cursor carries Kind, Offset, Index, Scope, Snapshot and Data: they come
// back from [Codec.Decode] and [Codec.Open] as they were encoded. It is
// bound to Subject, Order and Filters by digest (SHA-256, sealed inside the
// token), so that its size never depends on them: [Codec.Decode] checks
// them against its [Binding] and returns them as the Binding gives them
// (Filters in canonical form); [Codec.OpenFor] checks only the subject and
// returns it, and [Codec.Open] checks none and returns them empty.
//
// A Payload is a plain value. Its zero value is not encodable: Kind is
// required.
type Payload struct {
	Kind     Kind            // what the cursor continues; required, not zero
	Offset   int64           // position to resume from (items or bytes); >= 0
	Index    int64           // number of the page or chunk this cursor leads to; >= 0
	Order    string          // sort order the list was issued with, e.g. "created_desc"; bound by digest
	Filters  json.RawMessage // query filters, any JSON value; nil (or JSON null) means none; bound by digest of the canonical form
	Scope    string          // endpoint or tool the cursor was issued for; carried
	Subject  string          // tenant, session or principal; "" when unbound; bound by digest
	Snapshot string          // opaque reference to stored data (store mode); "" when none; carried
	Data     []byte          // opaque bytes the issuer wants back (for example where in its data to resume); carried
	IssuedAt time.Time       // set by Encode from the codec's clock, in whole seconds; UTC after Decode
	Expires  time.Time       // set by Encode: IssuedAt + TTL; UTC after Decode
}

// Binding is what a cursor is tied to: what [Codec.Decode] expects a cursor
// to be bound to, and what pagination's Paginate, PaginateSource and
// PaginateJSON and chunk's Chunker.Chunk seal into the cursors they issue.
// A cursor whose kind (when Kind is not zero), scope, subject, order or
// filters differ is rejected with [ErrMismatch]. Strings are compared
// exactly; an empty Subject matches only a cursor issued without one.
//
// Filters are compared as canonical JSON: object keys sorted, no white space,
// a repeated key keeping its last value, numbers kept as written (so 1 and
// 1.0 differ). Key order and white space therefore do not matter, and nil,
// empty and JSON null all mean "no filters". Filters that are not valid JSON
// match nothing.
//
// The page size is deliberately not part of it: a client may change the page
// size between pages.
//
// The zero Binding binds a cursor to nothing but the codec (and, in
// pagination and chunk, the data). A Binding is a plain value, safe to copy
// and share; Filters must not be modified while a call that uses it runs.
type Binding struct {
	// Kind is the kind of cursor [Codec.Decode] accepts; zero accepts any
	// kind. Only Decode reads it: pagination and chunk set their own kind.
	Kind Kind
	// Scope is the endpoint or tool the cursor is issued for, e.g.
	// "GET /api/v1/listings" or "list_bookings".
	Scope string
	// Subject is the tenant, session or principal; "" when cursors are not
	// bound to one.
	Subject string
	// Order is the sort order, e.g. "created_desc".
	Order string
	// Filters are the query filters, any JSON value; nil or JSON null means
	// none.
	Filters json.RawMessage
	// Snapshot is an opaque reference to the data being paged or chunked.
	// [Codec.Decode] does not read it; pagination and chunk seal it into
	// every cursor they issue and check it when one comes back. In
	// pagination it is the ID of a stored snapshot or a fingerprint of the
	// data, and a cursor issued for another snapshot is rejected with
	// [ErrMismatch]; in chunk it is where the text is kept (for example a
	// store ID), sealed ahead of the text's fingerprint, and must not
	// contain a space. "" binds nothing.
	Snapshot string
}

// Errors returned by [Codec.Decode]. Test with errors.Is.
var (
	// ErrMalformed: the token is not a cursor at all (too large, not
	// canonical unpadded base64url, too short).
	ErrMalformed = errors.New("cursor: malformed: the cursor is not one this server issued; request the first page again without a cursor")
	// ErrInvalid: the version is unknown, the key is unknown or removed, the
	// MAC does not verify, or the sealed payload cannot be read.
	ErrInvalid = errors.New("cursor: invalid: the cursor was altered or signed with a key this server no longer accepts; request the first page again without a cursor")
	// ErrExpired: the cursor is past its expiry plus skew, or was issued
	// more than the skew in the future.
	ErrExpired = errors.New("cursor: expired: cursors are valid for a limited time; request the first page again without a cursor")
	// ErrMismatch: the cursor was issued for another kind, scope, subject,
	// order or filters.
	ErrMismatch = errors.New("cursor: mismatch: the cursor belongs to another request; repeat the request with the same endpoint and filters it was issued for, or request the first page again without a cursor")
)
