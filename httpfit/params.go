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
	"github.com/ctxfit/ctxfit/internal/jsonwire"
	"github.com/ctxfit/ctxfit/pagination"
)

// query is what the middleware reads from a query string.
type query struct {
	cursor, fields     string
	limit              int
	startLine, endLine int
	order              string
	filters            json.RawMessage
	stripped           string // the query string without the ctxfit parameters
}

// paramError names the parameter at fault for the problem document.
type paramError struct {
	param string
	err   error
}

func (e *paramError) Error() string { return e.err.Error() }
func (e *paramError) Unwrap() error { return e.err }

// parseQuery reads the ctxfit parameters named by p, the order and the
// filters from raw. Of a repeated ctxfit parameter the first value counts.
//
// It allocates only for what it returns: the filters' JSON, and the
// stripped query or order when they differ from substrings of raw.
func parseQuery(raw string, p ctxfit.Params) (query, error) {
	var q query
	if raw == "" {
		return q, nil
	}
	var (
		buf     [4]filter
		filters = buf[:0]
		limit   = ""
		start   = ""
		end     = ""
		seen    uint8
	)
	// The ctxfit parameters, by name, and where each one's value goes.
	names := [...]string{p.Cursor, p.Limit, p.Fields, p.StartLine, p.EndLine}
	values := [...]*string{&q.cursor, &limit, &q.fields, &start, &end}
	escaped := strings.IndexByte(raw, '%') >= 0 || strings.IndexByte(raw, '+') >= 0
	for rest := raw; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "&")
		if seg == "" {
			continue
		}
		key, val, _ := strings.Cut(seg, "=")
		if escaped {
			var err error
			if key, val, err = unescapePair(seg); err != nil {
				return q, err
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
			return q, &paramError{p.Limit, fmt.Errorf("httpfit: %w: %s=%q is not a non-negative integer", pagination.ErrInvalidLimit, p.Limit, limit)}
		}
	}
	if q.startLine, err = lineParam(p.StartLine, start); err != nil {
		return q, err
	}
	if q.endLine, err = lineParam(p.EndLine, end); err != nil {
		return q, err
	}
	if len(filters) > 0 {
		q.filters = canonicalFilters(filters)
	}
	return q, nil
}

// filter is one query parameter that is neither a ctxfit parameter nor the
// order.
type filter struct{ key, val string }

// unescapePair splits a query segment at its first "=" and unescapes both
// sides.
func unescapePair(seg string) (key, val string, err error) {
	k, v, _ := strings.Cut(seg, "=")
	if key, err = url.QueryUnescape(k); err != nil {
		return "", "", &paramError{k, fmt.Errorf("%w: httpfit: the query parameter name %q is not URL-encoded correctly", ctxfit.ErrBadRequest, k)}
	}
	if val, err = url.QueryUnescape(v); err != nil {
		return "", "", &paramError{key, fmt.Errorf("%w: httpfit: the value of %s is not URL-encoded correctly", ctxfit.ErrBadRequest, key)}
	}
	return key, val, nil
}

func slotOf(names []string, key string) int {
	for i, n := range names {
		if n == key {
			return i
		}
	}
	return -1
}

// strip returns raw without its ctxfit parameters (and empty segments).
// raw is known to unescape cleanly.
func strip(raw string, names []string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for rest := raw; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "&")
		if seg == "" {
			continue
		}
		if key, _, _ := unescapePair(seg); slotOf(names, key) >= 0 {
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
		return 0, &paramError{name, fmt.Errorf("httpfit: %w: %s=%q is not a line number (an integer from 1)", chunk.ErrLineRange, name, v)}
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

// appendString appends s as a JSON string, as json.Marshal writes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			q, _ := jsonwire.Marshal(s) // cannot fail for a string
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON tells the bytes json.Marshal writes as they are inside a
// string: printable ASCII other than '"', '\\' and the HTML characters it
// escapes.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// routeTable matches requests against the endpoint patterns of a Config.
type routeTable struct {
	first *ctxfit.Endpoint // identity of the Endpoints slice it was built from
	n     int
	mux   *http.ServeMux // nil when no Match is a pattern
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
	for _, ep := range eps {
		if !strings.Contains(ep.Match, "/") {
			continue // an MCP tool name
		}
		if t.mux == nil {
			t.mux = http.NewServeMux()
		}
		register(t.mux, ep.Match)
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
	_, p := t.mux.Handler(r)
	return p
}
