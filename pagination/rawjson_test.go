package pagination_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/pagination"
)

// rawElements decodes the elements of a JSON array with encoding/json, which
// keeps each element's bytes as written.
func rawElements(tb testing.TB, data []byte) []json.RawMessage {
	tb.Helper()
	var elems []json.RawMessage
	require.NoError(tb, json.Unmarshal(data, &elems))
	return elems
}

func collectJSON(tb testing.TB, p *pagination.Pager, data []byte, limits ...int) []pagination.Page[json.RawMessage] {
	tb.Helper()
	return collect(tb, func(req pagination.Request) (pagination.Page[json.RawMessage], error) {
		return p.PaginateJSON(data, req, listQuery)
	}, limits...)
}

func TestPaginateJSONPreservesBytes(t *testing.T) {
	p := newPager(t, nil, nil)
	tests := []struct {
		name string
		data string
	}{
		{name: "numbers keep their spelling", data: `[1.50, 2e3, -0, 12345678901234567890123, 1E-7]`},
		{name: "object keys keep their order and duplicates", data: `[{"b":1,"a":2,"b":3}]`},
		{name: "white space inside elements is kept", data: "[ { \"a\" :\n [ 1 ,2 ] } ,\t\"x\" ]"},
		{name: "escapes and unicode are kept", data: `["\u00e9\n\"q\"\\", "é", "<&>", "\ud83d\ude00"]`},
		{name: "nested arrays are one element each", data: `[[1,[2,[3]]],[],{}]`},
		{name: "strings with brackets and commas are one element", data: `["],[", "{,}", "\"]"]`},
		{name: "literals are elements", data: ` [true,false,null] `},
		{name: "an empty array is one empty page", data: "[\n]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			want := rawElements(t, data)
			pages := collectJSON(t, p, data, 2)
			var got []json.RawMessage
			for _, pg := range pages {
				got = append(got, pg.Items...)
			}
			assert.Equal(t, len(want), len(got))
			for i := range want {
				assert.Equal(t, string(want[i]), string(got[i]), "item %d is byte-for-byte the element", i)
			}
			assertPageInvariants(t, pages, len(want))
		})
	}

	t.Run("items do not alias the input", func(t *testing.T) {
		data := []byte(`["abc","def"]`)
		page, err := p.PaginateJSON(data, pagination.Request{}, listQuery)
		require.NoError(t, err)
		copy(data, bytes.Repeat([]byte("X"), len(data)))
		assert.Equal(t, []json.RawMessage{json.RawMessage(`"abc"`), json.RawMessage(`"def"`)}, page.Items)
	})
}

func TestPaginateJSONMatchesPaginate(t *testing.T) {
	counter := exactCounter(t)
	p := newPager(t, nil, &pagination.Options{Budget: budget.Budget{Threshold: 250, HardCap: 1000}, Counter: counter})
	items := records(120)
	data, err := json.Marshal(items)
	require.NoError(t, err)

	typed := collect(t, func(req pagination.Request) (pagination.Page[record], error) {
		return pagination.Paginate(p, items, req, listQuery)
	})
	raw := collectJSON(t, p, data)
	require.Equal(t, len(typed), len(raw), "typed and raw pages are cut alike")
	for i := range typed {
		tb, err := json.Marshal(typed[i])
		require.NoError(t, err)
		rb, err := json.Marshal(raw[i])
		require.NoError(t, err)
		assert.Equal(t, string(tb), string(rb), "page %d marshals the same", i)
		assert.LessOrEqual(t, counter.Count(string(rb)), 250)
	}
}

func TestPaginateJSONRejectsWhatIsNotAnArray(t *testing.T) {
	p := newPager(t, nil, nil)
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{name: "empty input", data: "", wantErr: "pagination: not a JSON array: the input is not valid JSON"},
		{name: "white space only", data: "  \n", wantErr: "pagination: not a JSON array: the input is not valid JSON"},
		{name: "an unterminated array", data: `[1,2`, wantErr: "pagination: not a JSON array: the input is not valid JSON"},
		{name: "a trailing comma", data: `[1,]`, wantErr: "pagination: not a JSON array: the input is not valid JSON"},
		{name: "two arrays", data: `[1][2]`, wantErr: "pagination: not a JSON array: the input is not valid JSON"},
		{name: "an object", data: `{"items":[1]}`, wantErr: "pagination: not a JSON array: the input is a JSON object, not an array"},
		{name: "a string", data: `"[1]"`, wantErr: "pagination: not a JSON array: the input is a JSON string, not an array"},
		{name: "null", data: `null`, wantErr: "pagination: not a JSON array: the input is a JSON null, not an array"},
		{name: "a number", data: ` 42 `, wantErr: "pagination: not a JSON array: the input is a JSON number, not an array"},
		{name: "a boolean", data: `true`, wantErr: "pagination: not a JSON array: the input is a JSON boolean, not an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is rejected", func(t *testing.T) {
			_, err := p.PaginateJSON([]byte(tt.data), pagination.Request{}, listQuery)
			assert.EqualError(t, err, tt.wantErr)
			assert.ErrorIs(t, err, pagination.ErrNotArray)
		})
	}
}

func TestPaginateJSONOversizeElement(t *testing.T) {
	p := newPager(t, nil, &pagination.Options{Budget: budget.Budget{Threshold: 100, HardCap: 300}})
	data := []byte(`["a","` + strings.Repeat("word ", 1000) + `","b"]`)
	first, err := p.PaginateJSON(data, pagination.Request{}, listQuery)
	require.NoError(t, err)
	require.Len(t, first.Items, 1)

	_, err = p.PaginateJSON(data, pagination.Request{Cursor: first.NextCursor}, listQuery)
	var tooLarge *pagination.ItemTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	assert.Equal(t, 1, tooLarge.Index)
}

// checkAgainstEncodingJSON pages data to the end and checks the outcome
// against encoding/json: data is accepted exactly when json.Valid accepts it
// and it is an array, and then the items are its elements byte for byte.
func checkAgainstEncodingJSON(t *testing.T, p *pagination.Pager, data []byte, limit int) {
	t.Helper()
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	isArray := json.Valid(data) && len(trimmed) > 0 && trimmed[0] == '['

	var got []json.RawMessage
	req := pagination.Request{Limit: limit}
	for pages := 0; ; pages++ {
		page, err := p.PaginateJSON(data, req, listQuery)
		if !isArray {
			require.ErrorIs(t, err, pagination.ErrNotArray, "json.Valid=%v", json.Valid(data))
			return
		}
		require.NoError(t, err)
		got = append(got, page.Items...)
		if !page.Meta.HasMore {
			break
		}
		require.LessOrEqual(t, pages, page.Meta.TotalCount, "pagination does not end")
		req.Cursor = page.NextCursor
	}
	want := rawElements(t, data)
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.Equal(t, string(want[i]), string(got[i]), "item %d", i)
	}
}

func TestPaginateJSONAcceptsWhatJSONValidAccepts(t *testing.T) {
	p := newPager(t, nil, &pagination.Options{Budget: budget.Budget{Threshold: 100, HardCap: 100000}})
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deepObj := func(n int) string {
		return "[" + strings.Repeat(`{"a":`, n-1) + "1" + strings.Repeat("}", n-1) + "]"
	}
	inputs := []string{
		`[]`, ` [ ] `, `[1]`, `[-0]`, `[-]`, `[01]`, `[1.]`, `[.5]`, `[1e]`, `[1e+]`, `[1E-2]`, `[-1.5e+10]`,
		`[tru]`, `[true]`, `[truex]`, `[nul]`, `[null,]`, `[,]`, `[1,,2]`, `[1 2]`,
		`["a]`, `["\x"]`, `["\u12"]`, `["\u12G4"]`, `["\u12aF"]`, "[\"\x01\"]", "[\"\xff\xfe\"]", `["\/"]`,
		`[{}]`, `[{"a"}]`, `[{"a":}]`, `[{"a":1,}]`, `[{"a":1 "b":2}]`, `[{1:2}]`, `[{"a":1}}]`, `[[]]]`,
		`[1]x`, `[1] `, "[1]\n", `{"a":[1]}`, `"[1]"`, `nul`, `null`, "\v[1]", `[1]` + "\x00",
		deep(9999), deep(10000), deep(10001), deepObj(9999), deepObj(10000),
	}
	for _, in := range inputs {
		name := in
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		t.Run("input "+name+" is judged as encoding/json judges it", func(t *testing.T) {
			checkAgainstEncodingJSON(t, p, []byte(in), 2)
		})
	}
}
