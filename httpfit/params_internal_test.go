package httpfit

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/rawjson"
)

var defaultParams = ctxfit.Params{Cursor: "cursor", Limit: "limit", Fields: "fields", StartLine: "startLine", EndLine: "endLine", Part: "part"}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		name, raw              string
		wantFilters, wantOrder string
		wantStripped           string
		wantLimit              int
	}{
		{"no query has no filters", "", "", "", "", 0},
		{"filters are a sorted JSON object", "status=ok&city=Paris", `{"city":"Paris","status":"ok"}`, "", "status=ok&city=Paris", 0},
		{"a repeated filter is an array in the order given", "tag=b&tag=a", `{"tag":["b","a"]}`, "", "tag=b&tag=a", 0},
		{"order and sort are the order, not filters", "order=new&sort=id&x=1", `{"x":"1"}`, "new,id", "order=new&sort=id&x=1", 0},
		{"ctxfit parameters are removed for the handler", "cursor=abc&x=%3C1%3E&limit=5&fields=all", `{"x":"<1>"}`, "", "x=%3C1%3E", 5},
		{"an empty value is a filter too", "status=", `{"status":""}`, "", "status=", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := parseQuery(tt.raw, defaultParams)
			require.NoError(t, err)
			assert.Equal(t, tt.wantFilters, string(q.filters))
			assert.Equal(t, tt.wantOrder, q.order)
			assert.Equal(t, tt.wantStripped, q.stripped)
			assert.Equal(t, tt.wantLimit, q.limit)
		})
	}
}

// FuzzParseQuery checks that any query string is either rejected or read
// into filters that are the canonical JSON cursors compare
// (rawjson.Canonical).
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{"", "a=1&b=2&a=3", "cursor=x&limit=-1", "x=%zz", "q=%E2%80%A8&q=<>&sort=z", "startLine=2&endLine=1&=&&"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseQuery(raw, defaultParams)
		if err != nil {
			return
		}
		all, perr := url.ParseQuery(raw)
		if perr == nil {
			_, err = url.ParseQuery(q.stripped)
			assert.NoError(t, err, "a well-formed query stays well-formed for the handler")
		}
		var v map[string]any
		if q.filters != nil {
			require.NoError(t, json.Unmarshal(q.filters, &v))
		}
		if q.filters != nil {
			want, err := rawjson.Canonical(nil, q.filters)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(q.filters))
		}
		if perr != nil {
			return
		}
		// The filters are what net/url reads, less the ctxfit parameters
		// and the order.
		want := map[string]any{}
		for k, vs := range all {
			if !utf8.ValidString(k) || !utf8.ValidString(strings.Join(vs, "")) {
				return // bytes that are not UTF-8 are kept (\udcXX); encoding/json reads them as U+FFFD
			}
			switch k {
			case "cursor", "limit", "fields", "startLine", "endLine", "part", "order", "sort":
				continue
			}
			if len(vs) == 1 {
				want[k] = vs[0]
				continue
			}
			arr := make([]any, len(vs))
			for i, s := range vs {
				arr[i] = s
			}
			want[k] = arr
		}
		if v == nil {
			v = map[string]any{}
		}
		assert.Equal(t, want, v)
	})
}
