package cursor

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The plaintext sealed in a cursor is a compact binary encoding of a
// [Payload], fields in this order:
//
//	kind      1 byte (1 page, 2 chunk)
//	offset    uvarint
//	index     uvarint
//	issued    uvarint, Unix seconds, at most maxUnix (year 9999)
//	ttl       uvarint, seconds, at most maxTTLSeconds; Expires = issued + ttl
//	order     uvarint length, bytes
//	scope     uvarint length, bytes
//	subject   uvarint length, bytes
//	snapshot  uvarint length, bytes
//	filters   uvarint length, bytes of canonical JSON; length 0 means none
//
// The encoding is canonical: every payload has exactly one encoding, and
// [Codec.Decode] rejects bytes that do not re-encode to themselves
// (over-long varints, trailing bytes).

// minPlaintextLen is the length of the shortest plaintext: one byte per field.
const minPlaintextLen = 10

// Range of the sealed times, so that no time arithmetic can overflow.
const (
	maxUnix       = 253402300799 // 9999-12-31T23:59:59Z
	maxTTLSeconds = math.MaxInt64 / uint64(1e9)
)

func uvarintLen(v uint64) int {
	return (bits.Len64(v|1) + 6) / 7
}

// plaintextLen returns len(appendPlaintext(nil, p, issued, ttl)).
func plaintextLen(p *Payload, issued, ttl uint64) int {
	n := 1 + uvarintLen(uint64(p.Offset)) + uvarintLen(uint64(p.Index)) + uvarintLen(issued) + uvarintLen(ttl)
	for _, s := range [...]int{len(p.Order), len(p.Scope), len(p.Subject), len(p.Snapshot), len(p.Filters)} {
		n += uvarintLen(uint64(s)) + s
	}
	return n
}

func appendPlaintext(dst []byte, p *Payload, issued, ttl uint64) []byte {
	dst = append(dst, byte(p.Kind))
	dst = binary.AppendUvarint(dst, uint64(p.Offset))
	dst = binary.AppendUvarint(dst, uint64(p.Index))
	dst = binary.AppendUvarint(dst, issued)
	dst = binary.AppendUvarint(dst, ttl)
	for _, s := range [...]string{p.Order, p.Scope, p.Subject, p.Snapshot} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(p.Filters)))
	return append(dst, p.Filters...)
}

// parsePlaintext reads a payload written by appendPlaintext. It checks
// bounds, ranges and that nothing trails; the caller checks canonical form
// by re-encoding. The strings share one allocation and Filters aliases b.
func parsePlaintext(b []byte) (p Payload, issued, ttl uint64, ok bool) {
	r := reader{b: b}
	p.Kind = Kind(r.byte())
	offset := r.uvarint()
	index := r.uvarint()
	issued = r.uvarint()
	ttl = r.uvarint()
	var spans [4][2]int // start and end of each text field in b
	for i := range spans {
		n := r.uvarint()
		spans[i][0] = r.off
		r.skip(n)
		spans[i][1] = r.off
	}
	nf := r.uvarint()
	filtersStart := r.off
	r.skip(nf)
	switch {
	case r.bad || r.off != len(b),
		p.Kind != KindPage && p.Kind != KindChunk,
		offset > math.MaxInt64, index > math.MaxInt64,
		issued > maxUnix, ttl > maxTTLSeconds:
		return Payload{}, 0, 0, false
	}
	p.Offset, p.Index = int64(offset), int64(index)

	// One string for the four text fields, sliced without further copies.
	base := spans[0][0]
	all := string(b[base:spans[3][1]])
	for i, f := range [...]*string{&p.Order, &p.Scope, &p.Subject, &p.Snapshot} {
		*f = all[spans[i][0]-base : spans[i][1]-base]
	}
	if nf > 0 {
		p.Filters = b[filtersStart : filtersStart+int(nf) : filtersStart+int(nf)]
	}
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
