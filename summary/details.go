package summary

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// ServeDetails is [ServeDetailsContext] with [context.Background].
func ServeDetails(full []byte, fields string) ([]byte, error) {
	return ServeDetailsContext(context.Background(), full, fields)
}

// ServeDetailsContext serves a drill-down request: given the full object
// (the bytes the endpoint would return without summarization) and the
// request's fields parameter, it returns
//
//   - for "all": full itself, the same slice, unchanged;
//   - for a comma-separated list of top-level fields such as
//     "priceBreakdown,policies": an object holding exactly those fields,
//     whole, in the order of full, and nothing else;
//   - for dotted paths such as "guest.address.city", and paths through
//     arrays such as "rooms.id", mixed with top-level fields or not: the
//     part of full they name, with its nesting, as [Project] selects it
//     (object elements of a crossed array are kept, as {} when they hold
//     none of the paths; scalar elements are left out).
//
// Whatever the output holds whole (a field's value, a key) is its text in
// full, byte for byte (white space inside a value included), never decoded
// and encoded again. A name that is a top-level field of full is that
// field, even when it holds a dot. Spaces around names are ignored and
// repeated names count once; of duplicate keys the last one wins, at its
// own position. The caller must not summarize the result again: the client
// asked for it explicitly.
//
// The work is linear in the size of full and of fields, and stops soon
// after ctx ends (or at once when it has ended), with an error that wraps
// ctx.Err().
//
// Errors: [ErrInvalidJSON]; [ErrNotObject] when full is not an object (for
// "all" full is returned without being parsed); [*UnknownFieldError]
// (wrapping [ErrUnknownField]) when fields is empty or names a field, or
// starts a path with a field, that full lacks, listing the valid names;
// [*PathError] (wrapping [ErrInvalidPath]) for a path with an empty
// segment ("a..b", "a."); [*UnknownPathError] (wrapping [ErrUnknownPath])
// for a path whose top-level field exists but that names nothing below it,
// listing the top-level fields.
func ServeDetailsContext(ctx context.Context, full []byte, fields string) ([]byte, error) {
	if err := newStopper(ctx).check(); err != nil {
		return nil, err
	}
	names := parseFields(fields)
	if slices.Contains(names, FieldsAll) {
		return full, nil
	}
	// Build only what the names can reach, read as top-level fields and,
	// for those with dots, as paths.
	g := &pathTrie{}
	for _, name := range names {
		g.add([]string{name}, name)
		if segs := strings.Split(name, "."); len(segs) > 1 && !slices.Contains(segs, "") {
			g.add(segs, name)
		}
	}
	root, rawKeys, err := parseRaw(ctx, full, g)
	if err != nil {
		return nil, err
	}
	if root.kind != kindObject {
		return nil, fmt.Errorf("%w: drill-down needs the full object, got another JSON value", ErrNotObject)
	}
	top := make(map[string]bool, len(root.keys))
	for _, k := range root.keys {
		top[k] = true
	}
	t := &pathTrie{}
	var unknown []string
	for _, name := range names {
		if top[name] {
			t.add([]string{name}, name)
			continue
		}
		segs := strings.Split(name, ".")
		if len(segs) > 1 && slices.Contains(segs, "") {
			return nil, &PathError{Path: name, Reason: "has an empty segment"}
		}
		if len(segs) == 1 || !top[segs[0]] {
			unknown = append(unknown, name)
			continue
		}
		t.add(segs, name)
	}
	if len(names) == 0 || len(unknown) > 0 {
		valid, err := topLevel(ctx, full)
		if err != nil {
			return nil, err
		}
		return nil, &UnknownFieldError{Fields: unknown, Valid: valid}
	}
	pr := projector{st: newStopper(ctx), rawKeys: rawKeys}
	out, _, err := pr.append(make([]byte, 0, 64), root, t)
	if err != nil {
		return nil, err
	}
	if missed := t.misses(nil, false); len(missed) > 0 {
		valid, err := topLevel(ctx, full)
		if err != nil {
			return nil, err
		}
		return nil, &UnknownPathError{Paths: inOrder(missed, names), Available: valid}
	}
	return out, nil
}

// topLevel returns the top-level fields of data (see [topKeys]), for the
// errors that list them.
func topLevel(ctx context.Context, data []byte) ([]string, error) {
	n, err := parseShallow(ctx, data)
	if err != nil {
		return nil, err
	}
	return topKeys(n), nil
}

// projector writes drill-downs of a tree that parseRaw built.
type projector struct {
	st      *stopper
	rawKeys map[*node][][]byte // from parseRaw
}

// append appends to dst the part of n that the paths of t select, as
// [project] selects it, with every key and every value kept whole written
// as its raw text, and reports whether anything matched.
func (pr *projector) append(dst []byte, n *node, t *pathTrie) ([]byte, bool, error) {
	if err := pr.st.tick(); err != nil {
		return nil, false, err
	}
	switch n.kind {
	case kindObject:
		dst = append(dst, '{')
		matched := false
		rawKeys := pr.rawKeys[n]
		for i, k := range n.keys {
			c := t.children[k]
			if c == nil {
				continue
			}
			mark := len(dst)
			if matched {
				dst = append(dst, ',')
			}
			dst = append(dst, rawKeys[i]...)
			dst = append(dst, ':')
			if c.leaf {
				c.hit = true
				dst = append(dst, n.vals[i].raw...)
				matched = true
				continue
			}
			var ok bool
			var err error
			if dst, ok, err = pr.append(dst, n.vals[i], c); err != nil {
				return nil, false, err
			}
			if !ok {
				dst = dst[:mark]
				continue
			}
			matched = true
		}
		return append(dst, '}'), matched, nil
	case kindArray:
		if len(n.vals) == 0 {
			// An empty array holds every path vacuously.
			t.markHit()
			return append(dst, "[]"...), true, nil
		}
		dst = append(dst, '[')
		matched, first := false, true
		for _, v := range n.vals {
			if v.isScalar() {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			var ok bool
			var err error
			if dst, ok, err = pr.append(dst, v, t); err != nil {
				return nil, false, err
			}
			matched = matched || ok
		}
		return append(dst, ']'), matched, nil
	}
	return dst, false, nil
}

// parseFields splits a fields parameter into names, without blanks or
// repeats.
func parseFields(fields string) []string {
	var names []string
	seen := map[string]bool{}
	for f := range strings.SplitSeq(fields, ",") {
		f = strings.TrimSpace(f)
		if f != "" && !seen[f] {
			seen[f] = true
			names = append(names, f)
		}
	}
	return names
}
