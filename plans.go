package ctxfit

import (
	"container/list"
	"strconv"
	"sync"

	"github.com/ctxfit/ctxfit/chunk"
)

// A text's chunk plan is where each of its chunks ends. The first response
// to a text must make it (it says how many chunks there are), which costs
// an exact count of the whole text; the Guard keeps recent plans, keyed by
// the text's content, so that the same text asked for again, by anyone,
// and every continuation of it cost only the chunk they send.

// plan is the chunk plan of a text.
type plan struct {
	ends  []int // offsets in the text where chunks end, ascending
	lines int   // lines of the text
	kind  chunk.Kind
}

// chunkAt returns the span of the chunk starting at at, if at is where a
// chunk of the plan starts.
func (p *plan) chunkAt(at int) (chunk.Span, bool) {
	lo, hi := 0, len(p.ends)
	for lo < hi { // the first end after at
		m := int(uint(lo+hi) >> 1)
		if p.ends[m] <= at {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(p.ends) || lo > 0 && p.ends[lo-1] != at || lo == 0 && at != 0 {
		return chunk.Span{}, false
	}
	return chunk.Span{Start: at, End: p.ends[lo]}, true
}

// planKey names the plan of the text data[r.start:r.end] of the snapshot
// id, cut in r's form with chunks of limit tokens by the counter of
// encoding.
func planKey(id string, r ref, limit int, encoding string) string {
	b := make([]byte, 0, len(id)+len(encoding)+40)
	b = append(b, id...)
	for _, v := range [...]int64{r.start, r.end, int64(r.form), int64(limit)} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
	}
	b = append(b, ' ')
	return string(append(b, encoding...))
}

// plans keeps the most recently used plans, up to maxPlanEnds chunk ends
// in all.
type plans struct {
	mu    sync.Mutex
	byKey map[string]*list.Element
	order *list.List // of *planEntry, most recent first
	ends  int
}

type planEntry struct {
	key string
	p   *plan
}

// maxPlanEnds bounds the chunk ends the Guard keeps: 8 bytes each, 2 MiB.
const maxPlanEnds = 256 << 10

func newPlans() *plans { return &plans{byKey: map[string]*list.Element{}, order: list.New()} }

func (c *plans) get(key string) *plan {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*planEntry).p
}

func (c *plans) put(key string, p *plan) {
	if len(p.ends) > maxPlanEnds/4 {
		return // a plan that would push out most others is made again
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&planEntry{key: key, p: p})
	c.ends += len(p.ends)
	for c.ends > maxPlanEnds {
		last := c.order.Back()
		e := last.Value.(*planEntry)
		c.order.Remove(last)
		delete(c.byKey, e.key)
		c.ends -= len(e.p.ends)
	}
}
