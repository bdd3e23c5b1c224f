package bpe

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// This file holds the linear-time merge for long pieces: a backtracking
// search over token sequences, after the exact-BPE algorithm that GitHub
// published with its rust-gems "bpe" crate. It gives the same tokens as
// tiktoken's merge (mergeShort, mergeLong) without ever looking for the
// lowest-ranked pair of the whole piece.
//
// # Why a local test is enough
//
// Call a token reachable when the merge of its own bytes ends in the token
// itself. Three facts about tiktoken's merge (lowest rank first, leftmost on
// ties) carry the algorithm:
//
//  1. A span whose two ends stay part boundaries is merged exactly as if it
//     were alone: every merge inside it is the lowest-ranked pair overall,
//     so also the lowest (and leftmost) inside it, and merges outside do not
//     change it. Hence every part that ever exists, and so every token of an
//     encoding, is reachable; and if parts L and F are ever adjacent and
//     bytes(L)+bytes(F) is a token u, then merging u alone reaches [L, F] and
//     ends by joining them: (L, F) is u's canonical split. So the ranks of
//     all the joins a merge can meet come from a table of canonical splits,
//     keyed by two token ids.
//  2. Call tokens a, b a valid pair when merging bytes(a)+bytes(b) alone ends
//     in [a, b]. By fact 1 every adjacent pair of an encoding is valid.
//     Conversely, if every adjacent pair of a sequence of reachable tokens is
//     valid, merging its bytes never joins two of them: the first such join
//     would, by fact 1 applied to the two tokens' span, also happen when that
//     pair is merged alone. So the encoding of a piece is the one and only
//     sequence of reachable tokens that spells it with all adjacent pairs
//     valid.
//  3. So the tokens of an encoding that end at or before offset i are the
//     encoding of the text up to i: a search that reaches offset i with a
//     valid sequence holds the same tokens before i whatever its path.
//
// # Encoding a piece
//
// At offset i, with the tokens so far on a stack, take a candidate token
// that matches the text at i and push it if its end is not marked dead and
// it forms a valid pair with the top of the stack; otherwise try the next
// candidate. The candidates are the longest reachable token matching at i
// (a trie walk) and then each next-shorter reachable prefix of it. When none
// fits, no encoding of the piece has a boundary at i (fact 3: the stack
// below i is forced), so i is marked dead, the top token is popped and the
// search resumes with the candidates after it at its start. Each candidate
// at each offset is tried at most once (besides the guesses that encode
// makes first), so the work is linear in the piece length times at most the
// number of tokens that can start at one offset. With the guesses it is
// under two tries a byte on every input measured; should some input need
// more than workPerByte, the search gives up and mergeLong does the piece.
// A piece of n bytes needs n/8 bytes of dead marks and a stack of its
// tokens, kept between calls.
//
// # Testing a pair in time proportional to the tokens' lengths
//
// buildBacktracker checks that in every reachable token the merges of its
// own bytes come in non-decreasing rank order (true of o200k_base and
// cl100k_base; otherwise long pieces fall back to mergeLong). Then, when a
// and b are merged alone and nothing crosses their boundary, a's bytes merge
// as a alone and b's as b alone, interleaved in rank order, with a's side
// first on equal ranks (it is to the left). At every moment the parts that
// touch the boundary are a node L of a's right spine (a, right(a),
// right(right(a)), ..., a's last byte) and a node F of b's left spine, each
// living from the merge that made it (the rank of the token) until the merge
// that absorbs it (the rank of its parent on the spine). If L and F join into
// a token c (a canonical split, by fact 1), that join happens before either
// changes exactly when c is lower than the rank that absorbs L (a's side wins
// ties) and at most the rank that absorbs F (the boundary pair is left of all
// of b's pairs). validPair walks these boundary pairs backwards in time from
// (a, b), each step undoing whichever of L and F was made later, and reports
// invalid when such a join exists. Answers are kept in small lock-free
// caches (valid, firstValid) because runs, repeated words and dead ends ask
// about the same pairs again and again.
//
// # Memory and build time
//
// The tables are built once an encoding has merged more than buildAfter bytes
// of pieces longer than shortPiece (mergeLong does those before), so text
// with few long pieces never pays for them. They hold, per
// token, its canonical split, next-shorter prefix token and length (13
// bytes); the table of canonical splits (8 bytes a slot, at most three
// quarters full) with a 256 KiB bitmap in front of it; a trie of the
// reachable tokens with consecutive children (9 bytes a node); 256 KiB
// tables for pairs of bytes and the trie's second level; and two 128 KiB
// answer caches. For o200k_base (200k tokens, 422k trie nodes) that is 11 MiB,
// for cl100k_base 6 MiB. The canonical splits come from merging each token's
// bytes, in rank order, with the split table built so far; with sorting the
// tokens for the trie, a build takes about 80 ms for o200k_base and 35 ms for
// cl100k_base (loading the encoding takes a few), and allocates 15 MiB
// more that it drops (BenchmarkBuildBacktracker). The tokens' bytes are the
// Encoding's.

// idBits is the width of a token id in the split table and the answer caches.
const idBits = 21

// backtracker holds one encoding's tables for the backtracking search. It is
// immutable once built, apart from the answer caches, and safe for
// concurrent use.
type backtracker struct {
	// Indexed by token id (rank).
	blob    string // the Encoding's: token u is blob[off[u]:off[u+1]]
	off     []uint32
	tokLen  []uint8 // length in bytes; 0 for unreachable tokens and gaps
	split   []split
	shorter []uint32 // longest reachable proper prefix; noRank for bytes

	// pairs maps a canonical split to its token: each slot holds
	// left<<2*idBits | right<<idBits | token, or emptySlot. bytePair does
	// the same for two single bytes, indexed by their values.
	pairs     []uint64
	pairShift uint
	bytePair  [1 << 16]uint32
	// pairBits has one bit set per table entry, chosen by another hash
	// of its key: most pairs looked up are not tokens, and this small
	// bitmap, unlike the table, stays in the CPU cache to say so.
	pairBits [1 << (pairBitsLog - 6)]uint64

	// A trie of the reachable tokens, built breadth first so that the
	// children of node n are the nodes node[n].first to node[n+1].first-1,
	// in byte order. Node 0 is the root; label holds the byte that leads to
	// a node. The nodes at depth 1 and 2 are also indexed by their bytes.
	node      []trieNode
	label     []byte
	byteNode  [256]int32
	bytesNode [1 << 16]int32 // -1 where no token starts with the two bytes
	// runs[c][d-1] is the node for d bytes c, and the longest reachable
	// token on the way there: a run of one byte skips the walk down to it.
	runs    [256][]runNode
	maxLen  int
	byteTok [256]uint32 // the token of each single byte

	// cache holds validPair answers: each slot is
	// a<<(idBits+2) | b<<2 | valid<<1 | 1, or 0. skip holds firstValid's:
	// a<<(2*idBits+1) | u<<(idBits+1) | v<<1 | 1, with v all ones for
	// noRank.
	cache [1 << cacheBits]atomic.Uint64
	skip  [1 << cacheBits]atomic.Uint64
}

// split is a token's canonical split. A single byte has left noRank and its
// value in right.
type split struct{ left, right uint32 }

type runNode struct {
	node int32
	best uint32
}

type trieNode struct {
	first int32  // first child
	token uint32 // the reachable token that ends here, or noRank
}

const (
	emptySlot   = ^uint64(0)
	pairBitsLog = 21
	cacheBits   = 14
)

// backtracker returns e's long-piece tables, building them on first use. It
// returns nil when the encoding does not meet the search's assumptions.
func (e *Encoding) backtracker() *backtracker {
	e.btOnce.Do(func() {
		e.bt = buildBacktracker(e)
		e.btBuilt.Store(true)
	})
	return e.bt
}

// buildAfter is how many bytes of long pieces an encoding merges without
// the search before it builds the search's tables. Building them costs about
// as much as merging 250 KiB of long pieces with mergeLong instead of the
// search (100 ms against 400 ns a byte more, for o200k_base); below this a
// process that meets a few long pieces (a base64 blob, a long number, a run
// of letters) never pays for the tables, and one that meets many pays at
// most a quarter more before it does.
const buildAfter = 64 << 10

// search returns e's long-piece tables for a piece of n bytes, or nil while
// the long pieces merged so far, this one included, are under buildAfter
// bytes (or when the encoding does not meet the search's assumptions).
func (e *Encoding) search(n int) *backtracker {
	if e.btBuilt.Load() {
		return e.bt
	}
	if e.longBytes.Add(int64(n)) <= buildAfter {
		return nil
	}
	return e.backtracker()
}

// token returns the bytes of token u.
func (bt *backtracker) token(u uint32) string { return bt.blob[bt.off[u]:bt.off[u+1]] }

// buildBacktracker builds e's tables, or returns nil if e has a token id of
// more than idBits bits, a token longer than 255 bytes or a reachable token
// whose own merges do not come in non-decreasing rank order.
func buildBacktracker(e *Encoding) *backtracker {
	nt := len(e.off) - 1
	if nt > 1<<idBits-1 || e.maxLen > 255 {
		return nil
	}
	bt := &backtracker{
		blob:    e.blob,
		off:     e.off,
		byteTok: e.byByte,
		tokLen:  make([]uint8, nt),
		split:   make([]split, nt),
		shorter: make([]uint32, nt),
		maxLen:  e.maxLen,
	}
	multi := 0
	for id := range nt {
		if len(bt.token(uint32(id))) > 1 {
			multi++
		}
	}
	size := 2
	for size < multi+multi/3 { // at most three quarters full
		size *= 2
	}
	bt.pairs = make([]uint64, size)
	for i := range bt.pairs {
		bt.pairs[i] = emptySlot
	}
	bt.pairShift = 64
	for s := size; s > 1; s >>= 1 {
		bt.pairShift--
	}
	for i := range bt.bytePair {
		bt.bytePair[i] = noRank
	}

	// In rank order, merge each token's bytes with the tokens of lower rank,
	// whose canonical splits are in the table already. Fact 1 says that
	// table gives the rank of every join that can occur, and with merges in
	// non-decreasing order (true of every lower token, as checked before)
	// nothing of higher rank than the token can come before its last merge.
	// So a reachable token ends in two parts, its canonical split, and it
	// merges non-decreasingly because its two halves do and it outranks them.
	// More than two parts means the token is unreachable, or reachable out
	// of rank order, which an exact merge with the full ranks tells apart.
	parts := make([]uint32, e.maxLen)
	ranks := make([]uint32, e.maxLen)
	starts := make([]int32, e.maxLen+1)
	for _, id := range e.byByte {
		if len(bt.token(id)) != 1 {
			return nil // the search assumes every byte is a token
		}
	}
	ids := make([]uint32, 0, nt)
	for id := range nt {
		tok := bt.token(uint32(id))
		bt.split[id], bt.shorter[id] = split{noRank, noRank}, noRank
		switch {
		case tok == "":
			continue
		case len(tok) == 1:
			bt.split[id].right = uint32(tok[0])
		default:
			l, r, ok := bt.ownSplit(e, tok, parts, ranks)
			if !ok {
				if whole, _, _ := e.ownMerge(tok, starts, ranks); whole {
					return nil
				}
				continue // unreachable: never produced, never matched
			}
			bt.split[id] = split{l, r}
			if len(tok) == 2 {
				bt.bytePair[uint16(tok[0])<<8|uint16(tok[1])] = uint32(id)
			}
			key := uint64(l)<<idBits | uint64(r)
			i := bt.slot(key)
			for bt.pairs[i] != emptySlot {
				i = (i + 1) & (len(bt.pairs) - 1)
			}
			bt.pairs[i] = key<<idBits | uint64(id)
			b := pairBit(key)
			bt.pairBits[b>>6] |= 1 << (b & 63)
		}
		bt.tokLen[id] = uint8(len(tok))
		ids = append(ids, uint32(id))
	}
	bt.buildTrie(ids)
	return bt
}

// ownSplit merges the bytes of tok (at least 2) in rank order using the
// split table, which holds the tokens of lower rank than tok, and returns the
// two parts it ends with, or false if it ends with more.
func (bt *backtracker) ownSplit(e *Encoding, tok string, parts, ranks []uint32) (l, r uint32, ok bool) {
	n := len(tok)
	for i := 0; i < n; i++ {
		parts[i] = e.byByte[tok[i]]
	}
	for i := 0; i+1 < n; i++ {
		ranks[i] = bt.pair(parts[i], parts[i+1])
	}
	for n > 2 {
		best, at := uint32(noRank), -1
		for i := 0; i+1 < n; i++ {
			if ranks[i] < best {
				best, at = ranks[i], i
			}
		}
		if at < 0 {
			return 0, 0, false
		}
		parts[at] = best
		copy(parts[at+1:n-1], parts[at+2:n])
		if at+2 < n {
			copy(ranks[at+1:n-2], ranks[at+2:n-1])
		}
		n--
		if at+1 < n {
			ranks[at] = bt.pair(parts[at], parts[at+1])
		}
		if at > 0 {
			ranks[at-1] = bt.pair(parts[at-1], parts[at])
		}
	}
	return parts[0], parts[1], true
}

// ownMerge runs the byte-pair merge on tok (2 to len(ranks) bytes) alone,
// with the full ranks. It reports whether tok ends as one part, the offset at
// which its last merge joined two parts, and whether the merged ranks never
// decreased.
func (e *Encoding) ownMerge(tok string, starts []int32, ranks []uint32) (whole bool, cut int, monotone bool) {
	n := len(tok)
	for i := 0; i <= n; i++ {
		starts[i] = int32(i)
	}
	for i := 0; i+1 < n; i++ {
		ranks[i] = e.rank(tok[i : i+2])
	}
	monotone = true
	prev := uint32(0)
	for n > 1 {
		best, at := uint32(noRank), -1
		for i := 0; i+1 < n; i++ {
			if ranks[i] < best {
				best, at = ranks[i], i
			}
		}
		if at < 0 {
			break
		}
		if best < prev {
			monotone = false
		}
		prev = best
		cut = int(starts[at+1])
		copy(starts[at+1:n], starts[at+2:n+1])
		copy(ranks[at+1:n-1], ranks[at+2:n])
		n--
		if at+1 < n {
			ranks[at] = e.rank(tok[starts[at]:starts[at+2]])
		} else {
			ranks[at] = noRank
		}
		if at > 0 {
			ranks[at-1] = e.rank(tok[starts[at-1]:starts[at+1]])
		}
	}
	return n == 1, cut, monotone
}

// buildTrie builds the trie of the reachable tokens ids breadth first from
// the tokens sorted by bytes, and sets each token's next-shorter prefix.
func (bt *backtracker) buildTrie(ids []uint32) {
	tok := bt.token
	// Sort by the first 8 bytes, then by the whole token.
	type keyed struct {
		key uint64
		id  uint32
	}
	sorted := make([]keyed, len(ids))
	for i, id := range ids {
		var b [8]byte
		copy(b[:], tok(id))
		sorted[i] = keyed{binary.BigEndian.Uint64(b[:]), id}
	}
	// A radix sort on the keys, one byte a pass from the last, then a
	// comparison sort of each run of equal keys.
	buf := make([]keyed, len(sorted))
	for shift := 0; shift < 64; shift += 8 {
		var count [257]int
		for _, k := range sorted {
			count[int(byte(k.key>>shift))+1]++
		}
		if count[int(byte(sorted[0].key>>shift))+1] == len(sorted) {
			continue // the same byte everywhere
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for _, k := range sorted {
			b := byte(k.key >> shift)
			buf[count[b]] = k
			count[b]++
		}
		sorted, buf = buf, sorted
	}
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].key == sorted[i].key {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(sorted[i:j], func(a, b keyed) int { return strings.Compare(tok(a.id), tok(b.id)) })
		}
		i = j
	}
	// Copy the sorted tokens into one buffer, so the passes below read
	// memory in order, and count the trie's nodes: one per byte of each
	// token after its common prefix with the one before.
	off := make([]int32, len(ids)+1)
	total := 0
	for _, k := range sorted {
		total += len(tok(k.id))
	}
	flat := make([]byte, 0, total)
	nodes := 1
	prev := ""
	for i, k := range sorted {
		s := tok(k.id)
		ids[i] = k.id
		p := 0
		for p < len(s) && p < len(prev) && s[p] == prev[p] {
			p++
		}
		nodes += len(s) - p
		prev = s
		flat = append(flat, s...)
		off[i+1] = int32(len(flat))
	}

	// Node n covers ids[lo[n]:hi[n]], the tokens whose first depth[n] bytes
	// spell its path; near[n] is the longest token on the path above it.
	lo, hi := make([]int32, nodes), make([]int32, nodes)
	near, depth := make([]uint32, nodes), make([]uint8, nodes)
	bt.node = make([]trieNode, nodes+1)
	bt.label = make([]byte, nodes)
	hi[0], near[0], bt.node[0].token = int32(len(ids)), noRank, noRank
	next := int32(1)
	for n := range int32(nodes) {
		l, h, d := lo[n], hi[n], int32(depth[n])
		below := near[n]
		if l < h && off[l+1]-off[l] == d {
			id := ids[l]
			bt.node[n].token, bt.shorter[id] = id, near[n]
			below = id
			l++
		}
		bt.node[n].first = next
		for l < h {
			c := flat[off[l]+d]
			m := l + 1
			for m < h && flat[off[m]+d] == c {
				m++
			}
			lo[next], hi[next], near[next], depth[next] = l, m, below, uint8(d+1)
			bt.label[next], bt.node[next].token = c, noRank
			next++
			l = m
		}
	}
	bt.node[nodes].first = next
	for i := range bt.bytesNode {
		bt.bytesNode[i] = -1
	}
	for c := bt.node[0].first; c < bt.node[1].first; c++ {
		bt.byteNode[bt.label[c]] = c
		for d := bt.node[c].first; d < bt.node[c+1].first; d++ {
			bt.bytesNode[uint16(bt.label[c])<<8|uint16(bt.label[d])] = d
		}
		b, best := bt.label[c], uint32(noRank)
		for n := c; n >= 0; n = bt.child(n, b) {
			if t := bt.node[n].token; t != noRank {
				best = t
			}
			bt.runs[b] = append(bt.runs[b], runNode{n, best})
		}
	}
}

func (bt *backtracker) slot(key uint64) int {
	return int((key * 0x9E3779B97F4A7C15) >> bt.pairShift)
}

func pairBit(key uint64) uint64 {
	return (key * 0xD6E8FEB86659FD93) >> (64 - pairBitsLog)
}

// pair returns the token whose canonical split is (a, b), or noRank.
func (bt *backtracker) pair(a, b uint32) uint32 {
	key := pairKey(a, b)
	if !bt.mayPair(key) {
		return noRank
	}
	return bt.lookup(key)
}

func pairKey(a, b uint32) uint64 { return uint64(a)<<idBits | uint64(b) }

// mayPair reports whether key may be in the split table: false means it is
// not. It is pair's first step, which hot loops inline.
func (bt *backtracker) mayPair(key uint64) bool {
	bit := pairBit(key)
	return bt.pairBits[bit>>6]&(1<<(bit&63)) != 0
}

// lookup is pair's second step: the table itself.
func (bt *backtracker) lookup(key uint64) uint32 {
	mask := len(bt.pairs) - 1
	for i := bt.slot(key); ; i = (i + 1) & mask {
		s := bt.pairs[i]
		if s == emptySlot {
			return noRank
		}
		if s>>idBits == key {
			return uint32(s & (1<<idBits - 1))
		}
	}
}

// validPair reports whether merging bytes(a)+bytes(b) alone ends in [a, b],
// for reachable a and b. It walks the pairs of parts that touch the boundary
// from the last to the first (see the file comment); da and db are the ranks
// of the merges that absorb the current left and right part, noRank for
// never.
func (bt *backtracker) validPair(a, b uint32) bool {
	da, db := uint32(noRank), uint32(noRank)
	sa, sb := bt.split[a], bt.split[b]
	for {
		var c uint32
		if sa.left == noRank && sb.left == noRank {
			c = bt.bytePair[sa.right<<8|sb.right]
		} else {
			c = bt.pair(a, b)
		}
		if c != noRank && c < da && c <= db {
			return false
		}
		// Undo the later made of a and b; a byte was there from the start,
		// and on equal ranks a's side merged first.
		switch {
		case sa.left != noRank && (sb.left == noRank || a > b):
			da, a = a, sa.right
			sa = bt.split[a]
		case sb.left != noRank:
			db, b = b, sb.left
			sb = bt.split[b]
		default:
			return true
		}
	}
}

// valid is validPair through the answer cache.
func (bt *backtracker) valid(a, b uint32) bool {
	if int(bt.tokLen[a])+int(bt.tokLen[b]) <= 8 { // cheaper to work out than to cache
		return bt.validPair(a, b)
	}
	key := uint64(a)<<idBits | uint64(b)
	c := &bt.cache[(key*0x9E3779B97F4A7C15)>>(64-cacheBits)]
	if s := c.Load(); s>>2 == key && s&1 != 0 {
		return s&2 != 0
	}
	ok := bt.validPair(a, b)
	s := key<<2 | 1
	if ok {
		s |= 2
	}
	c.Store(s)
	return ok
}

// firstValid returns the first token v of u, shorter[u], shorter[shorter[u]],
// ... that forms a valid pair (a, v), or noRank, through a cache like valid's,
// and how many pairs it tested.
func (bt *backtracker) firstValid(a, u uint32) (v uint32, tests int) {
	const none = 1<<idBits - 1
	key := uint64(a)<<idBits | uint64(u)
	c := &bt.skip[(key*0x9E3779B97F4A7C15)>>(64-cacheBits)]
	if s := c.Load(); s>>(idBits+1) == key && s&1 != 0 {
		if v := uint32(s>>1) & none; v != none {
			return v, 0
		}
		return noRank, 0
	}
	for v = u; v != noRank && !bt.valid(a, v); v = bt.shorter[v] {
		tests++
	}
	s := key<<(idBits+1) | none<<1 | 1
	if v != noRank {
		s = key<<(idBits+1) | uint64(v)<<1 | 1
	}
	c.Store(s)
	return v, tests
}

// child returns the child of node n reached by byte c, or -1.
func (bt *backtracker) child(n int32, c byte) int32 {
	lo := bt.node[n].first
	labels := bt.label[lo:bt.node[n+1].first]
	if len(labels) <= 8 {
		for i, l := range labels {
			if l >= c {
				if l == c {
					return lo + int32(i)
				}
				return -1
			}
		}
		return -1
	}
	i, j := 0, len(labels)
	for i < j {
		h := int(uint(i+j) >> 1)
		if labels[h] < c {
			i = h + 1
		} else {
			j = h
		}
	}
	if i < len(labels) && labels[i] == c {
		return lo + int32(i)
	}
	return -1
}

// longest returns the longest reachable token that is a prefix of s[i:].
func (bt *backtracker) longest(s string, i int) uint32 {
	c := s[i]
	best := bt.node[bt.byteNode[c]].token
	if i+1 == len(s) {
		return best
	}
	var n int32
	j := i + 2
	if s[i+1] == c {
		// A run of c: go straight to its node.
		run := bt.runs[c]
		j = min(len(s), i+len(run)+1)
		for k := i + 2; k < j; k++ {
			if s[k] != c {
				j = k
				break
			}
		}
		if j-i > len(run) {
			return run[len(run)-1].best
		}
		n, best = run[j-i-1].node, run[j-i-1].best
	} else {
		if n = bt.bytesNode[uint16(c)<<8|uint16(s[i+1])]; n < 0 {
			return best
		}
		if t := bt.node[n].token; t != noRank {
			best = t
		}
	}
	end := min(len(s), i+bt.maxLen)
	for ; j < end; j++ {
		if n = bt.child(n, s[j]); n < 0 {
			break
		}
		if t := bt.node[n].token; t != noRank {
			best = t
		}
	}
	return best
}

// btScratch is the per-call state of the search, pooled so that steady-state
// counting allocates nothing.
type btScratch struct {
	stack []uint32 // tokens so far; guessed marks those pushed as a guess
	dead  []uint64 // bit i: no encoding of the piece has a boundary at i
	// succ remembers, for a token (by its low bits), the token pushed after
	// it last: token<<32 | successor.
	succ [256]uint64
	win  [windowLen]uint32 // a window's tokens
}

// Scratch is kept in a few fixed slots and, when they are taken or it grew
// very large, in a sync.Pool. The slots are there because a sync.Pool may
// drop what it is given: at every GC, and on purpose a quarter of the time
// under the race detector, and counting should allocate nothing in the
// steady state either way.
var (
	btSlots [4]atomic.Pointer[btScratch]
	btPool  = sync.Pool{New: func() any { return new(btScratch) }}
)

// maxSlotStack is the largest stack capacity (in tokens) kept in a slot,
// where the GC cannot reclaim it: 256 KiB, enough for any piece of 64 KB.
const maxSlotStack = 1 << 16

func getScratch() *btScratch {
	for i := range btSlots {
		if btSlots[i].Load() != nil {
			if sc := btSlots[i].Swap(nil); sc != nil {
				return sc
			}
		}
	}
	return btPool.Get().(*btScratch)
}

func putScratch(sc *btScratch) {
	if cap(sc.stack) <= maxSlotStack {
		for i := range btSlots {
			if btSlots[i].CompareAndSwap(nil, sc) {
				return
			}
		}
	}
	btPool.Put(sc)
}

const (
	// guessed marks a stack entry that was pushed as a guess, not as a
	// candidate of the longest-match chain.
	guessed = 1 << 31
	// windowMargin is how far from a window's end its tokens must end to
	// be taken: the last ones depend on the bytes after the window.
	windowMargin = 4
	// windowLen is the length of a window.
	windowLen = 32
	// workPerByte bounds the candidates tried per byte of a piece before the
	// search gives up for mergeLong. The costliest inputs measured (runs of
	// spaces broken at random, random text over two letters) need under 2,
	// with cold caches; a candidate costs some nanoseconds, mergeLong some
	// hundreds a byte, so giving up costs at most about as much again.
	workPerByte = 16
	windowWork  = 8
	// longTokenPause is how far the search goes without windows after one
	// whose tokens were long.
	longTokenPause = 256
	// skipFrom is the shortest candidate that the search checks with
	// firstValid rather than valid: all but single bytes.
	skipFrom = 2
)

// encode runs the search on piece (not empty) and leaves its tokens in
// sc.stack, some with the guessed bit set. It returns false if the search
// gave up because it was taking too long (no input measured comes near), or
// failed, which the argument in the file comment rules out; callers then
// fall back to mergeLong.
//
// The first time the search reaches an offset it tries two guesses before
// the longest-match chain. First, the token that last followed the token on
// top of the stack, if it matches the text there: on periodic text (a run of
// one character, a repeated word) that is nearly always right, and it spares
// the trie walk and the dead ends that longer candidates can lead into.
// Second, a window: the next windowLen bytes merged alone (mergeWindow),
// whose tokens, bar those ending near the window's end, are pushed at once
// when the first forms a valid pair with the top of the stack and none ends
// at a dead offset. They are the encoding of the text up to their end (fact
// 2: pairs inside the window are valid because they are adjacent in its
// encoding); on text of short tokens, such as random letters, this is much
// cheaper than pushing them one by one, and it avoids most dead ends. On
// text of longer tokens merging a window costs more than it saves, so after
// a window of long tokens, or one that fails, the search goes on without
// windows for a while. A guess that turns out wrong is popped like any
// token, and the longest-match chain is tried at its start, so the result
// does not depend on the guesses, only the work does.
func (bt *backtracker) encode(piece string, sc *btScratch) bool {
	return bt.search(piece, sc, workPerByte*len(piece)+1024)
}

// search is encode with a work limit: it gives up, returning false, once it
// has tried more than work candidates (a window counting as windowWork, and
// every pair tested as one).
func (bt *backtracker) search(piece string, sc *btScratch, work int) bool {
	n := len(piece)
	words := n/64 + 1
	if cap(sc.dead) < words {
		sc.dead = make([]uint64, words)
	}
	dead := sc.dead[:words]
	clear(dead)
	clear(sc.succ[:])
	stack := sc.stack[:0]
	pos := 0
	nextWindow, fails := 0, 0 // no window before offset nextWindow
	tok := uint32(noRank)     // the next candidate at pos; noRank: guess
	for {
		last := uint32(noRank)
		if len(stack) > 0 {
			last = stack[len(stack)-1] &^ guessed
		}
		if tok == noRank {
			if g := sc.succ[last&255]; last != noRank && g>>32 == uint64(last) {
				u := uint32(g)
				if l := int(bt.tokLen[u]); l <= n-pos && piece[pos:pos+l] == bt.token(u) {
					tok = u | guessed
				}
			}
			if tok == noRank && pos >= nextWindow {
				work -= windowWork
				if k := bt.window(piece, pos, last, dead, &sc.win); k > 0 {
					from := pos
					for _, u := range sc.win[:k] {
						if last != noRank {
							sc.succ[last&255] = uint64(last)<<32 | uint64(u)
						}
						stack = append(stack, u|guessed)
						pos += int(bt.tokLen[u])
						last = u
					}
					if pos == n {
						break
					}
					fails = 0
					if 2*(pos-from) > 5*k {
						// Tokens of 2.5 bytes or more: pushing them one by
						// one is cheaper. Look again later.
						nextWindow = pos + longTokenPause
					}
					continue
				}
				fails++
				nextWindow = pos + 4<<min(fails, 8)
			}
			if tok == noRank {
				tok = bt.longest(piece, pos)
			}
		}
		if work--; work < 0 {
			sc.stack = stack[:0]
			return false
		}
		t := tok &^ guessed
		fits := false
		if tok == t && last != noRank && bt.tokLen[t] >= skipFrom {
			// A candidate from the chain: skip the invalid ones in one
			// step. Where the search comes back to the same top token and
			// longest match, as in runs of one byte and on dead ends, that
			// replaces tens of pair tests by one look-up.
			var tests int
			t, tests = bt.firstValid(last, t)
			if work -= tests; t != noRank {
				tok = t
				end := pos + int(bt.tokLen[t])
				fits = dead[end>>6]&(1<<(end&63)) == 0
			}
		} else {
			end := pos + int(bt.tokLen[t])
			fits = dead[end>>6]&(1<<(end&63)) == 0 && (last == noRank || bt.valid(last, t))
		}
		if fits {
			stack = append(stack, tok)
			if last != noRank {
				sc.succ[last&255] = uint64(last)<<32 | uint64(t)
			}
			if pos += int(bt.tokLen[t]); pos == n {
				break
			}
			tok = noRank
			continue
		}
		switch {
		case tok&guessed != 0:
			tok = bt.longest(piece, pos)
		case t != noRank && bt.shorter[t] != noRank:
			tok = bt.shorter[t]
		case last == noRank:
			sc.stack = stack[:0]
			return false
		default:
			// Nothing fits at pos, so it is no boundary: go back to the
			// start of the top token and try its next candidate.
			dead[pos>>6] |= 1 << (pos & 63)
			tok = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			pos -= int(bt.tokLen[last])
		}
	}
	sc.stack = stack
	return true
}

// window merges the next windowLen bytes of piece from pos alone and
// returns how many of the tokens, left in win, can be pushed on top of last
// (noRank: none): those that end at least windowMargin bytes before the
// window's end (unless it ends the piece) and before any dead offset, if the
// first forms a valid pair with last.
func (bt *backtracker) window(piece string, pos int, last uint32, dead []uint64, win *[windowLen]uint32) int {
	w := min(len(piece)-pos, windowLen)
	k := bt.mergeWindow(piece[pos:pos+w], win)
	limit := pos + w
	if limit < len(piece) {
		limit -= windowMargin
	}
	end, m := pos, 0
	for ; m < k; m++ {
		e := end + int(bt.tokLen[win[m]])
		if e > limit || dead[e>>6]&(1<<(e&63)) != 0 {
			break
		}
		end = e
	}
	if m == 0 || last != noRank && !bt.valid(last, win[0]) {
		return 0
	}
	return m
}

// mergeWindow is mergeShort on token ids: it merges s (1 to windowLen
// bytes) alone, taking ranks from the split table, which is exact by fact 1,
// and leaves the tokens in win, returning their number.
//
// Parts are named by their start offset, and key[i] is rank<<6 | i for the
// pair of the part at i and the next, or more than any such value if there
// is none, so the least key is the lowest rank, leftmost.
func (bt *backtracker) mergeWindow(s string, win *[windowLen]uint32) int {
	const none = ^uint32(0)
	var (
		key  [windowLen]uint32
		tok  [windowLen]uint32
		next [windowLen + 1]uint8
		prev [windowLen]uint8
	)
	n := len(s)
	for i := 0; i < n; i++ {
		tok[i] = bt.byteTok[s[i]]
		next[i], prev[i] = uint8(i+1), uint8(i-1)
		key[i] = none
		if i+1 < n {
			if r := bt.bytePair[uint16(s[i])<<8|uint16(s[i+1])]; r != noRank {
				key[i] = r<<6 | uint32(i)
			}
		}
	}
	for i := n; i < windowLen; i++ {
		key[i] = none
	}
	for {
		// Four running minima, kept without branches: which key wins is
		// unpredictable, and with the min builtin, which compiles to
		// branches here, mergeWindow takes twice as long.
		m0, m1, m2, m3 := none, none, none, none
		for i := 0; i < windowLen; i += 4 {
			m0 = minNoBranch(m0, key[i])
			m1 = minNoBranch(m1, key[i+1])
			m2 = minNoBranch(m2, key[i+2])
			m3 = minNoBranch(m3, key[i+3])
		}
		m := minNoBranch(minNoBranch(m0, m1), minNoBranch(m2, m3))
		if m == none {
			break
		}
		i := int(m & 63)
		j := int(next[i])
		tok[i] = m >> 6
		key[j] = none
		nj := int(next[j])
		next[i] = uint8(nj)
		key[i] = none
		if nj < n {
			prev[nj] = uint8(i)
			if k := pairKey(tok[i], tok[nj]); bt.mayPair(k) {
				if r := bt.lookup(k); r != noRank {
					key[i] = r<<6 | uint32(i)
				}
			}
		}
		if i > 0 {
			p := int(prev[i])
			key[p] = none
			if k := pairKey(tok[p], tok[i]); bt.mayPair(k) {
				if r := bt.lookup(k); r != noRank {
					key[p] = r<<6 | uint32(p)
				}
			}
		}
	}
	k := 0
	for i := 0; i < n; i = int(next[i]) {
		win[k] = tok[i]
		k++
	}
	return k
}

// minNoBranch is min(a, b) computed without a branch.
func minNoBranch(a, b uint32) uint32 {
	lt := uint32((int64(a) - int64(b)) >> 63) // all ones if a < b
	return b ^ (a^b)&lt
}
