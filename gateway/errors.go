package gateway

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Error codes of the tool errors the gateway returns.
const (
	// CodeParameterInvalid: the arguments do not match the input schema;
	// nothing was sent to the API.
	CodeParameterInvalid = "parameter_invalid"
	// CodeAPIError: the API answered with a status outside 2xx.
	CodeAPIError = "api_error"
	// CodeAPIUnreachable: the API could not be reached, or did not answer
	// within the time limit.
	CodeAPIUnreachable = "api_unreachable"
	// CodeAnswerTooLarge: the API's answer is longer than
	// [Options.MaxResponseBytes]; it was not kept.
	CodeAnswerTooLarge = "answer_too_large"
	// CodeBusy: the gateway is at one of its bounds ([Options.MaxCalls]
	// calls in flight for the whole time limit, or
	// [Options.MaxBufferedBytes] of answers held at once); calling again
	// later can succeed.
	CodeBusy = "gateway_busy"
)

// Error is the structured error of a gateway tool: what was wrong
// (parameter, value, expected, suggestion) in the shape of
// ctxfit's other tool errors. A tool result with isError set carries it as
// its text (see [Error.Text]), in _meta under "dev.ctxfit/error", and as
// structuredContent when the tool has no output schema (a client would
// check an error against the schema of a success). It is a plain value:
// the zero Error is empty.
type Error struct {
	// Code is one of the Code* constants.
	Code string `json:"code"`
	// Message says what went wrong.
	Message string `json:"message"`
	// Data says how to recover.
	Data ErrorData `json:"data"`
}

// ErrorData is the recovery advice of an [Error].
type ErrorData struct {
	// Parameter is the argument at fault, a path below the arguments
	// ("status", "body/guests/0/name"); empty when it is not one argument.
	Parameter string `json:"parameter,omitempty"`
	// Value is the argument's value as JSON, shortened to 80 bytes.
	Value string `json:"value,omitempty"`
	// Expected says what the argument should hold.
	Expected string `json:"expected,omitempty"`
	// Suggestion says what to do next.
	Suggestion string `json:"suggestion"`
	// Status is the HTTP status the API answered (CodeAPIError), or 400 for
	// invalid arguments.
	Status int `json:"status,omitempty"`
	// RetryAfter is the number of seconds the API asked to wait, if any.
	RetryAfter int `json:"retryAfter,omitempty"`
	// Excerpt is the start of the API's answer (CodeAPIError).
	Excerpt string `json:"excerpt,omitempty"`
}

func argumentError(parameter, value, expected, message, suggestion string) Error {
	return Error{Code: CodeParameterInvalid, Message: message, Data: ErrorData{
		Parameter: parameter, Value: value, Expected: expected, Suggestion: suggestion, Status: 400,
	}}
}

// Error returns the message.
func (e Error) Error() string { return e.Message }

// Text returns the error as one paragraph, e.g.
//
//	Error parameter_invalid: value must be one of "confirmed", "pending". Argument "status" (got "booked") should be one of "confirmed", "pending". Use one of the allowed values exactly as written.
func (e Error) Text() string {
	var b strings.Builder
	b.WriteString("Error " + e.Code + ": " + sentence(e.Message))
	if e.Data.Parameter != "" {
		b.WriteString(" Argument \"" + e.Data.Parameter + "\"")
		if e.Data.Value != "" {
			b.WriteString(" (got " + e.Data.Value + ")")
		}
		if e.Data.Expected != "" {
			b.WriteString(" should be " + sentence(e.Data.Expected))
		} else {
			b.WriteString(" is at fault.")
		}
	}
	if e.Data.Suggestion != "" {
		b.WriteString(" " + sentence(e.Data.Suggestion))
	}
	return b.String()
}

// result returns e as a tool result; structured tells whether to set
// structuredContent (the tool has no output schema).
func (e Error) result(structured bool) *mcp.CallToolResult {
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: e.Text()}},
		Meta:    mcp.Meta{"dev.ctxfit/error": e},
	}
	if structured {
		b, _ := json.Marshal(e)
		res.StructuredContent = json.RawMessage(b)
	}
	return res
}

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}
