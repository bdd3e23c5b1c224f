package pagination

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/rawjson"
)

// PaginateJSON returns the page that req asks for of the JSON array data,
// bound to q, without decoding the elements into Go values.
//
// Each item of the page is a [json.RawMessage] holding the bytes of one
// element of data exactly as they appear there (white space inside the
// element included; a copy, so data may be reused once PaginateJSON
// returns). Marshalling the page compacts them as encoding/json compacts
// every RawMessage, and that compact form is what the budget counts.
// Leading and trailing white space around data is allowed.
//
// data is validated and split in one pass, accepting exactly what
// json.Valid accepts, so the cost is linear in its length; only the elements of the requested page are copied,
// marshalled and counted. Errors are those of [Paginate], plus
// [ErrNotArray] when data is not valid JSON or not an array (JSON null
// included).
func (p *Pager) PaginateJSON(data []byte, req Request, q cursor.Binding) (Page[json.RawMessage], error) {
	limit, pos, err := p.start(req, &q)
	if err != nil {
		return Page[json.RawMessage]{}, err
	}
	window, total, err := splitArray(data, pos.offset, limit)
	if err != nil {
		return Page[json.RawMessage]{}, err
	}
	resp, err := page(context.Background(), p, window, total, pos, &q)
	if err != nil {
		return Page[json.RawMessage]{}, err
	}
	// The window aliases data: copy the page's items into one block.
	n := 0
	for _, it := range resp.Items {
		n += len(it)
	}
	block := make([]byte, 0, n)
	for i, it := range resp.Items {
		start := len(block)
		block = append(block, it...)
		resp.Items[i] = block[start:len(block):len(block)]
	}
	return resp, nil
}

// splitArray returns at most limit elements of the JSON array data, starting
// at element from, as subslices of data, and the number of elements in the
// array. It validates data in the same pass, accepting exactly what
// json.Valid accepts.
func splitArray(data []byte, from, limit int) ([]json.RawMessage, int, error) {
	i := rawjson.Space(data, 0)
	if i == len(data) {
		return nil, 0, errNotJSON
	}
	if data[i] != '[' {
		if !rawjson.Valid(data) {
			return nil, 0, errNotJSON
		}
		return nil, 0, fmt.Errorf("%w: the input is a JSON %s, not an array", ErrNotArray, rawjson.KindOf(data[i]))
	}
	var window []json.RawMessage
	total := 0
	it, _ := rawjson.Open(data, i)
	for item, ok := it.Next(); ok; item, ok = it.Next() {
		if total >= from && len(window) < limit {
			window = append(window, data[item.Start:item.End:item.End])
		}
		total++
	}
	// Past the last element, Pos is the closing bracket: only white space
	// may follow it.
	if it.Err() || rawjson.Space(data, it.Pos()+1) != len(data) {
		return nil, 0, errNotJSON
	}
	return window, total, nil
}

var errNotJSON = fmt.Errorf("%w: the input is not valid JSON", ErrNotArray)
