package httpfit

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/chunk"
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
func parseQuery(raw string, p ctxfit.Params) (query, error) {
	var q query
	if raw == "" {
		return q, nil
	}
	var (
		rest    []string
		filters map[string][]string
		orders  []string
		limit   = ""
		start   = ""
		end     = ""
		seen    uint8
	)
	// The ctxfit parameters, by name, and where each one's value goes.
	names := [...]string{p.Cursor, p.Limit, p.Fields, p.StartLine, p.EndLine}
	values := [...]*string{&q.cursor, &limit, &q.fields, &start, &end}
	for seg := range strings.SplitSeq(raw, "&") {
		if seg == "" {
			continue
		}
		k, v, _ := strings.Cut(seg, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return q, &paramError{k, fmt.Errorf("%w: httpfit: the query parameter name %q is not URL-encoded correctly", ctxfit.ErrBadRequest, k)}
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return q, &paramError{key, fmt.Errorf("%w: httpfit: the value of %s is not URL-encoded correctly", ctxfit.ErrBadRequest, key)}
		}
		slot := slices.IndexFunc(names[:], func(n string) bool { return n == key })
		if slot < 0 {
			rest = append(rest, seg)
			if key == "order" || key == "sort" {
				orders = append(orders, val)
				continue
			}
			if filters == nil {
				filters = make(map[string][]string)
			}
			filters[key] = append(filters[key], val)
			continue
		}
		if seen&(1<<slot) == 0 { // the first value counts
			*values[slot] = val
		}
		seen |= 1 << slot
	}
	if seen == 0 {
		q.stripped = raw
	} else {
		q.stripped = strings.Join(rest, "&")
	}
	q.order = strings.Join(orders, ",")
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
	if filters != nil {
		q.filters, err = canonicalFilters(filters)
		if err != nil {
			return q, err
		}
	}
	return q, nil
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
// value, the canonical form cursors compare.
func canonicalFilters(f map[string][]string) (json.RawMessage, error) {
	keys := slices.Sorted(maps.Keys(f))
	b := make([]byte, 0, 64)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		vs := f[k]
		if len(vs) == 1 {
			b = appendString(b, vs[0])
			continue
		}
		b = append(b, '[')
		for j, v := range vs {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, v)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string, as json.Marshal writes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // cannot fail for a string
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

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
