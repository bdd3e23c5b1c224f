package summary

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// TopN keeps the best N elements of an array by a score field, as the
// API-to-MCP gateway keeps the top 3 traits by accuracy with accuracy >= 50:
//
//	summary.TopN{Path: "traits", Score: "accuracy", N: 3, Min: 50}
//
// The zero value is not usable: Path, Score and N must be set. TopN is a
// plain value, safe to copy and share.
type TopN struct {
	// Path is the dotted path of the array, as in [Project] (it may cross
	// arrays: "animals.traits" applies to the traits of every animal).
	Path string
	// Score is the field of each element that holds its score, a JSON
	// number (or a string holding one). Elements without it are left out.
	Score string
	// N is the largest number of elements kept. Must be > 0.
	N int
	// Min is the lowest score kept: elements scoring below it are left out.
	// The zero value keeps every non-negative score.
	Min float64
}

func (r TopN) validate() error {
	switch {
	case r.Path == "" || strings.HasPrefix(r.Path, ".") || strings.HasSuffix(r.Path, ".") || strings.Contains(r.Path, ".."):
		return fmt.Errorf("%w: TopN.Path %q must be a dotted path such as \"traits\"", ErrInvalidOptions, r.Path)
	case r.Score == "":
		return fmt.Errorf("%w: TopN.Score is empty; name the field of each element that holds its score", ErrInvalidOptions)
	case r.N <= 0:
		return fmt.Errorf("%w: TopN.N %d must be > 0", ErrInvalidOptions, r.N)
	case math.IsNaN(r.Min):
		return fmt.Errorf("%w: TopN.Min must be a number", ErrInvalidOptions)
	}
	return nil
}

// Top returns the best n items by score, best first (ties keep their input
// order), leaving out items that have no score or score below minScore, and the
// number of items left out. items is not modified. n <= 0 keeps none.
func Top[T any](items []T, n int, minScore float64, score func(T) (float64, bool)) (kept []T, omitted int) {
	kept, omitted, _ = top(nil, items, n, minScore, score)
	return kept, omitted
}

// scored is an element of a list with its score.
type scored struct {
	i int
	s float64
}

// worseFirst is a heap of scored elements whose top is the worst: the
// lowest score, or of equal scores the last in input order.
type worseFirst []scored

func (h worseFirst) Len() int { return len(h) }
func (h worseFirst) Less(a, b int) bool {
	return h[a].s < h[b].s || h[a].s == h[b].s && h[a].i > h[b].i
}
func (h worseFirst) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *worseFirst) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *worseFirst) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// top is [Top] that stops when st says so. It keeps the n best in a heap,
// so its work is m log n for m items.
func top[T any](st *stopper, items []T, n int, minScore float64, score func(T) (float64, bool)) (kept []T, omitted int, err error) {
	if n <= 0 {
		return []T{}, len(items), nil
	}
	h := make(worseFirst, 0, min(n, len(items)))
	for i, it := range items {
		if err := st.tick(); err != nil {
			return nil, 0, err
		}
		s, has := score(it)
		if !has || math.IsNaN(s) || s < minScore {
			continue
		}
		switch {
		case len(h) < n:
			heap.Push(&h, scored{i, s})
		case s > h[0].s: // a later equal score is never better
			h[0] = scored{i, s}
			heap.Fix(&h, 0)
		}
	}
	slices.SortFunc(h, func(a, b scored) int {
		if c := cmp.Compare(b.s, a.s); c != 0 {
			return c
		}
		return a.i - b.i
	})
	kept = make([]T, len(h))
	for j, sc := range h {
		kept[j] = items[sc.i]
	}
	return kept, len(items) - len(kept), nil
}

// applyTopN returns a copy of n in which the arrays that r names hold only
// their top elements, and adds the number left out to omitted[r.Path]. The
// copy shares unchanged subtrees with n. reduced collects the new arrays.
func applyTopN(st *stopper, n *node, segs []string, r TopN, omitted map[string]int, reduced map[*node]bool) (*node, error) {
	if err := st.tick(); err != nil {
		return nil, err
	}
	switch {
	case n.kind == kindArray && len(segs) > 0:
		out := &node{kind: kindArray, vals: make([]*node, len(n.vals))}
		for i, v := range n.vals {
			var err error
			if out.vals[i], err = applyTopN(st, v, segs, r, omitted, reduced); err != nil {
				return nil, err
			}
		}
		return out, nil
	case n.kind == kindObject && len(segs) > 0:
		i := slices.Index(n.keys, segs[0])
		if i < 0 {
			return n, nil
		}
		out := &node{kind: kindObject, keys: n.keys, vals: slices.Clone(n.vals)}
		var err error
		if out.vals[i], err = applyTopN(st, n.vals[i], segs[1:], r, omitted, reduced); err != nil {
			return nil, err
		}
		return out, nil
	case n.kind == kindArray: // the path ends at this array
		kept, dropped, err := top(st, n.vals, r.N, r.Min, func(v *node) (float64, bool) {
			s := v.get(r.Score)
			if s == nil || (s.kind != kindNumber && s.kind != kindString) {
				return 0, false
			}
			f, err := strconv.ParseFloat(s.text(), 64)
			return f, err == nil
		})
		if err != nil {
			return nil, err
		}
		out := &node{kind: kindArray, vals: kept}
		omitted[r.Path] += dropped
		reduced[out] = true
		return out, nil
	}
	return n, nil
}
