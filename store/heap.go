package store

// indexedHeap is a binary min-heap (by less) that tells each element its
// position through at, so that an element can be removed or fixed in
// O(log n) wherever it is. The zero value is not usable: set less and at.
type indexedHeap[T any] struct {
	items []T
	less  func(a, b T) bool
	at    func(x T, i int) // records x's index; -1 once it is removed
}

func (h *indexedHeap[T]) len() int { return len(h.items) }

// top returns the least element; the heap must not be empty.
func (h *indexedHeap[T]) top() T { return h.items[0] }

func (h *indexedHeap[T]) push(x T) {
	h.items = append(h.items, x)
	h.at(x, len(h.items)-1)
	h.up(len(h.items) - 1)
}

// remove removes the element at index i.
func (h *indexedHeap[T]) remove(i int) {
	n := len(h.items) - 1
	x := h.items[i]
	if i != n {
		h.swap(i, n)
	}
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	if i != n && !h.down(i) {
		h.up(i)
	}
	h.at(x, -1)
}

// fix restores the order after the element at index i changed.
func (h *indexedHeap[T]) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *indexedHeap[T]) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.at(h.items[i], i)
	h.at(h.items[j], j)
}

func (h *indexedHeap[T]) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(h.items[j], h.items[i]) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

// down moves the element at i0 down and reports whether it moved.
func (h *indexedHeap[T]) down(i0 int) bool {
	i, n := i0, len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			j = r
		}
		if !h.less(h.items[j], h.items[i]) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}
