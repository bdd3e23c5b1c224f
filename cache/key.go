package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash"

	"github.com/ctxfit/ctxfit"
)

// keyVersion changes when the key's derivation does, so that a shared
// backend never serves an entry under a key derived another way.
const keyVersion = "ctxfit-cache-v1"

// Key returns the cache key of req: a digest (43 URL-safe characters) of
// its Endpoint, Path, Subject, Order and canonical Filters.
//
// Filters are canonicalized as JSON: object keys sorted, insignificant white
// space removed, numbers kept as written; array order is significant. Empty
// Filters, "null" and "{}" are the same (no filters). Filters that are not
// valid JSON are keyed by their bytes.
//
// Cursor, Limit, Fields, StartLine, EndLine and RequestID are not part of
// the key: the cache holds the full upstream response, of which these
// select only what the Guard sends. The key is a digest so that subjects
// and filter values are not written in clear to a shared backend.
func Key(req ctxfit.Request) string {
	h := sha256.New()
	field(h, keyVersion)
	field(h, req.Endpoint)
	field(h, req.Path)
	field(h, req.Subject)
	field(h, req.Order)
	field(h, canonical(req.Filters))
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0]))
}

// field writes s length-prefixed, so that no two field lists write the
// same bytes.
func field(h hash.Hash, s string) {
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	h.Write([]byte(s))
}

// canonical returns the canonical form of a JSON value: "" for none, the
// re-encoded value with sorted keys, or "!" and the bytes themselves when
// they are not one valid JSON value.
func canonical(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" || string(t) == "{}" {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || len(bytes.TrimSpace(t[dec.InputOffset():])) != 0 {
		return "!" + string(raw)
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "!" + string(raw)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
