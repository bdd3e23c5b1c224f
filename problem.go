package ctxfit

import (
	"errors"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/pagination"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/summary"
)

// Errors of the Guard, beside those of the packages it uses. Test with
// errors.Is.
var (
	// ErrSnapshotGone: the data a cursor leads to is no longer kept (it
	// expired or was evicted from the store).
	ErrSnapshotGone = errors.New("ctxfit: the data this cursor leads to is no longer available; request the first page again without a cursor")
	// ErrDataChanged: in replay mode, the data changed since the cursor was
	// issued.
	ErrDataChanged = errors.New("ctxfit: the data changed since this cursor was issued; request the first page again without a cursor")
	// ErrStoreUnavailable: the snapshot store cannot be reached.
	ErrStoreUnavailable = errors.New("ctxfit: the snapshot store is unavailable; retry the request in a few seconds")
	// ErrBadRequest: a ctxfit parameter is malformed (for example a limit
	// that is not a number).
	ErrBadRequest = errors.New("ctxfit: bad request parameter")
	// ErrPart: a part that names no held-back value, or a part without a
	// cursor.
	ErrPart = errors.New("ctxfit: invalid part")
	// ErrShapeTimeout: the answer to a query, search, fields or lines
	// request could not be made within Config.ShapeTimeout (a jq query or
	// a projection that ran past it). Shaping an answer once it is made
	// never ends in it: past the limit, a cheap lossless part of the
	// answer is sent instead (a byte cut, or a search page bounded by
	// bytes), as for any other response. Nothing was sent; retrying may
	// succeed.
	ErrShapeTimeout = errors.New("ctxfit: shaping the response took longer than its time limit; retry the request in a moment, or ask for less (a filter, a smaller limit)")
	// ErrBusy: the guard is shaping as many responses, or as many bytes,
	// as Config.MaxConcurrentShaping and Config.MaxShapingBytes allow (or
	// as many of the request's subject as Config.MaxShapingPerSubject
	// allows), and no room came within Config.AdmissionWait. Nothing was sent;
	// retrying in a moment may succeed.
	ErrBusy = errors.New("ctxfit: the server is shaping as many responses as it allows right now; retry the request in a moment")
	// ErrResponseTooLarge: the handler's response (decoded, when it was
	// compressed) is larger than the adapter may hold to shape it
	// (Config.MaxBufferBytes); it was not sent, since it would be over
	// the hard cap.
	ErrResponseTooLarge = errors.New("ctxfit: the server's response is larger than it may hold to fit it to the budget; ask for less (a filter, a smaller page of the API's own), or the operator raises maxBufferBytes")
	// ErrResponseEncoding: the handler's response has a Content-Encoding
	// the adapter cannot decode to shape it (gzip and deflate it can), or
	// a body that does not decode; it was not sent.
	ErrResponseEncoding = errors.New("ctxfit: the server's response is compressed in a way ctxfit cannot read to fit it to the budget (it reads gzip and deflate); the operator makes the handler use one of them, or none")
)

// Problem describes an error for a client, in the shape of RFC 9457
// problem details plus the fields an LLM needs to recover: the parameter at
// fault, what was expected, and a suggestion.
type Problem struct {
	// Status is the HTTP status: 400 for bad input, 503 when the store is
	// unavailable or shaping is busy or out of time, 502 for a handler's
	// response the adapter cannot hold or read to shape it, 500 for
	// anything else (which the Guard never returns for bad input).
	Status int `json:"status"`
	// Code is a stable machine-readable code, e.g. "cursor_expired".
	Code string `json:"code"`
	// Title is a short summary of the kind of problem.
	Title string `json:"title"`
	// Detail is the error message.
	Detail string `json:"detail"`
	// Parameter names the request parameter at fault, if any.
	Parameter string `json:"parameter,omitempty"`
	// Expected says what the parameter should hold.
	Expected string `json:"expected,omitempty"`
	// Suggestion says what to do next.
	Suggestion string `json:"suggestion"`
	// RetryAfter is the number of seconds to wait before retrying (503).
	RetryAfter int `json:"retryAfter,omitempty"`
}

// ProblemOf maps an error returned by the Guard to a [Problem]. It is the
// one place where errors become HTTP statuses and client messages; the MCP
// adapters use it too. params names the request parameters as configured.
func ProblemOf(err error, params Params) Problem {
	p := resolved(Config{Params: params}).Params
	var limitErr *pagination.LimitError
	var lineErr *chunk.LineRangeError
	switch {
	case errors.Is(err, cursor.ErrExpired):
		return Problem{Status: 400, Code: "cursor_expired", Title: "Cursor expired", Parameter: p.Cursor,
			Expected:   "a cursor issued within its lifetime",
			Suggestion: "Request the first page again without a cursor, then follow the new cursors promptly."}.with(err)
	case errors.Is(err, cursor.ErrMismatch):
		return Problem{Status: 400, Code: "cursor_mismatch", Title: "Cursor belongs to another request", Parameter: p.Cursor,
			Expected:   "a cursor issued for this same request: its endpoint, path, method, filters and order",
			Suggestion: "Repeat the request with the same endpoint, filters and order the cursor was issued for, or request the first page again without a cursor."}.with(err)
	case errors.Is(err, cursor.ErrInvalid), errors.Is(err, cursor.ErrMalformed):
		return Problem{Status: 400, Code: "cursor_invalid", Title: "Invalid cursor", Parameter: p.Cursor,
			Expected:   "the nextCursor value of a previous response, unchanged",
			Suggestion: "Pass the nextCursor value exactly as it was returned, or request the first page again without a cursor."}.with(err)
	case errors.Is(err, ErrSnapshotGone), errors.Is(err, ErrDataChanged):
		return Problem{Status: 400, Code: "cursor_stale", Title: "Data behind the cursor is gone", Parameter: p.Cursor,
			Suggestion: "Request the first page again without a cursor."}.with(err)
	case errors.As(err, &limitErr), errors.Is(err, pagination.ErrInvalidLimit):
		return Problem{Status: 400, Code: "limit_invalid", Title: "Invalid limit", Parameter: p.Limit,
			Expected:   "an integer from 1 to the maximum page size (0 or absent means the default)",
			Suggestion: "Ask for a smaller limit, or leave it out and follow nextCursor."}.with(err)
	case errors.Is(err, summary.ErrUnknownField), errors.Is(err, summary.ErrUnknownPath), errors.Is(err, summary.ErrInvalidPath):
		return Problem{Status: 400, Code: "fields_invalid", Title: "Unknown field", Parameter: p.Fields,
			Expected:   `"all" or a comma-separated list of the object's top-level fields`,
			Suggestion: "Use fields=all for the whole object, or name only fields listed in the error."}.with(err)
	case errors.As(err, &lineErr), errors.Is(err, chunk.ErrLineRange):
		return Problem{Status: 400, Code: "line_range_invalid", Title: "Invalid line range", Parameter: p.StartLine,
			Expected:   "1 <= startLine <= endLine <= the number of lines",
			Suggestion: "Ask for a line range inside the text, as the error says."}.with(err)
	case errors.Is(err, ErrPart):
		return Problem{Status: 400, Code: "part_invalid", Title: "Invalid part", Parameter: p.Part,
			Expected:   `the "ctxfit:part" number of a placeholder in the response the cursor came with`,
			Suggestion: "Copy the number from the placeholder, and pass it with that response's nextCursor or partCursor."}.with(err)
	case errors.Is(err, ErrBadRequest):
		return Problem{Status: 400, Code: "parameter_invalid", Title: "Invalid parameter",
			Suggestion: "Fix the parameter as the error says and retry."}.with(err)
	case errors.Is(err, ErrShapeTimeout):
		return Problem{Status: 503, Code: "shaping_timeout", Title: "Shaping took too long",
			Suggestion: "Retry the same request in a moment, or narrow it with filters.", RetryAfter: 1}.with(err)
	case errors.Is(err, ErrBusy):
		return Problem{Status: 503, Code: "shaping_busy", Title: "Too many responses being shaped",
			Suggestion: "Retry the same request in a moment.", RetryAfter: 1}.with(err)
	case errors.Is(err, ErrResponseTooLarge):
		return Problem{Status: 502, Code: "response_too_large", Title: "Response too large to fit",
			Suggestion: "Ask for less: add filters, or a smaller page of the API's own."}.with(err)
	case errors.Is(err, ErrResponseEncoding):
		return Problem{Status: 502, Code: "response_encoding", Title: "Response compressed in an unreadable way",
			Suggestion: "Retry without asking for compression (no Accept-Encoding); if it keeps failing, the server's operator must fix it."}.with(err)
	case errors.Is(err, ErrStoreUnavailable), errors.Is(err, store.ErrUnavailable):
		return Problem{Status: 503, Code: "store_unavailable", Title: "Snapshot store unavailable",
			Suggestion: "Retry the same request in a few seconds.", RetryAfter: 5}.with(err)
	default:
		// An internal error's text may hold anything (a panic's value, a
		// backend's message): the client gets a generic detail, and the
		// Guard logs the error.
		return Problem{Status: 500, Code: codeInternal, Title: "Internal error", Detail: errInternal.Error(),
			Suggestion: "Retry the request; if it keeps failing, request the first page again without a cursor."}
	}
}

// codeInternal is the code of a problem no other case explains.
const codeInternal = "internal"

// errInternal is what a client is told of an internal error.
var errInternal = errors.New("ctxfit: internal error; the server logged the cause")

func (p Problem) with(err error) Problem {
	p.Detail = shorten(err.Error(), maxDetail)
	return p
}

// maxDetail bounds a problem's detail, which may echo input (a fields
// parameter, the names an object has): a problem document stays small.
const maxDetail = 600

// shorten cuts s to at most n bytes at a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("… (shortened)")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (shortened)"
}
