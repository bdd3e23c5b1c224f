package httpfit

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/rawjson"
)

var defaultParams = ctxfit.Params{Cursor: "cursor", Limit: "limit", Fields: "fields", StartLine: "startLine", EndLine: "endLine", Part: "part",
	Search: "search", SearchPath: "searchPath", SearchContext: "searchContext", Query: "jq", Format: "format"}

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
		{"a parameter that is not URL-encoded makes the filters the query as sent", "b=1&q=%zz&limit=5&a=%41", `"b=1&q=%zz&a=%41"`, "", "b=1&q=%zz&a=%41", 5},
		{"so does a name that is not URL-encoded", "%zz&order=x", `"%zz&order=x"`, "x", "%zz&order=x", 0},
		{"and an order that is not", "order=%zz&cursor=c", `"order=%zz"`, "", "order=%zz", 0},
		{"a query as sent is quoted as JSON", `q=%zz"\`, `"q=%zz\"\\"`, "", `q=%zz"\`, 0},
		{"its empty segments are not bound, but the handler gets them", "&q=%zz&&b&", `"q=%zz&b"`, "", "&q=%zz&&b&", 0},
		{"nor are they with a cursor", "&q=%zz&&b&&cursor=c", `"q=%zz&b"`, "", "q=%zz&b", 0},
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

// FuzzParseQuery checks that any query string is either rejected for a
// ctxfit parameter or read into filters that are the canonical JSON cursors
// compare (rawjson.Canonical): the parameters, or the query as sent when one
// of the handler's parameters is not URL-encoded correctly.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{"", "a=1&b=2&a=3", "cursor=x&limit=-1", "x=%zz", "q=%E2%80%A8&q=<>&sort=z", "startLine=2&endLine=1&=&&",
		"q=%&limit=%zz", "%zz=1&cursor=a", "order=%zz&sort=%41", "q=%ff&q=%fe"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseQuery(raw, defaultParams)
		if err != nil {
			var pe *paramError
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, []string{"cursor", "limit", "fields", "startLine", "endLine", "part", "search", "searchPath", "searchContext", "jq", "format"}, pe.param, "only ctxfit's own parameters are rejected")
			return
		}
		all, perr := url.ParseQuery(raw)
		if perr == nil {
			_, err = url.ParseQuery(q.stripped)
			assert.NoError(t, err, "a well-formed query stays well-formed for the handler")
		}
		if q.filters != nil {
			want, err := rawjson.Canonical(nil, q.filters)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(q.filters))
		}
		var v map[string]any
		if q.filters != nil && q.filters[0] == '"' {
			var asSent string
			require.NoError(t, json.Unmarshal(q.filters, &asSent))
			if utf8.ValidString(q.stripped) {
				// Empty segments are no parameter: the handler gets them,
				// the filters do not bind them.
				segs := strings.Split(q.stripped, "&")
				segs = slices.DeleteFunc(segs, func(s string) bool { return s == "" })
				assert.Equal(t, strings.Join(segs, "&"), asSent, "the filters are the handler's query as sent, less its empty segments")
			}
			_, err := url.ParseQuery(q.stripped)
			assert.Error(t, err, "only a query with a parameter that is not URL-encoded correctly")
			return
		}
		if q.filters != nil {
			require.NoError(t, json.Unmarshal(q.filters, &v))
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
			case "cursor", "limit", "fields", "startLine", "endLine", "part", "search", "searchPath", "searchContext", "jq", "format", "order", "sort":
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

func TestTheRouteTableSkipsTheMuxOnlyForPathsNoPatternCanMatch(t *testing.T) {
	eps := []ctxfit.Endpoint{
		{Match: "GET /api/v1/bookings/{id}"},
		{Match: "/api/v1/logs/"},
		{Match: "search_bookings"}, // an MCP tool name
	}
	h := &handler{}
	for _, path := range []string{
		"/api/v1/bookings/BK1", "/api/v1/bookings", "/api/v1/bookings/", "/api/v1/logs/app", "/api/v1/logs",
		"/api/v1/small", "/", "/other", "/api//v1/bookings/BK1", "/x/../api/v1/bookings/BK1", "/api/v1/bookings/BK1/x",
	} {
		t.Run("a request for "+path+" gets what the mux alone gives", func(t *testing.T) {
			for _, method := range []string{"GET", "POST"} {
				r := httptest.NewRequest(method, "http://example.com"+path, nil)
				r.URL.Path = path
				table := h.routeTable(eps)
				_, want := table.mux.Handler(r)
				assert.Equal(t, want, table.match(r))
			}
		})
	}
	t.Run("a pattern with a host turns the filter off", func(t *testing.T) {
		h := &handler{}
		table := h.routeTable([]ctxfit.Endpoint{{Match: "/a/"}, {Match: "example.com/b"}})
		assert.Nil(t, table.prefixes)
		r := httptest.NewRequest("GET", "http://example.com/b", nil)
		assert.Equal(t, "example.com/b", table.match(r))
	})
}
