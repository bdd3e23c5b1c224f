package rawjson

// Item is one element of an array or one member of an object, as spans of
// the data it was read from: the whole item is data[Start:End]. For a
// member, the key (with its quotes) is data[Start:KeyEnd] and the value
// data[Value:End]; for an element, KeyEnd and Value equal Start.
type Item struct {
	Start, KeyEnd, Value, End int
}

// Iter walks the elements of an array or the members of an object, from
// its start or from any item a previous Iter reached. Each item is
// validated as it is read, so walking k items costs what they hold, not
// what the container holds.
//
// The zero Iter is exhausted. An Iter is used by one goroutine.
type Iter struct {
	data   []byte
	object bool
	pos    int // the next item's start, or the closing bracket
	done   bool
	bad    bool
	scan   scanner
	buf    [32]byte
}

// Open returns an Iter over the container that starts at data[start] ('['
// or '{'), and false when there is none there.
func Open(data []byte, start int) (*Iter, bool) {
	if start < 0 || start >= len(data) || (data[start] != '[' && data[start] != '{') {
		return &Iter{done: true, bad: true}, false
	}
	return At(data, Space(data, start+1), data[start] == '{'), true
}

// At returns an Iter over a container (an object when object is set, else
// an array) whose next item starts at data[pos], or whose closing bracket
// is at data[pos]: a position [Iter.Pos] returned.
func At(data []byte, pos int, object bool) *Iter {
	it := &Iter{data: data, object: object, pos: pos}
	it.scan = scanner{data: data, stack: it.buf[:0]}
	if pos < 0 || pos > len(data) {
		it.done, it.bad = true, true
	}
	return it
}

// Next returns the next item and true, or false when the container is
// exhausted or malformed (see [Iter.Err]).
func (it *Iter) Next() (Item, bool) {
	if it.done {
		return Item{}, false
	}
	data, i := it.data, it.pos
	close := byte(']')
	if it.object {
		close = '}'
	}
	if i < len(data) && data[i] == close {
		it.done = true
		return Item{}, false
	}
	item := Item{Start: i, KeyEnd: i, Value: i}
	if it.object {
		if i >= len(data) || data[i] != '"' {
			return it.fail()
		}
		end, ok := stringEnd(data, i)
		if !ok {
			return it.fail()
		}
		item.KeyEnd = end
		v, ok := key(data, i)
		if !ok {
			return it.fail()
		}
		item.Value = v
		i = v
	}
	end, ok := it.scan.value(i, 1)
	if !ok {
		return it.fail()
	}
	item.End = end
	j := Space(data, end)
	switch {
	case j < len(data) && data[j] == ',':
		j = Space(data, j+1)
		if j < len(data) && data[j] == close {
			return it.fail() // a trailing comma
		}
	case j < len(data) && data[j] == close:
	default:
		return it.fail()
	}
	it.pos = j
	return item, true
}

func (it *Iter) fail() (Item, bool) {
	it.done, it.bad = true, true
	return Item{}, false
}

// Pos returns where the next item starts or, once every item has been read,
// the index of the closing bracket.
func (it *Iter) Pos() int { return it.pos }

// Err reports whether the walk stopped at malformed JSON.
func (it *Iter) Err() bool { return it.bad }
