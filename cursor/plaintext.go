package cursor

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The plaintext sealed in a cursor is a compact binary encoding of a
// [Payload], fields in this order:
//
//	kind      1 byte, not 0
//	offset    uvarint
//	index     uvarint
//	issued    uvarint, Unix seconds, at most maxUnix (year 9999)
//	ttl       uvarint, seconds, at most maxTTLSeconds; Expires = issued + ttl
//	scope     uvarint length, bytes
//	snapshot  uvarint length, bytes
//	data      uvarint length, bytes
//	subject   16 bytes, the subject's digest
//	query     16 bytes, the digest of the order and canonical filters
//
// The encoding is canonical: every payload has exactly one encoding, and
// [Codec.Decode] rejects bytes that do not re-encode to themselves
// (over-long varints, trailing bytes).

// minPlaintextLen is the length of the shortest plaintext.
const minPlaintextLen = 1 + 4 + 3 + 2*digestLen

// Range of the sealed times, so that no time arithmetic can overflow.
const (
	maxUnix       = 253402300799 // 9999-12-31T23:59:59Z
	maxTTLSeconds = math.MaxInt64 / uint64(1e9)
)

func uvarintLen(v uint64) int {
	return (bits.Len64(v|1) + 6) / 7
}

// plaintextLen returns len(appendPlaintext(nil, p, issued, ttl)).
func plaintextLen(p *sealed, issued, ttl uint64) int {
	n := 1 + uvarintLen(uint64(p.Offset)) + uvarintLen(uint64(p.Index)) + uvarintLen(issued) + uvarintLen(ttl) + 2*digestLen
	for _, s := range [...]int{len(p.Scope), len(p.Snapshot), len(p.Data)} {
		n += uvarintLen(uint64(s)) + s
	}
	return n
}

// sealed is a payload as the plaintext holds it: the carried fields and
// the digests of the bound ones.
type sealed struct {
	Payload
	subject, query digest
}

// appendPlaintext writes p.
func appendPlaintext(dst []byte, p *sealed, issued, ttl uint64) []byte {
	dst = append(dst, byte(p.Kind))
	dst = binary.AppendUvarint(dst, uint64(p.Offset))
	dst = binary.AppendUvarint(dst, uint64(p.Index))
	dst = binary.AppendUvarint(dst, issued)
	dst = binary.AppendUvarint(dst, ttl)
	for _, s := range [...]string{p.Scope, p.Snapshot} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(p.Data)))
	dst = append(dst, p.Data...)
	dst = append(dst, p.subject[:]...)
	return append(dst, p.query[:]...)
}

// parsePlaintext reads a payload written by appendPlaintext. It checks
// bounds, ranges and that nothing trails; the caller checks canonical form
// by re-encoding. The strings share one allocation and Data aliases b.
func parsePlaintext(b []byte) (p sealed, issued, ttl uint64, ok bool) {
	r := reader{b: b}
	p.Kind = Kind(r.byte())
	offset := r.uvarint()
	index := r.uvarint()
	issued = r.uvarint()
	ttl = r.uvarint()
	var spans [3][2]int // start and end of scope, snapshot and data in b
	for i := range spans {
		n := r.uvarint()
		spans[i][0] = r.off
		r.skip(n)
		spans[i][1] = r.off
	}
	digests := r.off
	r.skip(2 * digestLen)
	switch {
	case r.bad || r.off != len(b),
		p.Kind == 0,
		offset > math.MaxInt64, index > math.MaxInt64,
		issued > maxUnix, ttl > maxTTLSeconds:
		return sealed{}, 0, 0, false
	}
	p.Offset, p.Index = int64(offset), int64(index)
	base := spans[0][0]
	all := string(b[base:spans[1][1]])
	p.Scope = all[:spans[0][1]-base]
	p.Snapshot = all[spans[1][0]-base : spans[1][1]-base]
	if n := spans[2][1] - spans[2][0]; n > 0 {
		p.Data = b[spans[2][0]:spans[2][1]:spans[2][1]]
	}
	copy(p.subject[:], b[digests:])
	copy(p.query[:], b[digests+digestLen:])
	return p, issued, ttl, true
}

// reader reads varints and byte runs from b; after the first error bad is
// set and every further read returns zero.
type reader struct {
	b   []byte
	off int
	bad bool
}

func (r *reader) byte() byte {
	if r.bad || r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.off += n
	return v
}

func (r *reader) skip(n uint64) {
	if r.bad || n > uint64(len(r.b)-r.off) {
		r.bad = true
		return
	}
	r.off += int(n)
}
