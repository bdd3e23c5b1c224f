package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// NewID returns a new unguessable snapshot ID: 128 bits from crypto/rand,
// encoded as 22 characters of unpadded base64url (RFC 4648 §5), safe in URLs,
// JSON and Redis keys. It is safe for concurrent use.
func NewID() string {
	var b [16]byte
	// Since Go 1.24, crypto/rand.Read never returns an error: it crashes the
	// program irrecoverably if the system's randomness fails.
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// IDOf returns the snapshot ID of data: the first 128 bits of its SHA-256,
// encoded as [NewID] encodes. Equal data has equal IDs, so a Guard that
// snapshots the same response for many clients keeps it once (and each Put
// renews its TTL); different data collides with negligible probability. The
// ID tells nothing to whoever does not already hold the data, and cursors,
// which carry it, are sealed.
func IDOf(data []byte) string {
	sum := sha256.Sum256(data)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
