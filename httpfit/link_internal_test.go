package httpfit

import (
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNextLinkIsTheRequestsOwnURLWithTheCursorSet(t *testing.T) {
	const next = "Ak-next_cursor"
	tests := []struct {
		name       string
		host       string
		requestURI string // "" for a request that did not come from a server
		url        string // r.URL, when it differs from the request URI
		tls        bool
		base       func(*http.Request) string
		params     [2]string // cursor and part parameter names; the defaults when empty
		verbatim   bool
		want       string
	}{
		{name: "a first page gets the cursor appended",
			host: "example.com", requestURI: "/api/bookings",
			want: "<http://example.com/api/bookings?cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "an empty query gets the cursor alone",
			host: "example.com", requestURI: "/x?",
			want: "<http://example.com/x?cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "a TLS connection gives https",
			host: "example.com:8443", requestURI: "/x", tls: true,
			want: "<https://example.com:8443/x?cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "every other parameter is kept byte for byte, in its order",
			host: "h", requestURI: "/x?b=2&a=1&a=%41&plus=a+b&enc=%2B%2f&empty=&&flag&q=%zz",
			want: "<http://h/x?b=2&a=1&a=%41&plus=a+b&enc=%2B%2f&empty=&&flag&q=%zz&cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "an existing cursor is replaced where it was",
			host: "h", requestURI: "/x?a=1&cursor=OLD&b=2&limit=5",
			want: "<http://h/x?a=1&cursor=Ak-next_cursor&b=2&limit=5>; rel=\"next\""},
		{name: "repeated cursors and the part are dropped",
			host: "h", requestURI: "/x?cursor=A&part=12&cursor=B&z=1",
			want: "<http://h/x?cursor=Ak-next_cursor&z=1>; rel=\"next\""},
		{name: "a cursor parameter whose name is escaped is replaced too",
			host: "h", requestURI: "/x?%63ursor=OLD&a=1",
			want: "<http://h/x?cursor=Ak-next_cursor&a=1>; rel=\"next\""},
		{name: "renamed parameters are the ones set and dropped",
			host: "h", requestURI: "/x?cursor=keep&page_token=OLD&part=7&p=3", params: [2]string{"page_token", "p"},
			want: "<http://h/x?cursor=keep&page_token=Ak-next_cursor&part=7>; rel=\"next\""},
		{name: "the path is the one the client sent, before http.StripPrefix",
			host: "h", requestURI: "/v1/x?a=1", url: "/x?a=1",
			want: "<http://h/v1/x?a=1&cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "a request built in process uses its URL",
			host: "h", url: "/x?a=1",
			want: "<http://h/x?a=1&cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "an absolute-form target gives its path and query",
			host: "proxy.example", requestURI: "http://proxy.example/x?a=1",
			want: "<http://proxy.example/x?a=1&cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "without a Host the link is a relative reference",
			requestURI: "/x?a=1",
			want:       "</x?a=1&cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "BaseURL replaces scheme and host, without a doubled slash",
			host: "internal:8080", requestURI: "/x?a=1",
			base: func(*http.Request) string { return "https://example.com/api/" },
			want: "<https://example.com/api/x?a=1&cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "X-Forwarded headers are not read without BaseURL",
			host: "internal:8080", requestURI: "/x",
			want: "<http://internal:8080/x?cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "bytes that may not appear in a URI are percent-encoded",
			host: "h", requestURI: "/a b/x?q=a b\"<>#\xc3\xa9^",
			want: "<http://h/a%20b/x?q=a%20b%22%3C%3E%23%C3%A9%5E&cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "a verbatim query that would need encoding gets no link",
			host: "h", requestURI: "/x?q=%zz<", verbatim: true,
			want: ""},
		{name: "a verbatim query that needs none keeps its bytes",
			host: "h", requestURI: "/x?q=%zz", verbatim: true,
			want: "<http://h/x?q=%zz&cursor=Ak-next_cursor>; rel=\"next\""},
		{name: "an asterisk target gets no link",
			host: "h", requestURI: "*",
			want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.url
			if raw == "" {
				raw = tt.requestURI
			}
			u, err := url.ParseRequestURI(raw)
			require.NoError(t, err)
			r := &http.Request{Method: http.MethodGet, Host: tt.host, RequestURI: tt.requestURI, URL: u,
				Header: http.Header{"X-Forwarded-Host": {"evil.example"}, "X-Forwarded-Proto": {"https"}}}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			cursorParam, partParam := "cursor", "part"
			if tt.params[0] != "" {
				cursorParam, partParam = tt.params[0], tt.params[1]
			}
			assert.Equal(t, tt.want, nextLink(r, tt.base, cursorParam, partParam, next, tt.verbatim))
		})
	}
}

// FuzzALinkIsBoundToTheSameQuery checks, for any query, that the query of
// a next link binds a cursor to what the request's query did: the same
// filters, order and ctxfit parameters but for the cursor, which is the
// next one, and no part. A request that follows the link is therefore
// never a cursor_mismatch.
func FuzzALinkIsBoundToTheSameQuery(f *testing.F) {
	for _, seed := range []string{
		"", "a=1", "a=1&cursor=old&part=3&limit=5", "q=%zz", "q=%zz&&b", "&q=%zz&", "a&&b&cursor=x",
		"%63ursor=x&order=new&sort=id", "tag=b&tag=a&fields=all&startLine=2", "q=a+b&p=%2B", "cursor=a&cursor=b",
	} {
		f.Add(seed, []byte("next"))
	}
	f.Fuzz(func(t *testing.T, raw string, next []byte) {
		q, err := parseQuery(raw, defaultParams)
		if err != nil {
			return // a 400: no link
		}
		cursor := base64.RawURLEncoding.EncodeToString(next) // cursors are base64url
		if cursor == "" {
			return
		}
		link := linkQuery(raw, defaultParams.Cursor, defaultParams.Part, cursor)
		got, err := parseQuery(link, defaultParams)
		require.NoError(t, err, "the link's query %q", link)
		assert.Equal(t, cursor, got.cursor)
		assert.Zero(t, got.part)
		assert.Equal(t, string(q.filters), string(got.filters), "filters of %q and of %q", raw, link)
		assert.Equal(t, q.order, got.order)
		assert.Equal(t, q.limit, got.limit)
		assert.Equal(t, q.fields, got.fields)
		assert.Equal(t, [2]int{q.startLine, q.endLine}, [2]int{got.startLine, got.endLine})
	})
}
