package cursor_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ctxfit/ctxfit/cursor"
)

// In production, secrets come from a secret store and hold at least 32
// random bytes (for example from crypto/rand); never hard-code them.
var (
	exampleSecret    = []byte("example secret: 32 random bytes!!")
	exampleOldSecret = []byte("example secret that is retiring: 32+ bytes")
)

// A fixed clock keeps the examples' output stable.
var exampleNow = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

func ExampleNewCodec() {
	codec, err := cursor.NewCodec([][]byte{exampleSecret}, &cursor.Options{
		Now: func() time.Time { return exampleNow },
	})
	if err != nil {
		panic(err)
	}

	// Page 1 of "open orders" was served; seal where page 2 starts.
	token, err := codec.Encode(cursor.Payload{
		Kind:    cursor.KindPage,
		Offset:  25,
		Index:   2,
		Order:   "created_desc",
		Filters: json.RawMessage(`{"status":"open"}`),
		Scope:   "tools/list_orders",
		Subject: "tenant-42",
	})
	if err != nil {
		panic(err)
	}

	// The next request presents the token together with its own query.
	// Filters match by meaning: white space and key order do not matter.
	p, err := codec.Decode(token, cursor.Binding{
		Kind:    cursor.KindPage,
		Scope:   "tools/list_orders",
		Subject: "tenant-42",
		Order:   "created_desc",
		Filters: json.RawMessage(`{ "status": "open" }`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("page", p.Index, "starts at offset", p.Offset)
	fmt.Println("valid until", p.Expires.Format(time.RFC3339))

	// The same token presented to another tool is refused.
	_, err = codec.Decode(token, cursor.Binding{Scope: "tools/list_users", Subject: "tenant-42"})
	fmt.Println(errors.Is(err, cursor.ErrMismatch))
	// Output:
	// page 2 starts at offset 25
	// valid until 2026-01-02T15:14:05Z
	// true
}

func ExampleNewCodec_keyRotation() {
	opts := &cursor.Options{Now: func() time.Time { return exampleNow }}
	p := cursor.Payload{Kind: cursor.KindPage, Offset: 50, Scope: "tools/list_orders"}
	want := cursor.Binding{Scope: "tools/list_orders"}

	// Before the rotation, the old secret signs.
	before, err := cursor.NewCodec([][]byte{exampleOldSecret}, opts)
	if err != nil {
		panic(err)
	}
	oldToken, err := before.Encode(p)
	if err != nil {
		panic(err)
	}

	// During the rotation the new secret signs and the old one still
	// verifies, so cursors already handed out keep working.
	during, err := cursor.NewCodec([][]byte{exampleSecret, exampleOldSecret}, opts)
	if err != nil {
		panic(err)
	}
	newToken, err := during.Encode(p)
	if err != nil {
		panic(err)
	}
	_, err = during.Decode(oldToken, want)
	fmt.Println("old cursor during rotation:", err)

	// One TTL later the old cursors have expired and the old secret is
	// removed: anything it signed is refused.
	after, err := cursor.NewCodec([][]byte{exampleSecret}, opts)
	if err != nil {
		panic(err)
	}
	_, err = after.Decode(newToken, want)
	fmt.Println("new cursor after rotation:", err)
	_, err = after.Decode(oldToken, want)
	fmt.Println("old cursor after rotation:", errors.Is(err, cursor.ErrInvalid))
	// Output:
	// old cursor during rotation: <nil>
	// new cursor after rotation: <nil>
	// old cursor after rotation: true
}

func ExampleCodec_Decode_expired() {
	now := exampleNow
	codec, err := cursor.NewCodec([][]byte{exampleSecret}, &cursor.Options{
		TTL:  10 * time.Minute,
		Skew: 30 * time.Second,
		Now:  func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}
	p := cursor.Payload{Kind: cursor.KindChunk, Offset: 4096, Index: 1, Scope: "tools/read_file"}
	want := cursor.Binding{Kind: cursor.KindChunk, Scope: "tools/read_file"}
	token, err := codec.Encode(p)
	if err != nil {
		panic(err)
	}

	now = exampleNow.Add(10*time.Minute + 30*time.Second) // expiry plus skew: still accepted
	_, err = codec.Decode(token, want)
	fmt.Println(err)

	now = exampleNow.Add(11 * time.Minute) // past expiry plus skew
	_, err = codec.Decode(token, want)
	fmt.Println(errors.Is(err, cursor.ErrExpired))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// cursor: expired: cursors are valid for a limited time; request the first page again without a cursor (it expired 1m0s ago)
}
