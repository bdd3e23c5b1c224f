package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit/internal/redact"
)

// maxExcerpt bounds the excerpt of an error answer, in bytes.
const maxExcerpt = 300

// checkPath returns the error of a path argument that would take the
// request out of the operation's path: an empty value, or one with a
// segment "." or ".." (RFC 3986 dot segments, which a server or a proxy
// resolves), split at slashes and backslashes, as given or once
// percent-decoded.
// Percent-encoding the value does not suffice: servers decode "%2F" and
// "%2E" before they route.
func (op *Operation) checkPath(args map[string]any) *Error {
	for _, pr := range op.params {
		if pr.in != "path" {
			continue
		}
		v, ok := args[pr.arg]
		if !ok || v == nil {
			continue
		}
		s := scalar(v)
		if !leavesPath(s) {
			continue
		}
		e := argumentError(pr.arg, shorten(strconv.Quote(s), 80),
			`a non-empty identifier that is not "." or ".." and has no "." or ".." segment between slashes`,
			fmt.Sprintf("path argument %q would take %s %s out of its path", pr.arg, op.Method, op.Path),
			"Give the identifier itself, as the API returned it, not a relative path; the gateway calls only the paths of its document.")
		return &e
	}
	return nil
}

// leavesPath reports whether a path parameter's value is empty or holds a
// dot segment, as given or once percent-decoded.
func leavesPath(s string) bool {
	if s == "" {
		return true
	}
	for _, v := range []string{s, unescapeOnce(s)} {
		for _, seg := range strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' }) {
			if seg == "." || seg == ".." {
				return true
			}
		}
		if v == "." || v == ".." {
			return true
		}
	}
	return false
}

func unescapeOnce(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}

// buildRequest returns the HTTP request of a call of op with args (valid
// against the input schema) to the API at base.
func (op *Operation) buildRequest(ctx context.Context, base *url.URL, args map[string]any, header http.Header) (*http.Request, error) {
	p := op.Path
	var query []string // name=value pairs, escaped, in order
	hdr := http.Header{}
	var cookies []string
	for _, pr := range op.params {
		v, ok := args[pr.arg]
		if !ok || v == nil {
			continue
		}
		switch pr.in {
		case "path":
			p = strings.ReplaceAll(p, "{"+pr.name+"}", pathValue(pr, v))
		case "query":
			query = append(query, queryPairs(pr, v)...)
		case "header":
			hdr.Set(pr.name, simple(v, pr.explode))
		case "cookie":
			cookies = append(cookies, pr.name+"="+url.QueryEscape(simple(v, false)))
		}
	}
	if len(cookies) > 0 {
		hdr.Set("Cookie", strings.Join(cookies, "; "))
	}
	u := *base
	raw := strings.TrimSuffix(base.EscapedPath(), "/") + p
	unescaped, err := url.PathUnescape(raw)
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", raw, err)
	}
	u.Path, u.RawPath = unescaped, raw
	slices.SortStableFunc(query, func(a, b string) int { // by name, as url.Values encodes
		na, _, _ := strings.Cut(a, "=")
		nb, _, _ := strings.Cut(b, "=")
		return strings.Compare(na, nb)
	})
	u.RawQuery = strings.Join(query, "&")

	var body io.Reader
	if op.bodyArg != "" {
		if v, ok := args[op.bodyArg]; ok {
			mt := op.bodyType
			if chosen, ok := args[op.mediaArg].(string); ok && slices.Contains(op.mediaTypes, chosen) {
				mt = chosen
			}
			b, ct, err := encodeBody(mt, v)
			if err != nil {
				return nil, err
			}
			body = bytes.NewReader(b)
			hdr.Set("Content-Type", ct)
		}
	}
	req, err := http.NewRequestWithContext(ctx, op.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json, text/plain;q=0.9, */*;q=0.8")
	for k, vs := range header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	return req, nil
}

// scalar returns a parameter value as the text the request carries.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// simple returns v in OpenAPI's simple style: an array's items joined
// with ",", an object's keys and values joined with "," (explode: "k=v"
// pairs).
func simple(v any, explode bool) string {
	return delimited(v, ",", explode)
}

func delimited(v any, sep string, explode bool) string {
	switch x := v.(type) {
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = scalar(e)
		}
		return strings.Join(s, sep)
	case map[string]any:
		var s []string
		for _, k := range sortedKeys(x) {
			if explode {
				s = append(s, k+"="+scalar(x[k]))
			} else {
				s = append(s, k, scalar(x[k]))
			}
		}
		return strings.Join(s, sep)
	}
	return scalar(v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pathValue returns a path parameter's value in its style (simple, label
// or matrix), escaped.
func pathValue(pr param, v any) string {
	esc := func(s string) string { return url.PathEscape(s) }
	switch pr.style {
	case "label":
		sep := ","
		if pr.explode {
			sep = "."
		}
		return "." + escapeJoined(v, sep, pr.explode, esc)
	case "matrix":
		if list, ok := v.([]any); ok && pr.explode {
			var s []string
			for _, e := range list {
				s = append(s, ";"+esc(pr.name)+"="+esc(scalar(e)))
			}
			return strings.Join(s, "")
		}
		if m, ok := v.(map[string]any); ok && pr.explode {
			var s []string
			for _, k := range sortedKeys(m) {
				s = append(s, ";"+esc(k)+"="+esc(scalar(m[k])))
			}
			return strings.Join(s, "")
		}
		return ";" + esc(pr.name) + "=" + escapeJoined(v, ",", false, esc)
	}
	return escapeJoined(v, ",", pr.explode, esc)
}

// escapeJoined is delimited with each value escaped, not the separators.
func escapeJoined(v any, sep string, explode bool, esc func(string) string) string {
	switch x := v.(type) {
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = esc(scalar(e))
		}
		return strings.Join(s, sep)
	case map[string]any:
		var s []string
		for _, k := range sortedKeys(x) {
			if explode {
				s = append(s, esc(k)+"="+esc(scalar(x[k])))
			} else {
				s = append(s, esc(k), esc(scalar(x[k])))
			}
		}
		return strings.Join(s, sep)
	}
	return esc(scalar(v))
}

// queryPairs returns a query parameter as escaped name=value pairs, in its
// style: form (arrays and objects exploded by default), spaceDelimited,
// pipeDelimited or deepObject.
func queryPairs(pr param, v any) []string {
	esc := url.QueryEscape
	name := esc(pr.name)
	switch x := v.(type) {
	case []any:
		switch {
		case pr.style == "spaceDelimited" && !pr.explode:
			return []string{name + "=" + escapeJoined(x, "%20", false, esc)}
		case pr.style == "pipeDelimited" && !pr.explode:
			return []string{name + "=" + escapeJoined(x, "|", false, esc)}
		case !pr.explode:
			return []string{name + "=" + escapeJoined(x, ",", false, esc)}
		}
		var out []string
		for _, e := range x {
			out = append(out, name+"="+esc(scalar(e)))
		}
		return out
	case map[string]any:
		switch {
		case pr.style == "deepObject":
			return formPairs(pr.name, x)
		case pr.explode:
			var out []string
			for _, k := range sortedKeys(x) {
				out = append(out, esc(k)+"="+esc(scalar(x[k])))
			}
			return out
		}
		return []string{name + "=" + escapeJoined(x, ",", false, esc)}
	}
	return []string{name + "=" + esc(scalar(v))}
}

// formPairs returns v under name as escaped pairs with nested keys in
// brackets (name[a][b]=v, arrays as name[]=v, ...): deepObject query
// parameters and form bodies (as Stripe's API reads them).
func formPairs(name string, v any) []string {
	switch x := v.(type) {
	case map[string]any:
		var out []string
		for _, k := range sortedKeys(x) {
			key := k
			if name != "" {
				key = name + "[" + k + "]"
			}
			out = append(out, formPairs(key, x[k])...)
		}
		return out
	case []any:
		var out []string
		for i, e := range x {
			key := name + "[]"
			if _, nested := e.(map[string]any); nested {
				key = name + "[" + strconv.Itoa(i) + "]"
			}
			out = append(out, formPairs(key, e)...)
		}
		return out
	case nil:
		return nil
	}
	return []string{url.QueryEscape(name) + "=" + url.QueryEscape(scalar(v))}
}

// encodeBody encodes a request body of the media type mt: JSON, a form
// (nested objects in brackets), multipart (one part per property, objects
// as JSON) or text.
func encodeBody(mt string, v any) ([]byte, string, error) {
	switch mediaRank(mt) {
	case 3: // form
		obj, ok := v.(map[string]any)
		if !ok {
			return []byte(url.QueryEscape(scalar(v))), mt, nil
		}
		return []byte(strings.Join(formPairs("", obj), "&")), mt, nil
	case 4: // multipart
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		obj, _ := v.(map[string]any)
		for _, k := range sortedKeys(obj) {
			values := []any{obj[k]}
			if list, ok := obj[k].([]any); ok {
				values = list
			}
			for _, e := range values {
				if err := w.WriteField(k, scalar(e)); err != nil {
					return nil, "", err
				}
			}
		}
		if err := w.Close(); err != nil {
			return nil, "", err
		}
		return buf.Bytes(), w.FormDataContentType(), nil
	case 5: // text
		return []byte(scalar(v)), mt, nil
	}
	b, err := json.Marshal(v)
	return b, mt, err
}

// answer turns the API's answer, whose body readAnswer returned with err,
// into a tool result: a 2xx JSON body is the text of one block (and the
// structured content when op has an output schema and the body is an
// object), text stays text, anything else is an embedded resource (which
// ctxfit holds back behind a link); other statuses are tool errors, a
// redirect to another origin (not followed) among them.
//
// An answer that does not match the output schema (out; nil: not checked)
// is still delivered, as text with the structured content {"text": body}
// that the advertised schema admits, and the mismatch is logged: the
// gateway never sends structured content its tool's schema refuses.
func (op *Operation) answer(resp *http.Response, body []byte, err error, gw *Gateway, out *schema) *mcp.CallToolResult {
	var large *tooLargeError
	switch {
	case errors.As(err, &large):
		return Error{Code: CodeAnswerTooLarge,
			Message: fmt.Sprintf("%s %s answered more than %s, the most the gateway reads of one answer", op.Method, op.Path, size(large.limit)),
			Data: ErrorData{Status: http.StatusBadGateway,
				Suggestion: "Ask for less: call again with the operation's filter or paging arguments (a smaller limit, a page, fewer fields). If no argument narrows the answer, tell the user that it is over the gateway's limit (--max-response-mib)."},
		}.result(!op.output)
	case errors.Is(err, errBufferFull):
		return op.busy(fmt.Sprintf("the calls in flight hold %s of answers, the most the gateway buffers at once, so this answer was not read", size(gw.buffered.limit)),
			"Wait a moment, then call again with the same arguments; make fewer calls at once, or ask for less (filter or paging arguments).").result(!op.output)
	case err != nil:
		return op.unreachable(err)
	}
	if e, ok := op.redirected(resp); ok {
		return e.result(!op.output)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return op.apiError(resp, body).result(!op.output)
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case len(body) == 0:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("%s %s answered %d %s with no content.", op.Method, op.Path, resp.StatusCode, http.StatusText(resp.StatusCode)),
		}}}
	case (mt == "" || isJSON(mt)) && json.Valid(body):
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}
		if op.output && bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) && op.keeps(out, body, gw) {
			res.StructuredContent = json.RawMessage(body)
		} else if op.output {
			res.StructuredContent = textStructured(body)
		}
		return res
	case mt == "" || strings.HasPrefix(mt, "text/") || isTextual(mt) || utf8.Valid(body) && mt == "application/octet-stream":
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}
		if op.output {
			res.StructuredContent = textStructured(body)
		}
		return res
	default:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: resp.Request.URL.String(), MIMEType: mt, Blob: body,
		}}}}
	}
}

// keeps reports whether body, a JSON object, matches the output schema
// out (true when out is nil), logging a mismatch.
func (op *Operation) keeps(out *schema, body []byte, gw *Gateway) bool {
	if out == nil {
		return true
	}
	var where, what string
	inst, err := decodeInstance(body)
	if err != nil {
		what = err.Error()
	} else {
		v, generic := out.validate(inst)
		if v == nil && generic == "" {
			return true
		}
		what = generic
		if v != nil {
			leaf, _ := deepest(v)
			loc := leaf.loc
			if leaf.argument != "" {
				loc = append(slices.Clip(loc), leaf.argument)
			}
			where, what = "/"+strings.Join(loc, "/"), leaf.what
		}
	}
	gw.mismatches.Add(1)
	gw.logger.Warn("gateway: the answer does not match the document's output schema; it is delivered as text",
		"tool", op.Tool.Name, "method", op.Method, "path", op.Path, "at", redact.Bound(where, 256), "violation", redact.Bound(what, 256))
	return false
}

func isTextual(mt string) bool {
	return strings.HasSuffix(mt, "+xml") || mt == "application/xml" || mt == "application/yaml" ||
		mt == "application/x-ndjson" || mt == "application/javascript"
}

// apiError is the error of an answer with a status outside 2xx.
func (op *Operation) apiError(resp *http.Response, body []byte) Error {
	excerpt := strings.TrimSpace(string(bytes.ToValidUTF8(body, []byte("?"))))
	excerpt = shorten(strings.Join(strings.Fields(excerpt), " "), maxExcerpt)
	e := Error{Code: CodeAPIError,
		Message: fmt.Sprintf("%s %s answered %d %s", op.Method, op.Path, resp.StatusCode, http.StatusText(resp.StatusCode)),
		Data:    ErrorData{Status: resp.StatusCode, Excerpt: excerpt}}
	if excerpt != "" {
		e.Message += ": " + excerpt
	}
	switch s := resp.StatusCode; {
	case s == http.StatusBadRequest || s == http.StatusUnprocessableEntity:
		e.Data.Suggestion = "The API refused the arguments: read its message, correct the arguments it names, and call again."
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		e.Data.Suggestion = "The API refused the gateway's credentials; retrying will not help. Tell the user that the gateway needs other credentials (--header)."
	case s == http.StatusNotFound:
		e.Data.Suggestion = "Nothing exists at this path: check the path arguments (identifiers) against a listing from another tool, then call again."
	case s == http.StatusConflict || s == http.StatusPreconditionFailed:
		e.Data.Suggestion = "The resource changed or conflicts: read it again, then retry with current values."
	case s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable:
		e.Data.RetryAfter = retryAfter(resp.Header.Get("Retry-After"))
		e.Data.Suggestion = "The API is busy: wait, then call again with the same arguments."
	case s >= 500:
		e.Data.Suggestion = "The API failed: call again later with the same arguments; if it keeps failing, tell the user."
	default:
		e.Data.Suggestion = "Read the API's message, correct the call and try again."
	}
	return e
}

func retryAfter(h string) int {
	n, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// busy is the error of a call the gateway's bounds stopped.
func (op *Operation) busy(why, suggestion string) Error {
	return Error{Code: CodeBusy,
		Message: fmt.Sprintf("%s %s was not completed: %s", op.Method, op.Path, why),
		Data:    ErrorData{Status: http.StatusServiceUnavailable, Suggestion: suggestion}}
}

// redirected returns the error of an answer that redirects to another
// origin, which the gateway's client did not follow (see
// [sameOriginClient]).
func (op *Operation) redirected(resp *http.Response) (Error, bool) {
	if resp.StatusCode < 300 || resp.StatusCode > 399 || resp.Request == nil || resp.Request.URL == nil {
		return Error{}, false
	}
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" || sameOrigin(loc, resp.Request.URL) {
		return Error{}, false
	}
	return Error{Code: CodeAPIError,
		Message: fmt.Sprintf("%s %s answered %d %s, a redirect to %s, another origin than the API's (%s); the gateway does not follow it, so that its credentials reach only the API",
			op.Method, op.Path, resp.StatusCode, http.StatusText(resp.StatusCode), origin(loc), origin(resp.Request.URL)),
		Data: ErrorData{Status: resp.StatusCode,
			Suggestion: "Retrying will not help. Tell the user that the API redirects to another host; if the API has moved there, the gateway must be started with that base URL (--base-url)."},
	}, true
}

// sameOriginClient returns a copy of c (nil: a new client) that follows
// a redirect only to the origin of the request, then as c's CheckRedirect
// says (by default, at most 10 redirects). A redirect to another origin
// is not followed: the client returns the redirect itself, which
// [Operation.redirected] turns into an error. Go's client drops
// Authorization and Cookie on a redirect to another host, but not the
// other headers of [Options.Header] (X-Api-Key, say).
func sameOriginClient(c *http.Client) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	next := cp.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !sameOrigin(req.URL, via[0].URL) {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (RFC 6454).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// origin returns u's scheme, host and port, without path or user info.
func origin(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// errBufferFull: reading an answer would take the calls in flight beyond
// [Options.MaxBufferedBytes].
var errBufferFull = errors.New("gateway: the buffer of answers is full")

// tooLargeError: an answer is longer than [Options.MaxResponseBytes].
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("gateway: the answer is longer than %s", size(e.limit))
}

// size writes n bytes in MiB or KiB when it is a whole number of them.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// budget counts bytes taken from a shared limit. The zero budget has no
// limit. It is safe for concurrent use.
type budget struct {
	limit      int64 // <= 0: no limit
	used, peak atomic.Int64
}

// take takes n bytes and reports whether they fitted; when they did not,
// nothing is taken.
func (b *budget) take(n int64) bool {
	for {
		u := b.used.Load()
		if b.limit > 0 && u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			for p := b.peak.Load(); u+n > p && !b.peak.CompareAndSwap(p, u+n); p = b.peak.Load() {
			}
			return true
		}
	}
}

// give gives back n bytes.
func (b *budget) give(n int64) { b.used.Add(-n) }

// readAnswer reads r, an answer's body of length contentLength (-1 when
// unknown), to its end. It takes from b every buffer it allocates and
// returns the bytes taken, which the caller gives back when it no longer
// needs the buffer. It reads no more than limit+1 bytes: a longer body is
// a *tooLargeError, and a buffer b cannot hold is errBufferFull.
func readAnswer(r io.Reader, contentLength, limit int64, b *budget) (body []byte, taken int64, err error) {
	if contentLength > limit {
		return nil, 0, &tooLargeError{limit}
	}
	first := int64(512)
	if contentLength >= 0 {
		first = contentLength + 1 // room to see the end without growing
	}
	first = min(first, limit+1)
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			n := first
			if cap(buf) > 0 {
				n = min(2*int64(cap(buf)), limit+1)
			}
			if !b.take(n) {
				return nil, taken, errBufferFull
			}
			taken += n
			grown := make([]byte, len(buf), n)
			copy(grown, buf)
			buf = grown
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if int64(len(buf)) > limit {
			return nil, taken, &tooLargeError{limit}
		}
		if err == io.EOF {
			return buf, taken, nil
		}
		if err != nil {
			return nil, taken, err
		}
	}
}

// unreachable is the error of a call that got no answer.
func (op *Operation) unreachable(err error) *mcp.CallToolResult {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Err.Error() // without the URL, which may hold credentials
	}
	e := Error{Code: CodeAPIUnreachable,
		Message: fmt.Sprintf("%s %s got no answer: %s", op.Method, op.Path, msg),
		Data:    ErrorData{Suggestion: "The API did not answer in time or could not be reached: call again later with the same arguments.", Status: http.StatusBadGateway}}
	if errors.Is(err, context.DeadlineExceeded) {
		e.Data.Status = http.StatusGatewayTimeout
	}
	return e.result(!op.output)
}

// textStructured is the structured content of an answer that is not a
// JSON object from an operation with an output schema: {"text": body},
// which the schema mcpfit advertises accepts (a strict client rejects a
// result without structured content when the tool has an output schema).
func textStructured(body []byte) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"text": string(body)})
	return b
}
