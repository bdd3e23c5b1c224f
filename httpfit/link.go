package httpfit

import (
	"net/http"
	"net/url"
	"strings"
)

// nextLink returns the value of the Link header field (RFC 8288) that
// points to the response after this one: the URL r was sent to, with the
// cursor parameter set to next and no part parameter. It returns "" when
// no such URL can be written (a request target that is not a path, see
// below).
//
// The URL is the one the client used, as far as the request tells it: the
// scheme of the connection (https when it is TLS), the Host as it arrived,
// and the path and query of the request target as sent (r.RequestURI, so
// that middleware in front that rewrites r.URL, http.StripPrefix say, does
// not change it), or what base returns in place of scheme and host when it
// is set ([Options.BaseURL]). Every query parameter other than the cursor
// and part parameters is kept byte for byte, in its place; the first
// cursor parameter is replaced where it was, others and part parameters
// are dropped, and a query without one gets the cursor at its end. Bytes
// that may not appear in a URI (a space, '"', '<', '>', non-ASCII, ...)
// are percent-encoded, which changes nothing of what the query means;
// except when the handler's own parameters are not URL-encoded correctly
// (verbatim: cursors are then bound to the query's raw bytes), where no
// link is given rather than one whose cursor would not match. Without a
// Host (HTTP/1.0) the link is a relative reference: the path and query.
// A link longer than maxLink (its query repeats a long filter, say) is not
// given either: no header field repeats the request without bound, and the
// next cursor is in the body.
func nextLink(r *http.Request, base func(*http.Request) string, cursorParam, partParam, next string, verbatim bool) string {
	target := r.RequestURI
	if target == "" { // a request that did not come from a server
		target = r.URL.RequestURI()
	}
	if !strings.HasPrefix(target, "/") {
		// absolute-form (a request to a proxy): its path and query
		i := strings.Index(target, "://")
		if i < 0 {
			return "" // "*", or authority-form
		}
		rest := target[i+len("://"):]
		j := strings.IndexAny(rest, "/?")
		if j < 0 {
			return ""
		}
		target = rest[j:]
		if target[0] == '?' {
			target = "/" + target
		}
	}
	path, query, _ := strings.Cut(target, "?")

	var b strings.Builder
	b.Grow(len(target) + len(next) + 80)
	b.WriteByte('<')
	switch {
	case base != nil:
		b.WriteString(strings.TrimSuffix(base(r), "/"))
	case r.Host != "":
		if r.TLS != nil {
			b.WriteString("https://")
		} else {
			b.WriteString("http://")
		}
		b.WriteString(r.Host)
	}
	escaped := appendURIPart(&b, path)
	b.WriteByte('?')
	if appendURIPart(&b, linkQuery(query, cursorParam, partParam, next)) {
		escaped = true
	}
	if escaped && verbatim {
		return ""
	}
	b.WriteString(`>; rel="next"`)
	if b.Len() > maxLink {
		return ""
	}
	return b.String()
}

// maxLink bounds the Link header field of a response: 8 KiB, what common
// servers and proxies accept for a whole request line.
const maxLink = 8 << 10

// maxRequestID bounds the request ID telemetry records.
const maxRequestID = 128

// linkQuery returns the query raw with the cursor parameter set to next
// and the part parameter dropped, as [nextLink] describes.
func linkQuery(raw, cursorParam, partParam, next string) string {
	param := url.QueryEscape(cursorParam) + "=" + url.QueryEscape(next)
	if raw == "" {
		return param
	}
	var b strings.Builder
	b.Grow(len(raw) + len(param) + 1)
	ns := []string{cursorParam, partParam}
	set, first := false, true
	for rest, more := raw, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "&")
		if seg != "" {
			if key, _, ok, _ := unescapePair(seg, ns); ok {
				switch key {
				case cursorParam:
					if set {
						continue
					}
					seg, set = param, true
				case partParam:
					continue
				}
			}
		}
		if !first {
			b.WriteByte('&')
		}
		first = false
		b.WriteString(seg)
	}
	if !set {
		if !first {
			b.WriteByte('&')
		}
		b.WriteString(param)
	}
	return b.String()
}

// appendURIPart writes s to b with every byte that may not appear in the
// path or query of a URI (RFC 3986) percent-encoded; a '%' is kept, as the
// start of an escape the client wrote. It reports whether it encoded any.
func appendURIPart(b *strings.Builder, s string) bool {
	const hex = "0123456789ABCDEF"
	escaped := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if uriByte[c] {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
		escaped = true
	}
	return escaped
}

// uriByte tells the bytes a URI's path and query may hold as they are:
// unreserved, sub-delims, ':', '@', '/', '?', and '%'.
var uriByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~!$&'()*+,;=:@/?%" {
		t[c] = true
	}
	return t
}()
