// Package cursor issues and verifies opaque continuation tokens.
//
// A cursor carries where a client left off in a paged list or a chunked text
// (a [Payload]) from one request to the next. A [Codec] seals the payload:
// it is encrypted, so a cursor reveals neither its offset nor its filters
// (as Google AIP-158 asks of page tokens), and authenticated with
// HMAC-SHA256, so a cursor that was altered, signed with an unknown key, or
// has expired is rejected. Keys are derived from secrets with HKDF; a Codec
// holds an ordered key set so that secrets can be rotated without breaking
// cursors already handed out. Cursors are valid for 10 minutes by default
// ([Options.TTL]).
//
// Decoding is bound to the request it serves: [Codec.Decode] is told the
// scope (endpoint or tool), subject and query (order and filters) the caller
// expects, and rejects a cursor issued for anything else. The subject and
// the query are sealed as digests, so filters of any size give cursors of
// the same size. The page size is
// not bound, so a client may change it from one page to the next.
//
// # Key rotation
//
// [NewCodec] takes a list of secrets. The first signs new cursors; every one
// verifies. To rotate, put the new secret first and keep the old one second
// for at least one TTL (plus [Options.Skew]); then remove it. A cursor signed
// by a secret no longer listed is rejected with [ErrInvalid]. Secrets carry
// no numbering: each token names its key by a 4-byte ID derived from the
// secret.
//
// # Clock
//
// A cursor records when it was issued and when it expires, in whole seconds.
// It is accepted until Expires+Skew, and rejected with [ErrExpired] if it
// claims to be issued more than Skew in the future. The clock is
// [Options.Now], so tests move time instead of sleeping.
//
// # Errors
//
// Errors from [Codec.Decode] wrap exactly one of the sentinels, for
// [errors.Is]: [ErrMalformed], [ErrInvalid], [ErrExpired] and [ErrMismatch].
// Their messages say what to do next and never echo the token.
//
// # Wire format
//
// A token is unpadded base64url (RFC 4648 §5) of
//
//	version   1 byte, 2
//	key ID    4 bytes
//	IV        16 bytes, HMAC-SHA256(ivKey, plaintext)[:16]
//	payload   the plaintext encrypted with AES-256-CTR(encKey, IV)
//	tag       32 bytes, HMAC-SHA256(macKey, version‖key ID‖IV‖payload)
//
// where the key ID, encKey, ivKey and macKey are derived from the secret with
// HKDF-SHA256 (salt "ctxfit/cursor") under distinct info strings, such as
// "ctxfit/cursor v2 key id". The tag is checked, in constant time, before
// anything is decrypted. The IV is synthetic (SIV): encryption is
// deterministic, so the same payload, key and issue time give the same token.
// A token reveals its length, its key ID and whether it equals another token,
// and nothing of its content.
//
// The plaintext is a compact binary encoding: kind (1 byte), offset, index,
// issue time (Unix seconds) and TTL (seconds) as uvarints, then scope,
// snapshot and data, each as a uvarint length and bytes, then two 16-byte
// digests (SHA-256, truncated): of the subject, and of the order and the
// canonical filters. A cursor's length therefore depends on its scope,
// snapshot and data only, never on the subject or the size of the filters.
// Version 1 cursors (which carried order, subject and filters) are rejected
// with [ErrInvalid]; they lived ten minutes.
//
// Decoding is strict and canonical: it accepts exactly the tokens Encode
// writes. Tokens longer than [Options.MaxTokenBytes] are rejected before any
// decoding; base64 with padding, the standard alphabet, non-zero trailing
// bits or line breaks is rejected; so is a plaintext with trailing bytes or
// over-long varints.
package cursor
