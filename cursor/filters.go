package cursor

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/ctxfit/ctxfit/internal/rawjson"
)

// digestLen is the length of the digests a cursor seals: the first 16
// bytes of a SHA-256.
const digestLen = 16

type digest [digestLen]byte

// canonicalFilters returns the canonical form of the JSON value raw (see
// rawjson.Canonical: compact, object keys sorted, a repeated key keeping
// its last value, numbers as written, strings escaped the same way on every
// Go release, bytes that are not valid UTF-8 kept). Empty input and JSON
// null both mean "no filters" and give nil.
func canonicalFilters(raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	c, err := rawjson.Canonical(nil, raw)
	if err != nil {
		return nil, err
	}
	if string(c) == "null" {
		return nil, nil
	}
	return c, nil
}

// subjectDigest is what a cursor seals of its subject.
func subjectDigest(subject string) digest {
	h := sha256.New()
	h.Write([]byte("ctxfit/cursor v2 subject\x00"))
	h.Write([]byte(subject))
	var d digest
	copy(d[:], h.Sum(nil))
	return d
}

// queryDigest is what a cursor seals of its order and canonical filters.
func queryDigest(order string, canonical []byte) digest {
	h := sha256.New()
	h.Write([]byte("ctxfit/cursor v2 query\x00"))
	h.Write(binary.AppendUvarint(nil, uint64(len(order))))
	h.Write([]byte(order))
	h.Write(canonical)
	var d digest
	copy(d[:], h.Sum(nil))
	return d
}
