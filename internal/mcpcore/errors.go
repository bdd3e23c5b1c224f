package mcpcore

import (
	"strings"

	"github.com/ctxfit/ctxfit"
)

// JSON-RPC error codes an adapter returns for protocol-level errors.
const (
	// CodeInvalidParams: the request's parameters are malformed (for
	// example a required argument is missing or has the wrong type).
	CodeInvalidParams = -32602
	// CodeInternalError: anything that is not the client's to fix.
	CodeInternalError = -32603
)

// Error is the structured error payload of ctxfit's MCP tools, in the shape
// of a JSON-RPC error object: a stable machine-readable code, a message,
// and the data a model needs to recover. It is the structuredContent of a
// tool result with isError set (see [Error.Text] for its text block), and
// the data of a JSON-RPC error.
//
// The zero Error is empty; build one with [ErrorOf] or [ArgumentError].
type Error struct {
	// Code is the ctxfit problem code, e.g. "cursor_expired"
	// ([ctxfit.Problem.Code]).
	Code string `json:"code"`
	// Message is what went wrong ([ctxfit.Problem.Detail]).
	Message string `json:"message"`
	// Data says how to recover.
	Data ErrorData `json:"data"`
}

// ErrorData is the recovery advice of an [Error].
type ErrorData struct {
	// Parameter names the tool argument at fault ("cursor", "fields"), if any.
	Parameter string `json:"parameter,omitempty"`
	// Expected says what the argument should hold, if known.
	Expected string `json:"expected,omitempty"`
	// Suggestion says what to do next.
	Suggestion string `json:"suggestion"`
	// RetryAfter is the number of seconds to wait before retrying, 0 for
	// errors that a retry does not fix.
	RetryAfter int `json:"retryAfter,omitempty"`
	// Status is the HTTP status of the problem (400 for bad input).
	Status int `json:"status"`
}

// ErrorOf maps an error of [ctxfit.Guard.Handle] or [ctxfit.Guard.Resume]
// to an [Error] through [ctxfit.ProblemOf], with the tool argument names of
// the continuation and details tools ("cursor", "fields").
func ErrorOf(err error) Error {
	p := ctxfit.ProblemOf(err, ctxfit.Params{})
	return Error{Code: p.Code, Message: p.Detail, Data: ErrorData{
		Parameter: p.Parameter, Expected: p.Expected, Suggestion: p.Suggestion,
		RetryAfter: p.RetryAfter, Status: p.Status,
	}}
}

// ArgumentError returns the [Error] of a bad tool argument that ctxfit's
// engine never saw (for example a missing cursor), with code
// "parameter_invalid" and status 400.
func ArgumentError(parameter, message, expected, suggestion string) Error {
	return Error{Code: "parameter_invalid", Message: message, Data: ErrorData{
		Parameter: parameter, Expected: expected, Suggestion: suggestion, Status: 400,
	}}
}

// Error returns the message, so an Error can be returned as an error.
func (e Error) Error() string { return e.Message }

// Text returns the error as one paragraph for a text content block: the
// message, the argument and what it should hold, and the suggestion, e.g.
//
//	Error cursor_invalid: ctxfit: cursor: invalid signature. Argument "cursor" should be the nextCursor value of a previous response, unchanged. Pass the nextCursor value exactly as it was returned, or request the first page again without a cursor.
func (e Error) Text() string {
	var b strings.Builder
	b.WriteString("Error")
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	b.WriteString(": " + sentence(e.Message))
	if e.Data.Parameter != "" && e.Data.Expected != "" {
		b.WriteString(" Argument \"" + e.Data.Parameter + "\" should be " + sentence(e.Data.Expected))
	}
	if e.Data.Suggestion != "" {
		b.WriteString(" " + sentence(e.Data.Suggestion))
	}
	return b.String()
}

// RPCCode is the JSON-RPC error code for e when an adapter reports it as a
// protocol error: [CodeInvalidParams] for bad input (status 400),
// [CodeInternalError] otherwise.
func (e Error) RPCCode() int {
	if e.Data.Status == 400 {
		return CodeInvalidParams
	}
	return CodeInternalError
}

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}
