package httpfit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/pagination"
)

// query is what the middleware reads from a query string.
type query struct {
	cursor, fields     string
	search             *ctxfit.Search
	jq, format         string
	limit              int
	part               int64
	startLine, endLine int
	order              string
	filters            json.RawMessage
	stripped           string // the query string without the ctxfit parameters
}

// paramError names the parameter at fault for the problem document, and
// what it should hold when the Guard's problem does not say.
type paramError struct {
	param    string
	expected string
	err      error
}

func (e *paramError) Error() string { return e.err.Error() }
func (e *paramError) Unwrap() error { return e.err }

// parseQuery reads the ctxfit parameters named by p, the order and the
// filters from raw. Of a repeated ctxfit parameter the first value counts.
//
// A ctxfit parameter that is not URL-encoded correctly is an error. Any
// other parameter belongs to the handler, which gets it as it was written;
// when one of them is not URL-encoded correctly, the filters are the JSON
// string of the handler's query (raw without the ctxfit parameters and
// without empty segments), byte for byte, so cursors are bound to the
// query as sent. Empty segments ("a&&b", a trailing "&") are no parameter:
// a first request with them and its continuation, the same query with
// "&cursor=..." added, bind the same filters.
//
// It allocates only for what it returns: the filters' JSON, and the
// stripped query or order when they differ from substrings of raw.
func parseQuery(raw string, p ctxfit.Params) (query, error) {
	var q query
	if raw == "" {
		return q, nil
	}
	var (
		buf      [4]filter
		filters  = buf[:0]
		limit    = ""
		start    = ""
		end      = ""
		part     = ""
		search   = ""
		spath    = ""
		scontext = ""
		seen     uint16
		verbatim bool // a parameter of the handler's is not URL-encoded correctly
	)
	// The ctxfit parameters, by name, and where each one's value goes.
	names := [...]string{p.Cursor, p.Limit, p.Fields, p.StartLine, p.EndLine, p.Part, p.Search, p.SearchPath, p.SearchContext, p.Query, p.Format}
	values := [...]*string{&q.cursor, &limit, &q.fields, &start, &end, &part, &search, &spath, &scontext, &q.jq, &q.format}
	escaped := strings.IndexByte(raw, '%') >= 0 || strings.IndexByte(raw, '+') >= 0
	for rest := raw; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "&")
		if seg == "" {
			continue
		}
		key, val, _ := strings.Cut(seg, "=")
		if escaped {
			var ok bool
			var err error
			if key, val, ok, err = unescapePair(seg, names[:]); err != nil {
				return q, err
			} else if !ok {
				verbatim = true
				continue
			}
		}
		slot := slotOf(names[:], key)
		switch {
		case slot >= 0:
			if seen&(1<<slot) == 0 { // the first value counts
				*values[slot] = val
			}
			seen |= 1 << slot
		case key == "order" || key == "sort":
			if q.order == "" {
				q.order = val
			} else {
				q.order += "," + val
			}
		default:
			filters = append(filters, filter{key, val})
		}
	}
	q.stripped = raw
	if seen != 0 {
		q.stripped = strip(raw, names[:])
	}
	var err error
	if limit != "" {
		if q.limit, err = strconv.Atoi(limit); err != nil || q.limit < 0 {
			return q, &paramError{param: p.Limit, err: fmt.Errorf("httpfit: %w: %s=%q is not a non-negative integer", pagination.ErrInvalidLimit, p.Limit, shortValue(limit))}
		}
	}
	if part != "" {
		if q.part, err = strconv.ParseInt(part, 10, 64); err != nil || q.part < 1 {
			return q, &paramError{param: p.Part, err: fmt.Errorf("httpfit: %w: %s=%q is not a part number (the \"ctxfit:part\" of a placeholder)", ctxfit.ErrPart, p.Part, shortValue(part))}
		}
	}
	if search != "" {
		q.search = &ctxfit.Search{Pattern: search, Path: spath}
		if scontext != "" {
			if q.search.Context, err = strconv.Atoi(scontext); err != nil {
				return q, &paramError{param: p.SearchContext, err: fmt.Errorf("httpfit: %w: %s=%q is not a number of lines (0 to 5)", ctxfit.ErrBadRequest, p.SearchContext, shortValue(scontext))}
			}
		}
	}
	if q.startLine, err = lineParam(p.StartLine, start); err != nil {
		return q, err
	}
	if q.endLine, err = lineParam(p.EndLine, end); err != nil {
		return q, err
	}
	switch {
	case verbatim:
		bound := q.stripped
		if seen == 0 {
			bound = strip(raw, names[:]) // without its empty segments, as when a ctxfit parameter is there
		}
		q.filters = appendString(make([]byte, 0, len(bound)+2), bound)
	case len(filters) > 0:
		q.filters = canonicalFilters(filters)
	}
	return q, nil
}

// filter is one query parameter that is neither a ctxfit parameter nor the
// order.
type filter struct{ key, val string }

// unescapePair splits a query segment at its first "=" and unescapes both
// sides. ok is false for a segment that is not URL-encoded correctly and is
// not one of the ctxfit parameters names: it is the handler's business. err
// is set for a ctxfit parameter whose value is not URL-encoded correctly.
func unescapePair(seg string, names []string) (key, val string, ok bool, err error) {
	k, v, _ := strings.Cut(seg, "=")
	if key, err = url.QueryUnescape(k); err != nil {
		return "", "", false, nil // not a name ctxfit reads
	}
	if val, err = url.QueryUnescape(v); err != nil {
		if slotOf(names, key) < 0 {
			return "", "", false, nil
		}
		return "", "", false, &paramError{param: key, expected: "a URL-encoded value: each % followed by two hexadecimal digits",
			err: fmt.Errorf("%w: httpfit: the value of %s is not URL-encoded correctly (a %% must start an escape such as %%25 or %%2C); send the value exactly as ctxfit gave it, URL-encoded", ctxfit.ErrBadRequest, key)}
	}
	return key, val, true, nil
}

func slotOf(names []string, key string) int {
	for i, n := range names {
		if n == key && n != "" {
			return i
		}
	}
	return -1
}

// strip returns raw without its ctxfit parameters (and empty segments).
// Every ctxfit parameter in raw is known to unescape cleanly.
func strip(raw string, names []string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for rest := raw; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "&")
		if seg == "" {
			continue
		}
		if key, _, ok, _ := unescapePair(seg, names); ok && slotOf(names, key) >= 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func lineParam(name, v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, &paramError{param: name, err: fmt.Errorf("httpfit: %w: %s=%q is not a line number (an integer from 1)", chunk.ErrLineRange, name, shortValue(v))}
	}
	return n, nil
}

// canonicalFilters writes the filters as a JSON object with sorted keys; a
// parameter given once is a string, a repeated one an array of strings in
// the order given. The bytes are those json.Marshal writes for the same
// value, the canonical form cursors compare. It sorts f in place.
func canonicalFilters(f []filter) json.RawMessage {
	// Insertion sort: stable (repeated keys keep their order), allocation
	// free, and quick for the few parameters a query has.
	size := 2
	for i := range f {
		size += len(f[i].key) + len(f[i].val) + 8
		for j := i; j > 0 && f[j].key < f[j-1].key; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i := 0; i < len(f); {
		k := f[i].key
		n := 1
		for i+n < len(f) && f[i+n].key == k {
			n++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if n == 1 {
			b = appendString(b, f[i].val)
		} else {
			b = append(b, '[')
			for j := range n {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendString(b, f[i+j].val)
			}
			b = append(b, ']')
		}
		i += n
	}
	return append(b, '}')
}

// appendString appends s as a JSON string, escaped as rawjson.Escape does:
// the same on every Go release, and lossless (bytes that are not valid
// UTF-8 stay distinct, so q=%ff and q=%fe bind different cursors).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			return rawjson.AppendQuoted(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON tells the bytes written as they are inside a string: printable
// ASCII other than '"' and '\\'.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// shortValue quotes at most 40 bytes of a parameter's value for an error
// message: errors echo no input without bound.
func shortValue(v string) string {
	if len(v) > 40 {
		return v[:40] + "…"
	}
	return v
}

// routeTable matches requests against the endpoint patterns of a Config.
type routeTable struct {
	first *ctxfit.Endpoint // identity of the Endpoints slice it was built from
	n     int
	mux   *http.ServeMux // nil when no Match is a pattern
	// prefixes are the literal beginnings of the patterns' paths (up to the
	// first wildcard), so that a request whose path begins with none of them
	// skips the mux: an unmatched request costs the mux a search for a
	// redirect and for the methods of a 405. nil: always ask the mux (a
	// pattern with a host).
	prefixes []string
}

func (h *handler) routeTable(eps []ctxfit.Endpoint) *routeTable {
	var first *ctxfit.Endpoint
	if len(eps) > 0 {
		first = &eps[0]
	}
	if t := h.routes.Load(); t != nil && t.first == first && t.n == len(eps) {
		return t
	}
	t := &routeTable{first: first, n: len(eps)}
	hosts := false
	for _, ep := range eps {
		if !strings.Contains(ep.Match, "/") {
			continue // an MCP tool name
		}
		if t.mux == nil {
			t.mux = http.NewServeMux()
		}
		register(t.mux, ep.Match)
		if prefix, ok := literalPrefix(ep.Match); ok {
			t.prefixes = append(t.prefixes, prefix)
		} else {
			hosts = true
		}
	}
	if hosts {
		t.prefixes = nil
	}
	h.routes.Store(t)
	return t
}

// register adds pattern to mux, skipping one that is invalid or conflicts
// with an earlier one (the first match wins, as in Config.Endpoints).
func register(mux *http.ServeMux, pattern string) {
	defer func() { _ = recover() }()
	mux.Handle(pattern, http.NotFoundHandler())
}

func (t *routeTable) match(r *http.Request) string {
	if t.mux == nil {
		return ""
	}
	if t.prefixes != nil && !t.mayMatch(r.URL.Path) {
		return ""
	}
	_, p := t.mux.Handler(r)
	return p
}

// mayMatch reports whether a request for path may match one of the
// patterns (or be redirected to one): false only for a clean path that
// begins with none of their literal prefixes.
func (t *routeTable) mayMatch(path string) bool {
	if path == "" || strings.Contains(path, "//") || strings.Contains(path, "/.") {
		return true // the mux cleans it and redirects: let it tell
	}
	for _, p := range t.prefixes {
		if strings.HasPrefix(path, p) || strings.HasPrefix(p, path) {
			return true // strings.HasPrefix(p, path): "/api" redirects to "/api/"
		}
	}
	return false
}

// literalPrefix returns the path of pattern ("[METHOD ][HOST]/PATH") up to
// its first wildcard, and false when the pattern names a host.
func literalPrefix(pattern string) (string, bool) {
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		pattern = strings.TrimLeft(pattern[i:], " \t")
	}
	if !strings.HasPrefix(pattern, "/") {
		return "", false
	}
	if i := strings.IndexByte(pattern, '{'); i >= 0 {
		pattern = pattern[:i]
	}
	return pattern, true
}
