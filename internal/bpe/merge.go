package bpe

import (
	"math"
	"sync"
)

const (
	noRank = math.MaxUint32
	// shortPiece is the longest piece merged with the quadratic scan on the
	// stack; longer pieces go to the backtracking search (backtrack.go),
	// which is linear, or to the heap if it cannot be used. The search is
	// faster than the scan from about 24 bytes on, but it needs tables
	// (about 80 ms and 11 MiB for o200k_base), built only once buildAfter
	// bytes of longer pieces were merged, and pieces of more than 48 bytes
	// are rare enough in ordinary text that most processes never build them.
	shortPiece = 48
	// midPiece is the shortest piece merged by the search once its tables
	// are built (once 64 KiB of longer pieces were merged; see buildAfter):
	// from there on the search is the faster.
	midPiece = 12
)

// mergeShort runs tiktoken's byte-pair merge on piece (len <= shortPiece)
// and leaves the token boundaries in starts[:n+1], returning n, the number of
// tokens. It repeatedly merges the adjacent pair with the lowest rank, the
// leftmost on ties, exactly as tiktoken does.
func (e *Encoding) mergeShort(piece string, starts *[shortPiece + 1]int32) int {
	var ranks [shortPiece]uint32
	n := len(piece)
	for i := 0; i <= n; i++ {
		starts[i] = int32(i)
	}
	for i := 0; i+1 < n; i++ {
		ranks[i] = e.pairRank(piece[i:])
	}
	// parts are starts[0..n-1], ranks[i] is the rank of merging part i and i+1.
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
		// merge part at with part at+1: drop boundary at+1.
		copy(starts[at+1:n], starts[at+2:n+1])
		copy(ranks[at+1:n-1], ranks[at+2:n])
		n--
		if at+1 < n {
			ranks[at] = e.rank(piece[starts[at]:starts[at+2]])
		} else {
			ranks[at] = noRank
		}
		if at > 0 {
			ranks[at-1] = e.rank(piece[starts[at-1]:starts[at+1]])
		}
	}
	return n
}

// longScratch is reused by mergeLong through a pool, so steady-state counting
// allocates nothing.
type longScratch struct {
	next, prev []int32  // linked list of live parts, by start offset
	pair       []uint32 // rank of merging part i with its successor
	heap       []uint64 // rank<<32 | start: the min is the lowest rank, leftmost
}

var scratchPool = sync.Pool{New: func() any { return new(longScratch) }}

// mergeLong is mergeShort for long pieces: the same merges in the same order,
// found with a 4-ary min-heap instead of a scan, so a piece of n bytes costs
// O(n log n) rather than O(n²). It returns the number of tokens and, when
// emit is non-nil, calls it with each token's bounds in order.
//
// Long pieces normally go to the faster backtracking search; mergeLong does
// them when the search cannot be used or gives up, and checks it in tests.
func (e *Encoding) mergeLong(piece string, emit func(start, end int)) int {
	sc := scratchPool.Get().(*longScratch)
	defer scratchPool.Put(sc)
	n := len(piece)
	sc.next = grow(sc.next, n)
	sc.prev = grow(sc.prev, n)
	sc.pair = growU(sc.pair, n)
	sc.heap = sc.heap[:0]
	next, prev, pair := sc.next, sc.prev, sc.pair
	for i := 0; i < n; i++ {
		next[i] = int32(i + 1) // n means "end"
		prev[i] = int32(i - 1)
		pair[i] = noRank
		if i+1 < n {
			if r := e.pairRank(piece[i:]); r != noRank {
				pair[i] = r
				sc.heap = append(sc.heap, uint64(r)<<32|uint64(i))
			}
		}
	}
	h := sc.heap
	heapify(h)
	count := n
	for len(h) > 0 {
		top := h[0]
		h = heapPop(h)
		i := int32(top & 0xffffffff)
		r := uint32(top >> 32)
		if pair[i] != r { // stale: part i died or its pair changed
			continue
		}
		// merge part i with its successor j.
		j := next[i]
		nj := next[j]
		next[i] = nj
		if int(nj) < n {
			prev[nj] = i
		}
		pair[j] = noRank
		count--
		// new pair (i, nj)
		pair[i] = noRank
		if int(nj) < n {
			end := n
			if nn := next[nj]; int(nn) < n {
				end = int(nn)
			}
			if r := e.rank(piece[i:end]); r != noRank {
				pair[i] = r
				h = heapPush(h, uint64(r)<<32|uint64(i))
			}
		}
		// new pair (prev, i)
		if p := prev[i]; p >= 0 {
			pair[p] = noRank
			if r := e.rank(piece[p:next[i]]); r != noRank {
				pair[p] = r
				h = heapPush(h, uint64(r)<<32|uint64(p))
			}
		}
	}
	sc.heap = h[:0]
	if emit != nil {
		for i := int32(0); int(i) < n; i = next[i] {
			emit(int(i), int(next[i]))
		}
	}
	return count
}

func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growU(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	return s[:n]
}

// A 4-ary min-heap of uint64 keys.

func heapify(h []uint64) {
	if len(h) < 2 {
		return // for an empty heap (len(h)-2)/4 rounds to index 0, which it lacks
	}
	for i := (len(h) - 2) / 4; i >= 0; i-- {
		siftDown(h, i)
	}
}

func heapPush(h []uint64, x uint64) []uint64 {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if h[p] <= x {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
	return h
}

func heapPop(h []uint64) []uint64 {
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	if last > 0 {
		siftDown(h, 0)
	}
	return h
}

func siftDown(h []uint64, i int) {
	x := h[i]
	n := len(h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if h[k] < h[m] {
				m = k
			}
		}
		if h[m] >= x {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}
