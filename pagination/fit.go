package pagination

import (
	"context"
	"fmt"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/cursor"
)

// maxEstimatedProbes is how many exact counts are steered by the estimate
// before the search falls back to bisection.
const maxEstimatedProbes = 4

// fitter chooses how many of n candidate items go on a page.
//
// The estimated token count of a page of k items is
//
//	envelope(k) + ratio × (tokens of the k items + (k-1) × join)
//
// where envelope(k) is the exact count of the page with no items (with a
// cursor unless the page is final); join is what a comma between two items
// adds, measured once on the first candidates (usually 1, or less when the
// comma merges with the brackets around it, as in "},{"); and ratio
// starts at 1 and is refitted after every exact count of a page, which
// absorbs what remains of the tokens that merge or split across item
// boundaries.
type fitter struct {
	p      *Pager
	ctx    context.Context
	n      int // candidates: the items from pos.offset on, at most the limit
	total  int // items in the whole list
	pos    position
	q      *cursor.Binding
	encode func(i int) ([]byte, error) // JSON of candidate i

	items [][]byte // JSON of the candidates encoded so far
	cum   []int    // cum[i]: summed token counts of items[:i]; len(items)+1 entries
	buf   []byte   // the page being counted

	envFinal, envMore int     // envelope tokens without and with a cursor
	join              float64 // tokens a comma between two items adds
	ratio             float64 // page tokens per estimated item token
}

// maxJoinSample bounds the bytes of the leading candidates on which join is
// measured; next to larger items the join is too small a part of the page
// to matter.
const maxJoinSample = 1024

// fit returns the number of candidates on the page and the cursor that
// follows it ("" when the page is final).
func (f *fitter) fit() (int, string, error) {
	if f.n == 0 {
		return 0, "", nil
	}
	f.items = make([][]byte, 0, f.n)
	f.cum = append(make([]int, 0, f.n+1), 0)
	f.ratio, f.join = 1, 1
	if err := f.envelopes(); err != nil {
		return 0, "", err
	}
	if err := f.measureJoin(); err != nil {
		return 0, "", err
	}
	threshold, hardCap := f.p.budget.Threshold, f.p.budget.HardCap

	// lo: most items known to fit (0: none yet); hi: fewest known not to.
	lo, hi := 0, f.n+1
	var loCursor string
	oneCount, oneCursor := -1, ""
	k, err := f.largest(lo, hi)
	if err != nil {
		return 0, "", err
	}
	k = max(k, 1)
	for probes := 1; ; probes++ {
		if err := f.ctx.Err(); err != nil {
			return 0, "", fmt.Errorf("pagination: %w", err)
		}
		next, count, err := f.count(k)
		if err != nil {
			return 0, "", err
		}
		if k == 1 {
			oneCount, oneCursor = count, next
		}
		if count <= threshold {
			lo, loCursor = k, next
		} else {
			hi = k
		}
		if lo+1 >= hi {
			break
		}
		if count > hardCap || probes >= maxEstimatedProbes {
			k = lo + (hi-lo)/2 // the count is not exact, or the estimate drags on
			continue
		}
		f.refit(k, count)
		if k, err = f.largest(lo, hi); err != nil {
			return 0, "", err
		}
		if k == lo {
			if lo > 0 {
				break // the estimate sees no room for another item
			}
			k = 1
		}
	}
	if lo > 0 {
		return lo, loCursor, nil
	}
	// Even one item is over the threshold: it goes alone on its page, unless
	// that page is over the hard cap too.
	if oneCount > hardCap {
		if err := f.ensure(1); err != nil {
			return 0, "", err
		}
		f.buf = appendPage(f.buf[:0], f.items[:1], oneCursor, f.meta(1))
		return 0, "", &ItemTooLargeError{Index: f.pos.offset, Tokens: f.p.counter.Count(string(f.buf)), HardCap: hardCap}
	}
	return 1, oneCursor, nil
}

// estimate returns the estimated token count of a page of the first k
// candidates, which must be counted, with a cursor when withCursor is set.
func (f *fitter) estimate(k int, withCursor bool) float64 {
	env := f.envFinal
	if withCursor {
		env = f.envMore
	}
	return float64(env) + f.ratio*f.units(k)
}

// units returns the estimated item tokens of a page of the first k
// candidates, which must be counted.
func (f *fitter) units(k int) float64 {
	return max(float64(f.cum[k])+float64(k-1)*f.join, 1)
}

// largest returns the largest k in (lo, hi) whose estimate is within the
// threshold, or lo when there is none. It encodes and counts candidates only
// as far as the estimate needs.
func (f *fitter) largest(lo, hi int) (int, error) {
	threshold := float64(f.p.budget.Threshold)
	best := lo
	for k := lo + 1; k < hi; k++ {
		if err := f.ensure(k); err != nil {
			return 0, err
		}
		if f.estimate(k, false) > threshold {
			break // the estimate only grows with k
		}
		if f.estimate(k, f.hasMore(k)) <= threshold {
			best = k
		}
	}
	return best, nil
}

// refit sets the ratio so that the estimate of a page of k candidates equals
// its exact count.
func (f *fitter) refit(k, count int) {
	env := f.envFinal
	if f.hasMore(k) {
		env = f.envMore
	}
	f.ratio = min(max(float64(count-env)/f.units(k), 0.1), 10)
}

// ensure encodes and counts the first k candidates. Each candidate is counted
// up to the threshold only: one that is over it cannot share a page anyway.
func (f *fitter) ensure(k int) error {
	for i := len(f.items); i < k; i++ {
		b, err := f.encode(i)
		if err != nil {
			return fmt.Errorf("pagination: item %d: %w", f.pos.offset+i, err)
		}
		f.items = append(f.items, b)
		t := budget.CountUpTo(f.p.counter, string(b), f.p.budget.Threshold)
		f.cum = append(f.cum, f.cum[i]+t)
	}
	return nil
}

// measureJoin sets join from the first candidates, as many as make up
// maxJoinSample bytes (at least two): their count when joined with commas,
// less their separate counts, per comma.
func (f *fitter) measureJoin() error {
	size := 0
	for m := 1; m <= f.n; m++ {
		if err := f.ensure(m); err != nil {
			return err
		}
		size += len(f.items[m-1]) + 1
		if size > maxJoinSample || m == f.n {
			if m < 2 {
				return nil // a join cannot be measured, or does not matter
			}
			f.buf = appendJoined(f.buf[:0], f.items[:m])
			j := float64(f.p.counter.Count(string(f.buf))-f.cum[m]) / float64(m-1)
			f.join = min(max(j, -2), 4)
			return nil
		}
	}
	return nil
}

func appendJoined(dst []byte, items [][]byte) []byte {
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, it...)
	}
	return dst
}

func (f *fitter) hasMore(k int) bool { return f.pos.offset+k < f.total }

func (f *fitter) meta(k int) Meta {
	return Meta{TotalCount: f.total, PageSize: k, HasMore: f.hasMore(k)}
}

// envelopes counts the page with no items, without a cursor and, unless the
// list ends within the candidates, with one.
func (f *fitter) envelopes() error {
	f.buf = appendPage(f.buf[:0], nil, "", Meta{TotalCount: f.total, PageSize: f.n})
	f.envFinal = f.p.counter.Count(string(f.buf))
	f.envMore = f.envFinal
	if !f.hasMore(0) {
		return nil
	}
	c, err := f.cursor(0) // a cursor as long as the real ones, give or take a byte
	if err != nil {
		return err
	}
	f.buf = appendPage(f.buf[:0], nil, c, Meta{TotalCount: f.total, PageSize: f.n, HasMore: true})
	f.envMore = f.p.counter.Count(string(f.buf))
	return nil
}

// cursor returns the cursor that follows a page of k candidates, or "" when
// that page is final.
func (f *fitter) cursor(k int) (string, error) {
	if !f.hasMore(k) {
		return "", nil
	}
	c, err := f.p.codec.Encode(cursor.Payload{
		Kind:     cursor.KindPage,
		Offset:   int64(f.pos.offset + k),
		Index:    f.pos.index + 1,
		Order:    f.q.Order,
		Filters:  f.q.Filters,
		Scope:    f.q.Scope,
		Subject:  f.q.Subject,
		Snapshot: f.q.Snapshot,
	})
	if err != nil {
		return "", fmt.Errorf("pagination: issuing the next cursor: %w", err)
	}
	return c, nil
}

// count builds the page of the first k candidates with its cursor and counts
// it exactly; a count above the hard cap is only known to be above it.
func (f *fitter) count(k int) (string, int, error) {
	if err := f.ensure(k); err != nil {
		return "", 0, err
	}
	next, err := f.cursor(k)
	if err != nil {
		return "", 0, err
	}
	f.buf = appendPage(f.buf[:0], f.items[:k], next, f.meta(k))
	return next, budget.CountUpTo(f.p.counter, string(f.buf), f.p.budget.HardCap), nil
}
