package summary

import (
	"slices"
)

// Fitting an automatic summary to its budget.
//
// Counting the whole summary after every field added would make the work
// quadratic in the number of fields. Instead, each candidate's cost is
// estimated once, by the exact count of the text it adds (its member in
// the summary and its path in meta.projectedFields), and fields are added
// in rank order while the sum of the estimates fits. Then the whole summary
// is counted exactly: when it fits, the slack that is left is filled the
// same way (at most maxPasses times); when it does not, a binary search
// over the fields added, in the order they were added, finds the longest
// run of them that fits. Every count is of a summary of at most the summary
// budget, so the work is linear in the number of candidates, apart from
// sorting them, plus a logarithmic number of counts of a bounded text.

const (
	// maxPasses bounds the rounds of estimating and counting.
	maxPasses = 3
	// minCost is below the cost of any field (`,"k":1` and `,"k"` take
	// more tokens): with less room than this, no field is tried.
	minCost = 4
	// maxProbes bounds the fields tried one by one at the end.
	maxProbes = 8
	// maxMisses ends a round after this many fields in a row did not fit:
	// by then the room left is smaller than the fields that come next.
	maxMisses = 1024
)

// fitter chooses the candidates of an automatic summary.
type fitter struct {
	j    *job
	cs   []candidate
	rank []int // the candidates that are not identity fields, best first
	base []int // the identity fields, always kept

	est     []int // estimated cost of each candidate; -1 before it is estimated
	wrapEst []int // estimated cost of opening each section's object; -1 before
	buf     []byte

	// Scratch space of render, indexed by section, cleared after use.
	whole     []bool
	wholeSubs []int
}

func newFitter(j *job, cs []candidate) *fitter {
	f := &fitter{j: j, cs: cs}
	for i, c := range cs {
		if c.identity {
			f.base = append(f.base, i)
		} else {
			f.rank = append(f.rank, i)
		}
	}
	slices.SortStableFunc(f.rank, func(a, b int) int { return cs[b].score - cs[a].score })
	n := len(j.root.keys)
	f.est = make([]int, len(cs))
	for i := range f.est {
		f.est[i] = -1
	}
	f.wrapEst = make([]int, n)
	for i := range f.wrapEst {
		f.wrapEst[i] = -1
	}
	f.whole = make([]bool, n)
	f.wholeSubs = make([]int, n)
	return f
}

// fit returns the candidates to keep, in no particular order.
func (f *fitter) fit() ([]int, error) {
	target := f.j.s.summaryTokens
	chosen := slices.Clone(f.base)
	fits, err := f.exact(chosen, target)
	if err != nil || fits < 0 {
		return chosen, err
	}
	slack := target - fits
	in := make([]bool, len(f.cs))
	opened := make([]bool, len(f.j.root.keys)) // sections with a nested field kept
	for _, i := range chosen {
		in[i] = true
		if c := f.cs[i]; c.sub >= 0 {
			opened[c.section] = true
		}
	}
	known := len(chosen) // chosen[:known] is known to fit
	probed := false      // a binary search found the longest run that fits
	for range maxPasses {
		room, added, misses := slack, 0, 0
		for _, i := range f.rank {
			if room < minCost || misses == maxMisses {
				break
			}
			if in[i] {
				continue
			}
			if err := f.j.st.tick(); err != nil {
				return nil, err
			}
			c := f.cs[i]
			cost := f.cost(i)
			if c.sub >= 0 && !opened[c.section] {
				cost += f.wrapCost(c.section)
			}
			if cost > room {
				misses++
				continue
			}
			misses = 0
			room -= cost
			in[i] = true
			if c.sub >= 0 {
				opened[c.section] = true
			}
			chosen = append(chosen, i)
			added++
		}
		if added == 0 {
			break
		}
		t, err := f.exact(chosen, target)
		if err != nil {
			return nil, err
		}
		if t >= 0 {
			known, slack = len(chosen), target-t
			continue
		}
		probed = true
		// Too many: the longest run of the fields added that fits.
		lo, hi := known, len(chosen)
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			t, err := f.exact(chosen[:mid], target)
			if err != nil {
				return nil, err
			}
			if t >= 0 {
				lo = mid
			} else {
				hi = mid
			}
		}
		chosen = chosen[:lo]
		break
	}
	if probed {
		return chosen, nil
	}
	// The estimates are close but not exact: try the best few fields left
	// one by one, by exact count.
	tries := 0
	for _, i := range f.rank {
		if tries == maxProbes || slack < minCost {
			break
		}
		if in[i] || f.cost(i) > slack+minCost {
			continue
		}
		tries++
		t, err := f.exact(append(chosen, i), target)
		if err != nil {
			return nil, err
		}
		if t >= 0 {
			in[i] = true
			chosen = append(chosen, i)
			slack = target - t
		}
	}
	return chosen, nil
}

// cost estimates the tokens candidate i adds to a summary: its member in
// the summary and its path in projectedFields.
func (f *fitter) cost(i int) int {
	if f.est[i] >= 0 {
		return f.est[i]
	}
	c := f.cs[i]
	key := f.j.root.keys[c.section]
	if c.sub >= 0 {
		key = f.j.root.vals[c.section].keys[c.sub]
	}
	b := append(f.buf[:0], ',')
	b = appendString(b, key)
	b = append(b, ':')
	b = appendJSON(b, c.value)
	b = append(b, ',')
	b = appendString(b, c.path)
	n := f.j.s.counter.Count(string(b))
	if c.sub < 0 && c.complete {
		// The section is whole: its name leaves the fields parameter
		// (unless that list is cut anyway).
		b = append(b[:0], ',')
		b = append(b, key...)
		n = max(n-f.j.s.counter.Count(string(b)), 1)
	}
	f.buf = b
	f.est[i] = n
	return n
}

// wrapCost estimates the tokens the object of a section adds to a summary
// around its first nested field.
func (f *fitter) wrapCost(section int) int {
	if f.wrapEst[section] >= 0 {
		return f.wrapEst[section]
	}
	b := append(f.buf[:0], ',')
	b = appendString(b, f.j.root.keys[section])
	b = append(b, ":{}"...)
	f.buf = b
	f.wrapEst[section] = f.j.s.counter.Count(string(b))
	return f.wrapEst[section]
}

// exact returns the exact count of the summary of the candidates chosen
// when it is at most target, or -1.
func (f *fitter) exact(chosen []int, target int) (int, error) {
	out, _, _, err := f.render(chosen)
	if err != nil {
		return 0, err
	}
	t, err := f.j.s.countUpTo(f.j.st, string(out), target)
	if err != nil || t > target {
		return -1, err
	}
	return t, nil
}

// render returns the marshalled summary of the candidates chosen (in any
// order), the summary object and its meta. It takes time in the number of
// candidates chosen and the names meta lists, not in the number of fields
// of the object.
func (f *fitter) render(chosen []int) ([]byte, *node, Meta, error) {
	idx := slices.Clone(chosen)
	slices.Sort(idx)
	sum, paths := build(f.j.root, f.cs, idx)

	root := f.j.root
	wholes := 0
	for _, i := range idx {
		c := f.cs[i]
		switch {
		case !c.complete:
		case c.sub < 0:
			f.whole[c.section] = true
			wholes++
		default:
			f.wholeSubs[c.section]++
			if f.wholeSubs[c.section] == len(root.vals[c.section].keys) {
				f.whole[c.section] = true
				wholes++
			}
		}
	}
	defer func() {
		for _, i := range idx {
			s := f.cs[i].section
			f.whole[s], f.wholeSubs[s] = false, 0
		}
	}()
	next := 0
	partial := nameList{n: len(root.keys) - wholes, at: func(int) string {
		for f.whole[next] {
			next++
		}
		next++
		return root.keys[next-1]
	}}
	meta, err := f.j.meta(paths, partial)
	if err != nil {
		return nil, nil, Meta{}, err
	}
	return marshalRaw(nil, sum, &meta), sum, meta, nil
}
