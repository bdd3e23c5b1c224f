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
// them against its [Expect] and returns them as the Expect gives them
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

// Expect is what the caller of [Codec.Decode] expects a cursor to be bound to.
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
type Expect struct {
	Kind    Kind // zero: any kind
	Scope   string
	Subject string
	Order   string
	Filters json.RawMessage
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
