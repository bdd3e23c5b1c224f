// Package bpe is ctxfit's exact tiktoken tokenizer: a hand-written
// pre-tokeniser for each encoding's split pattern and an allocation-free
// byte-pair merge over the BPE ranks of o200k_base and cl100k_base.
//
// The ranks are embedded in a compact form (o200k_base.tokens,
// cl100k_base.tokens) that gen writes from github.com/pkoukk/tiktoken-go-loader's
// rank files at development time (go generate); TestTokenFiles holds them to
// those files. An encoding is read on its first Load: nothing is done at
// package initialisation.
//
// Its output equals github.com/pkoukk/tiktoken-go's EncodeOrdinary for every
// input (invalid UTF-8 included: like tiktoken-go, each invalid byte counts as
// U+FFFD). The differential tests and fuzz targets in this package hold it to
// that.
package bpe

//go:generate go run ./gen

import (
	_ "embed"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Encoding names.
const (
	O200KBase  = "o200k_base"
	CL100KBase = "cl100k_base"
)

// The token files, in the form gen/main.go describes.
var (
	//go:embed o200k_base.tokens
	o200kTokens string
	//go:embed cl100k_base.tokens
	cl100kTokens string
)

// Encoding is one loaded tiktoken encoding. It is immutable and safe for
// concurrent use.
type Encoding struct {
	name   string
	blob   string   // the bytes of all tokens, in rank order
	off    []uint32 // the token of rank r is blob[off[r]:off[r+1]]
	table  []bucket // the rank of each token, by hash; see find
	shift  uint     // 64 - log2(len(table))
	byByte [256]uint32
	// byPair is the rank of each two-byte token, indexed by its bytes
	// (first<<8 | second), or noRank: a merge starts with a look-up per pair
	// of bytes, and this 256 KiB table, unlike the rank table, stays in the
	// CPU's caches.
	byPair []uint32
	maxLen int  // longest token in bytes
	o200k  bool // which split pattern: o200k_base's or cl100k_base's

	btOnce  sync.Once
	bt      *backtracker // long-piece tables, built on first use; see backtrack.go
	btBuilt atomic.Bool  // bt is built: pieces of midPiece bytes on use it
	// longBytes counts the bytes of long pieces merged before bt is built;
	// see search.
	longBytes atomic.Int64
}

// split returns the end of the pre-tokeniser piece that starts at s[i:]:
// by the ASCII path where it decides, else by the whole pattern. s is valid
// UTF-8 and i < len(s).
func (e *Encoding) split(s string, i int) int {
	if j := asciiSplit(s, i, e.o200k); j > i {
		return j
	}
	if e.o200k {
		return splitO200K(s, i)
	}
	return splitCL100K(s, i)
}

// Name returns the encoding's name, e.g. "o200k_base".
func (e *Encoding) Name() string { return e.name }

// lazy is one encoding, read from its token file on first use.
type lazy struct {
	once sync.Once
	file *string
	enc  *Encoding
	err  error
}

var (
	o200k  = lazy{file: &o200kTokens}
	cl100k = lazy{file: &cl100kTokens}
)

// Load returns the process-wide Encoding called name, reading its ranks from
// the embedded token file on first use (a few milliseconds). It is safe for
// concurrent use.
func Load(name string) (*Encoding, error) {
	var l *lazy
	switch name {
	case O200KBase:
		l = &o200k
	case CL100KBase:
		l = &cl100k
	default:
		return nil, fmt.Errorf("bpe: unknown encoding %q (want %q or %q)", name, O200KBase, CL100KBase)
	}
	l.once.Do(func() {
		loadClasses()
		lens, blob, err := readTokens(*l.file)
		if err == nil {
			l.enc, err = newEncoding(name, lens, blob)
		}
		if err != nil {
			l.err = fmt.Errorf("bpe: %s: %w", name, err)
		}
	})
	return l.enc, l.err
}

// readTokens splits a token file into the length of each rank's token and
// the tokens' bytes.
func readTokens(file string) (lens, blob string, err error) {
	if len(file) < 4 {
		return "", "", fmt.Errorf("token file of %d bytes", len(file))
	}
	n := int(le32(file))
	if len(file)-4 < n {
		return "", "", fmt.Errorf("token file of %d bytes for %d ranks", len(file), n)
	}
	return file[4 : 4+n], file[4+n:], nil
}

// newEncoding builds an Encoding from the length of each rank's token
// (0: the rank has none) and the tokens' bytes in rank order. Every byte must
// be a token, and no token may have two ranks (gen writes the token files from
// a map of tokens to ranks; tests check every rank's look-up).
func newEncoding(name, lens, blob string) (*Encoding, error) {
	if len(lens) >= 1<<24 {
		return nil, fmt.Errorf("%d ranks, at most %d supported", len(lens), 1<<24-1)
	}
	e := &Encoding{name: name, o200k: name == O200KBase, blob: blob, off: make([]uint32, len(lens)+1)}
	total, tokens, bytes := 0, 0, 0
	var pairs []uint32 // two-byte tokens: their bytes, then their rank
	var byteSeen [256]bool
	for r := 0; r < len(lens); r++ {
		e.off[r] = uint32(total)
		n := int(lens[r])
		if n == 1 && total < len(blob) && !byteSeen[blob[total]] {
			byteSeen[blob[total]] = true
			e.byByte[blob[total]] = uint32(r)
			bytes++
		}
		if n == 2 && total+2 <= len(blob) {
			pairs = append(pairs, uint32(blob[total])<<8|uint32(blob[total+1]), uint32(r))
		}
		if n > 0 {
			total += n
			tokens++
			e.maxLen = max(e.maxLen, n)
		}
	}
	e.off[len(lens)] = uint32(total)
	if total != len(blob) {
		return nil, fmt.Errorf("token lengths add up to %d bytes, have %d", total, len(blob))
	}
	if bytes != 256 {
		return nil, fmt.Errorf("%d single-byte tokens, want 256", bytes)
	}
	e.byPair = make([]uint32, 1<<16)
	for i := range e.byPair {
		e.byPair[i] = noRank
	}
	for i := 0; i < len(pairs); i += 2 {
		if e.byPair[pairs[i]] == noRank { // the first rank, as the rank table keeps
			e.byPair[pairs[i]] = pairs[i+1]
		}
	}
	size := 1
	for size*bucketSlots*4 < tokens*5 { // at most four fifths full
		size *= 2
	}
	e.table = make([]bucket, size)
	e.shift = uint(64 - bits.TrailingZeros(uint(size)))
	e.fill(len(lens))
	return e, nil
}

// token returns the bytes of the token of rank r, or "" if r has none.
func (e *Encoding) token(r uint32) string {
	if int(r)+1 >= len(e.off) {
		return ""
	}
	return e.blob[e.off[r]:e.off[r+1]]
}

// The rank table is open addressing over buckets of four slots, one cache
// line each, probed linearly from the bucket that the token's hash picks.
// A slot holds the token's first 8 bytes, so that tokens of up to 8 bytes,
// most of those looked up, are compared without reading the blob.

const bucketSlots = 4

type bucket [bucketSlots]slot

type slot struct {
	head uint64 // the token's first 8 bytes, little endian, zero padded
	meta uint64 // offset in blob<<32 | rank<<8 | length; 0 for an empty slot
}

// key returns the first min(len(s), 8) bytes of s, not empty, as a little
// endian number, and a hash of all of s. It reads no byte outside s.
func key(s string) (head, hash uint64) {
	n := len(s)
	var x uint64
	switch {
	case n > 8:
		head = le64(s)
		tail := bits.RotateLeft64(le64(s[n-8:])*0xC2B2AE3D27D4EB4F, 31)
		return head, (head ^ tail ^ uint64(n)<<57) * hashMul
	case n == 8:
		x = le64(s)
	case n >= 4:
		x = uint64(le32(s)) | uint64(le32(s[n-4:]))<<(8*(n-4))
	case n >= 2:
		x = uint64(le16(s)) | uint64(le16(s[n-2:]))<<(8*(n-2))
	default:
		x = uint64(s[0])
	}
	return shortKey(x, n)
}

const hashMul = 0x9E3779B97F4A7C15

// shortKey is key of a string of n bytes, 1 to 8, that are the low n bytes
// of x.
func shortKey(x uint64, n int) (head, hash uint64) {
	head = x & (^uint64(0) >> (64 - 8*n))
	return head, (head ^ uint64(n)<<57) * hashMul
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func le16(s string) uint16 {
	_ = s[1]
	return uint16(s[0]) | uint16(s[1])<<8
}

// pairRank returns the rank of the two bytes s[0:2] (len(s) >= 2), or noRank.
func (e *Encoding) pairRank(s string) uint32 {
	return e.byPair[uint16(s[0])<<8|uint16(s[1])]
}

// rank returns the rank of s, or noRank.
func (e *Encoding) rank(s string) uint32 {
	if len(s) == 0 || len(s) > e.maxLen {
		return noRank
	}
	head, hash := key(s)
	return e.find(s, head, hash)
}

// find returns the rank of s, not empty, which has the given head and hash
// (see key), or noRank.
func (e *Encoding) find(s string, head, hash uint64) uint32 {
	mask := len(e.table) - 1
	for b := int(hash >> e.shift); ; b = (b + 1) & mask {
		for _, sl := range &e.table[b] {
			if sl.meta == 0 {
				return noRank
			}
			if sl.head == head && int(uint8(sl.meta)) == len(s) {
				if len(s) <= 8 || e.blob[sl.meta>>32+8:sl.meta>>32+uint64(len(s))] == s[8:] {
					return uint32(sl.meta) >> 8
				}
			}
		}
	}
}

// fill puts the tokens of ranks [0, n) in the empty table. Inserting them
// in rank order would write all over the table, a cache miss each; so they
// are sorted by the bucket their hash picks (a counting sort), and the table
// is filled in one sweep, each token in the first free slot from its bucket
// on. That is where linear probing in any order puts it, but for the order
// among tokens of one cluster, which lookups do not see. Tokens that the
// last buckets push past the end wrap around to the first ones.
func (e *Encoding) fill(n int) {
	// home[r] is the bucket of rank r's token, hashed once (the token's
	// bytes are read once here and once more by put).
	home := make([]uint32, n)
	// end[b] is, after the second pass, where bucket b's tokens end in order.
	end := make([]uint32, len(e.table)+1)
	for r := range n {
		if e.off[r] != e.off[r+1] {
			_, hash := key(e.blob[e.off[r]:e.off[r+1]])
			home[r] = uint32(hash >> e.shift)
			end[home[r]+1]++
		}
	}
	for b := 1; b < len(end); b++ {
		end[b] += end[b-1]
	}
	order := make([]uint32, end[len(e.table)])
	for r := range n {
		if e.off[r] != e.off[r+1] {
			b := home[r]
			order[end[b]] = uint32(r)
			end[b]++
		}
	}
	slots := unsafe.Slice(&e.table[0][0], len(e.table)*bucketSlots)
	put := func(at int, r uint32) {
		tok := e.token(r)
		head, _ := key(tok)
		slots[at] = slot{head, uint64(e.off[r])<<32 | uint64(r)<<8 | uint64(len(tok))}
	}
	// next is the first slot of the sweep that may be free; front, the
	// first at the front that may be free once the sweep reached the end.
	next, front, from := 0, 0, 0
	for b := range e.table {
		for _, r := range order[from:end[b]] {
			if at := max(next, b*bucketSlots); at < len(slots) {
				put(at, r)
				next = at + 1
				continue
			}
			// Every slot from b's on is taken: a lookup from b wraps
			// around, and finds the front taken up to here.
			for slots[front].meta != 0 {
				front++
			}
			put(front, r)
		}
		from = int(end[b])
	}
}
