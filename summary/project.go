package summary

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// pathTrie is a set of projection paths, one level per segment.
type pathTrie struct {
	leaf     bool // a path ends here: the whole value is kept
	hit      bool // a leaf that matched at least one value
	path     string
	children map[string]*pathTrie
}

// compilePaths builds the trie of paths and returns the paths without
// duplicates, in the order given.
func compilePaths(paths []string) (*pathTrie, []string, error) {
	root := &pathTrie{}
	var uniq []string
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		if p == "" {
			return nil, nil, &PathError{Path: p, Reason: "is empty"}
		}
		segs := strings.Split(p, ".")
		for _, s := range segs {
			if s == "" {
				return nil, nil, &PathError{Path: p, Reason: "has an empty segment"}
			}
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		uniq = append(uniq, p)
		root.add(segs, p)
	}
	return root, uniq, nil
}

// add adds the path of segments segs, written path.
func (t *pathTrie) add(segs []string, path string) {
	for _, s := range segs {
		t = t.child(s)
	}
	t.leaf = true
	t.path = path
}

// child returns the child of t for the segment s, added when missing.
func (t *pathTrie) child(s string) *pathTrie {
	c := t.children[s]
	if c == nil {
		if t.children == nil {
			t.children = map[string]*pathTrie{}
		}
		c = &pathTrie{}
		t.children[s] = c
	}
	return c
}

// merge adds the paths of o to t.
func (t *pathTrie) merge(o *pathTrie) {
	if o.leaf {
		t.leaf, t.path = true, o.path
	}
	for k, oc := range o.children {
		t.child(k).merge(oc)
	}
}

// misses appends the paths of the leaves below t that matched nothing.
// A leaf below another leaf (the "a.b" of "a" and "a.b") counts as matched
// when its ancestor did.
func (t *pathTrie) misses(dst []string, covered bool) []string {
	if t.leaf && !t.hit && !covered {
		dst = append(dst, t.path)
	}
	for _, c := range t.children {
		dst = c.misses(dst, covered || (t.leaf && t.hit))
	}
	return dst
}

// project returns the part of n that the paths of t select, and whether
// anything matched. Objects keep the selected keys in input order; arrays
// keep every object or array element, projected (possibly to {} or []),
// and leave scalar elements out; an empty array matches every path.
func project(st *stopper, n *node, t *pathTrie) (*node, bool, error) {
	if err := st.tick(); err != nil {
		return nil, false, err
	}
	switch n.kind {
	case kindObject:
		out := &node{kind: kindObject}
		for i, k := range n.keys {
			c := t.children[k]
			if c == nil {
				continue
			}
			if c.leaf {
				c.hit = true
				out.keys = append(out.keys, k)
				out.vals = append(out.vals, n.vals[i])
				continue
			}
			sub, ok, err := project(st, n.vals[i], c)
			if err != nil {
				return nil, false, err
			}
			if ok {
				out.keys = append(out.keys, k)
				out.vals = append(out.vals, sub)
			}
		}
		return out, len(out.keys) > 0, nil
	case kindArray:
		out := &node{kind: kindArray}
		matched := false
		for _, v := range n.vals {
			if v.isScalar() {
				continue
			}
			sub, ok, err := project(st, v, t)
			if err != nil {
				return nil, false, err
			}
			matched = matched || ok
			out.vals = append(out.vals, sub)
		}
		if len(n.vals) == 0 {
			// An empty array holds every path vacuously: "rooms.id" on
			// "rooms":[] is not an error.
			t.markHit()
			return out, true, nil
		}
		return out, matched, nil
	}
	return nil, false, nil
}

// markHit marks every leaf below t as matched.
func (t *pathTrie) markHit() {
	if t.leaf {
		t.hit = true
	}
	for _, c := range t.children {
		c.markHit()
	}
}

// projectNode applies paths to n and returns the projection and the paths
// (deduplicated, in the order given). A path that matches nothing is an
// [*UnknownPathError].
func projectNode(st *stopper, n *node, paths []string) (*node, []string, error) {
	t, uniq, err := compilePaths(paths)
	if err != nil {
		return nil, nil, err
	}
	if len(uniq) == 0 {
		return n, uniq, nil
	}
	out, _, err := project(st, n, t)
	if err != nil {
		return nil, nil, err
	}
	if out == nil { // a scalar root: nothing can match
		out = &node{kind: kindObject}
	}
	if missed := t.misses(nil, false); len(missed) > 0 {
		return nil, nil, &UnknownPathError{Paths: inOrder(missed, uniq), Available: topKeys(n)}
	}
	return out, uniq, nil
}

// inOrder sorts the paths s by their position in order.
func inOrder(s, order []string) []string {
	pos := make(map[string]int, len(order))
	for i, p := range order {
		pos[p] = i
	}
	slices.SortFunc(s, func(a, b string) int { return pos[a] - pos[b] })
	return s
}

// Project returns the fields of the JSON value data that paths name, with
// their nesting preserved, in the compact JSON form, and the paths
// themselves without duplicates.
//
// A path is a dot-separated list of field names: "status" selects a
// top-level field whole, "price.basePrice" one field of a nested object,
// "guest.address.city" one field two levels down. A path crosses arrays:
// on {"rooms":[{"id":1,"size":20},{"id":2}]}, "rooms.id" gives
// {"rooms":[{"id":1},{"id":2}]}. Object elements of a crossed array are
// kept (as {} when they hold none of the paths) so that the array keeps its
// length; scalar elements are left out; an empty array is kept empty and
// is no error. When data is itself an array, the
// paths apply to each element. A field name containing a dot cannot be
// addressed.
//
// The result is always a part of data: every field it holds is a field of
// data, with the same value; object keys keep the order of data, numbers
// keep their literal text, strings are re-encoded as encoding/json encodes
// them. With no paths the result is data, compacted.
//
// Errors: [ErrInvalidJSON] for data that is not one JSON value,
// [*PathError] (wrapping [ErrInvalidPath]) for a malformed path, and
// [*UnknownPathError] (wrapping [ErrUnknownPath]) listing every path that
// names nothing, with the top-level fields of data.
func Project(data []byte, paths []string) (json.RawMessage, []string, error) {
	return ProjectContext(context.Background(), data, paths)
}

// ProjectContext is [Project] that stops soon after ctx ends, with an error
// that wraps ctx.Err(). Its work is linear in the size of data and of
// paths.
func ProjectContext(ctx context.Context, data []byte, paths []string) (json.RawMessage, []string, error) {
	if err := newStopper(ctx).check(); err != nil {
		return nil, nil, err
	}
	t, uniq, err := compilePaths(paths)
	if err != nil {
		// Invalid JSON is reported first, as when the paths are valid.
		if _, jerr := parseShallow(ctx, data); jerr != nil {
			return nil, nil, jerr
		}
		return nil, nil, err
	}
	if len(uniq) == 0 {
		n, err := parse(ctx, data)
		if err != nil {
			return nil, nil, err
		}
		return appendJSON(nil, n), uniq, nil
	}
	// Build only what the paths reach.
	n, err := parseGuided(ctx, data, t)
	if err != nil {
		return nil, nil, err
	}
	out, _, err := project(newStopper(ctx), n, t)
	if err != nil {
		return nil, nil, err
	}
	if missed := t.misses(nil, false); len(missed) > 0 {
		available, err := topLevel(ctx, data)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, &UnknownPathError{Paths: inOrder(missed, uniq), Available: available}
	}
	if out == nil { // a scalar root: nothing can match, and missed is not empty
		out = &node{kind: kindObject}
	}
	return appendJSON(nil, out), uniq, nil
}

// projectLenient is [ProjectContext] for which a path that matches nothing
// is no error: it returns the projection of the paths that matched and the
// paths that did not, in the order given.
func projectLenient(ctx context.Context, data []byte, paths []string) (json.RawMessage, []string, error) {
	if err := newStopper(ctx).check(); err != nil {
		return nil, nil, err
	}
	t, uniq, err := compilePaths(paths)
	if err != nil {
		return nil, nil, err
	}
	n, err := parseGuided(ctx, data, t)
	if err != nil {
		return nil, nil, err
	}
	out, _, err := project(newStopper(ctx), n, t)
	if err != nil {
		return nil, nil, err
	}
	if out == nil { // a scalar root
		out = &node{kind: kindObject}
	}
	var missed []string
	if m := t.misses(nil, false); len(m) > 0 {
		missed = inOrder(m, uniq)
	}
	return appendJSON(nil, out), missed, nil
}

// ProjectValue is [Project] for a Go value: v is marshalled with
// encoding/json (structs through their JSON field names) and projected.
func ProjectValue(v any, paths []string) (json.RawMessage, []string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("summary: marshal the value to project: %w", err)
	}
	return Project(data, paths)
}
