package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of what the gateway reads of an answer.
const (
	// maxBody bounds the body of an API answer the gateway reads, in bytes;
	// a longer one is an error (ctxfit shapes what it gets, so a larger
	// limit only costs memory).
	maxBody = 64 << 20
	// maxExcerpt bounds the excerpt of an error answer, in bytes.
	maxExcerpt = 300
)

// buildRequest returns the HTTP request of a call of op with args (valid
// against the input schema) to the API at base.
func (op *Operation) buildRequest(ctx context.Context, base *url.URL, args map[string]any, header http.Header) (*http.Request, error) {
	p := op.Path
	query := url.Values{}
	hdr := http.Header{}
	for _, pr := range op.params {
		v, ok := args[pr.arg]
		if !ok || v == nil {
			continue
		}
		switch pr.in {
		case "path":
			p = strings.ReplaceAll(p, "{"+pr.name+"}", url.PathEscape(scalar(v)))
		case "query":
			if list, ok := v.([]any); ok {
				if pr.explode {
					for _, x := range list {
						query.Add(pr.name, scalar(x))
					}
				} else {
					query.Set(pr.name, joined(list))
				}
				continue
			}
			query.Set(pr.name, scalar(v))
		case "header":
			if list, ok := v.([]any); ok {
				hdr.Set(pr.name, joined(list))
				continue
			}
			hdr.Set(pr.name, scalar(v))
		}
	}
	u := *base
	raw := strings.TrimSuffix(base.EscapedPath(), "/") + p
	unescaped, err := url.PathUnescape(raw)
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", raw, err)
	}
	u.Path, u.RawPath = unescaped, raw
	u.RawQuery = query.Encode()

	var body io.Reader
	if op.bodyArg != "" {
		if v, ok := args[op.bodyArg]; ok {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			body = bytes.NewReader(b)
			hdr.Set("Content-Type", op.bodyType)
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

func joined(list []any) string {
	s := make([]string, len(list))
	for i, x := range list {
		s[i] = scalar(x)
	}
	return strings.Join(s, ",")
}

// answer turns the API's answer into a tool result: a 2xx JSON body is the
// text of one block (and the structured content when op has an output
// schema and the body is an object), text stays text, anything else is an
// embedded resource (which ctxfit holds back behind a link); other
// statuses are tool errors.
func (op *Operation) answer(resp *http.Response) *mcp.CallToolResult {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err == nil && len(body) > maxBody {
		err = fmt.Errorf("the answer is larger than %d MiB", maxBody>>20)
	}
	if err != nil {
		return op.unreachable(err)
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
		if op.output && bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
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
