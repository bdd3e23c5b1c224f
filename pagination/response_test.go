package pagination_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/pagination"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// cursorValue matches a nextCursor string, which the golden files replace
// with a placeholder so that they do not depend on the cursor format.
var cursorValue = regexp.MustCompile(`"nextCursor":"[A-Za-z0-9_-]+"`)

func TestJSONShapeGolden(t *testing.T) {
	p := newPager(t, nil, nil)
	tests := []struct {
		name string
		page func() (any, error)
	}{
		{
			name: "first_page",
			page: func() (any, error) {
				return pagination.Paginate(p, records(5), pagination.Request{Limit: 2}, listQuery)
			},
		},
		{
			name: "whole_list",
			page: func() (any, error) {
				return pagination.Paginate(p, records(3), pagination.Request{}, listQuery)
			},
		},
		{
			name: "empty_list",
			page: func() (any, error) {
				return pagination.Paginate(p, []record(nil), pagination.Request{}, listQuery)
			},
		},
		{
			name: "raw_json_page",
			page: func() (any, error) {
				return p.PaginateJSON([]byte(`[ {"b": 1, "a": [1.50, 2e3]} , "x<y" , null,true ]`), pagination.Request{Limit: 3}, listQuery)
			},
		},
	}
	for _, tt := range tests {
		t.Run("the "+tt.name+" matches its golden file", func(t *testing.T) {
			page, err := tt.page()
			require.NoError(t, err)
			got, err := json.Marshal(page)
			require.NoError(t, err)
			got = cursorValue.ReplaceAll(got, []byte(`"nextCursor":"<cursor>"`))
			// The golden file holds the wire form, compact, as counted.
			got = append(got, '\n')

			path := filepath.Join("testdata", "golden", tt.name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -update to create the golden file")
			assert.Equal(t, string(want), string(got))
		})
	}
}

func TestMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		page any
		want string
	}{
		{
			name: "the zero page has empty items and a null cursor",
			page: pagination.Page[int]{},
			want: `{"items":[],"nextCursor":null,"meta":{"totalCount":0,"pageSize":0,"hasMore":false}}`,
		},
		{
			name: "a page with a cursor writes it as a string",
			page: pagination.Page[int]{Items: []int{1, 2}, NextCursor: "abc", Meta: pagination.Meta{TotalCount: 9, PageSize: 2, HasMore: true}},
			want: `{"items":[1,2],"nextCursor":"abc","meta":{"totalCount":9,"pageSize":2,"hasMore":true}}`,
		},
		{
			name: "strings are escaped as encoding/json escapes them, invalid UTF-8 as \\ufffd on every toolchain",
			page: pagination.Page[string]{Items: []string{"<a&b>", "\u2028", "\xff"}, NextCursor: "<\"x\">"},
			want: `{"items":["\u003ca\u0026b\u003e","\u2028","\ufffd"],"nextCursor":"\u003c\"x\"\u003e","meta":{"totalCount":0,"pageSize":0,"hasMore":false}}`,
		},
		{
			name: "raw items are compacted",
			page: pagination.Page[json.RawMessage]{Items: []json.RawMessage{json.RawMessage("{ \"a\" : [ 1 , 2 ] }")}},
			want: `{"items":[{"a":[1,2]}],"nextCursor":null,"meta":{"totalCount":0,"pageSize":0,"hasMore":false}}`,
		},
		{
			name: "items with pointer-receiver marshalers use them",
			page: pagination.Page[ptrMarshaler]{Items: []ptrMarshaler{{}}},
			want: `{"items":["custom"],"nextCursor":null,"meta":{"totalCount":0,"pageSize":0,"hasMore":false}}`,
		},
		{
			name: "byte items are numbers, not base64",
			page: pagination.Page[byte]{Items: []byte{1, 2}},
			want: `{"items":[1,2],"nextCursor":null,"meta":{"totalCount":0,"pageSize":0,"hasMore":false}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.page)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))

			direct, err := tt.page.(json.Marshaler).MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, string(got), string(direct), "MarshalJSON and json.Marshal agree byte for byte")
		})
	}

	t.Run("an item that cannot be marshalled is an error", func(t *testing.T) {
		_, err := json.Marshal(pagination.Page[any]{Items: []any{1, make(chan int)}})
		assert.ErrorContains(t, err, "pagination: item 1: json: unsupported type: chan int")
	})
}

type ptrMarshaler struct{}

func (*ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"custom"`), nil }

func TestUnmarshalRoundTrip(t *testing.T) {
	p := newPager(t, nil, nil)
	page, err := pagination.Paginate(p, records(10), pagination.Request{Limit: 4}, listQuery)
	require.NoError(t, err)
	b, err := json.Marshal(page)
	require.NoError(t, err)

	var back pagination.Page[record]
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, page, back)

	var final pagination.Page[record]
	require.NoError(t, json.Unmarshal([]byte(`{"items":[],"nextCursor":null,"meta":{"totalCount":0,"pageSize":0,"hasMore":false}}`), &final))
	assert.Empty(t, final.NextCursor, "a null cursor decodes as empty")
}
