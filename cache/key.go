package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
)

// Request is what selects an upstream response: the fields of a
// ctxfit.Request that the cache keys on (see [Key]). The adapters take them
// from the request the Guard handles; ctxfit's
// own parameters (cursor, limit, fields, line range) are not among them, as
// the cache holds the full upstream response.
//
// A Request is a plain value.
type Request struct {
	// Endpoint is the route pattern ("GET /api/v1/bookings/{id}") or MCP
	// tool name.
	Endpoint string
	// Path is the concrete path of the request ("/api/v1/bookings/BK1"),
	// or the tool name.
	Path string
	// Subject is the tenant, session or principal the response is for; ""
	// for none.
	Subject string
	// Order and Filters are the query the response answers (a tool's
	// arguments are its Filters); Filters are a JSON value, and empty,
	// "null" and "{}" mean none.
	Order   string
	Filters json.RawMessage
}

// keyVersion changes when the key's derivation does, so that a shared
// backend never serves an entry under a key derived another way.
const keyVersion = "ctxfit-cache-v1"

// Kinds of keys besides [Key]'s, so that no two kinds share a digest.
const (
	kindHTTP    = "http"    // keyHTTP: a request under HTTP rules
	kindMarker  = "vary"    // markerKey: which fields a response varies on
	kindVariant = "variant" // variantKey: one variant of a response
)

// Key returns the cache key of req: a digest (43 URL-safe characters) of
// its Endpoint, Path, Subject, Order and canonical Filters.
//
// Filters are canonicalized as JSON: object keys sorted, insignificant white
// space removed, numbers kept as written; array order is significant. Empty
// Filters, "null" and "{}" are the same (no filters). Filters that are not
// valid JSON are keyed by their bytes.
//
// A ctxfit.Request's Cursor, Limit, Fields, StartLine, EndLine and
// RequestID are not part of a Request: the cache holds the full upstream
// response, of which these select only what the Guard sends. The key is a digest so that subjects
// and filter values are not written in clear to a shared backend.
func Key(req Request) string {
	h := sha256.New()
	field(h, keyVersion)
	field(h, req.Endpoint)
	field(h, req.Path)
	field(h, req.Subject)
	field(h, req.Order)
	field(h, canonical(req.Filters))
	return digest(h)
}

// keyHTTP returns the key of an HTTP request: a digest of req's Endpoint,
// Path and Subject and of rawQuery's parameters, each unescaped to its raw
// bytes, sorted by name (repeated names keep their order). The query holds
// the order and the filters: their bytes count, not their JSON form, in
// which invalid UTF-8 collapses.
func keyHTTP(req Request, rawQuery string) string {
	h := sha256.New()
	field(h, keyVersion)
	field(h, kindHTTP)
	field(h, req.Endpoint)
	field(h, req.Path)
	field(h, req.Subject)
	for _, p := range queryParams(rawQuery) {
		field(h, p.form)
		field(h, p.name)
		field(h, p.value)
	}
	return digest(h)
}

// param is one query parameter: its name and value unescaped, and how it
// was written ("=" for name=value, "" for a bare name, "!" for one that is
// not escaped correctly, kept as written).
type param struct{ form, name, value string }

// queryParams splits a raw query into its parameters, sorted by name; empty
// segments are dropped.
func queryParams(raw string) []param {
	var ps []param
	for seg := range strings.SplitSeq(raw, "&") {
		if seg == "" {
			continue
		}
		k, v, eq := strings.Cut(seg, "=")
		p := param{name: k, value: v}
		uk, kerr := url.QueryUnescape(k)
		uv, verr := url.QueryUnescape(v)
		switch {
		case kerr != nil || verr != nil:
			p.form = "!"
		case eq:
			p = param{"=", uk, uv}
		default:
			p = param{"", uk, ""}
		}
		ps = append(ps, p)
	}
	slices.SortStableFunc(ps, func(a, b param) int { return strings.Compare(a.name, b.name) })
	return ps
}

// markerKey returns the key of the marker that says which request fields
// the response stored for key varies on.
func markerKey(key string) string {
	h := sha256.New()
	field(h, keyVersion)
	field(h, kindMarker)
	field(h, key)
	return digest(h)
}

// variantKey returns the key of the variant of the response stored for key
// that header selects: a digest of key, and of the name and the values of
// each field in vary (absent and empty are different; field lines are
// trimmed and joined by commas).
func variantKey(key string, vary []string, header map[string][]string) string {
	h := sha256.New()
	field(h, keyVersion)
	field(h, kindVariant)
	field(h, key)
	for _, name := range vary {
		field(h, name)
		vs, ok := header[textproto.CanonicalMIMEHeaderKey(name)]
		if !ok {
			field(h, "absent")
			continue
		}
		lines := make([]string, len(vs))
		for i, v := range vs {
			lines[i] = strings.Trim(v, " \t")
		}
		field(h, "present")
		field(h, strings.Join(lines, ","))
	}
	return digest(h)
}

// digest returns the key that h has summed.
func digest(h hash.Hash) string {
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0]))
}

// field writes s length-prefixed, so that no two field lists write the
// same bytes.
func field(h hash.Hash, s string) {
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	h.Write([]byte(s))
}

// canonical returns the canonical form of a JSON value: "" for none, the
// re-encoded value with sorted keys, or "!" and the bytes themselves when
// they are not one valid JSON value.
func canonical(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" || string(t) == "{}" {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || len(bytes.TrimSpace(t[dec.InputOffset():])) != 0 {
		return "!" + string(raw)
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "!" + string(raw)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
