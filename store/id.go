package store

import (
	"crypto/rand"
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
