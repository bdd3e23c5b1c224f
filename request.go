package ctxfit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Request is what the Guard needs to know of the request a response answers:
// where it came from, what it is bound to, and its ctxfit parameters.
// Adapters fill it from an HTTP request or an MCP tool call.
//
// The zero Request is a first request to an unnamed endpoint.
type Request struct {
	// RequestID correlates telemetry; "" means none.
	RequestID string
	// Endpoint is the route pattern ("GET /api/v1/bookings/{id}") or MCP
	// tool name: it selects per-endpoint settings and is the scope cursors
	// are bound to.
	Endpoint string
	// Method is the HTTP method ("" for MCP); cursors are bound to it.
	Method string
	// Path is the concrete path of the request ("/api/v1/bookings/BK1"),
	// or the tool name: cursors are bound to it, so that a cursor continues
	// only the resource it was issued for, and drill-down links use it when
	// no template is configured.
	Path string
	// Subject binds cursors to a tenant, session or principal; "" for none.
	Subject string
	// Order and Filters are the query the response answers; cursors are
	// bound to them, so a cursor used with other filters is rejected.
	Order   string
	Filters json.RawMessage
	// Cursor continues a paged list or a chunked text; "" for a first request.
	Cursor string
	// Part opens a value a shaped response held back: the "ctxfit:part"
	// number of its placeholder, with Cursor set to that response's
	// nextCursor or partCursor. Zero means none.
	Part int64
	// Limit is the page size asked for; 0 means the default.
	Limit int
	// Fields asks for a drill-down: "all" for the whole object (no summary),
	// or a comma-separated list of fields (dotted paths such as
	// "guest.address.city" too). With no Cursor the handler runs and its
	// response is projected; with the Details cursor of a summary, the
	// summarized object is.
	Fields string
	// StartLine and EndLine ask for a line range of a text (1-based,
	// inclusive); 0 means unset.
	StartLine, EndLine int
	// Block is the content block of an MCP tool result the response is
	// (0 for the first, or for a response that is not one): cursors carry
	// it, and Resume returns it, so that a replay can pick the same block.
	Block int
	// Budget, when not zero, is this response's budget instead of the
	// endpoint's, for a caller that shares one response's budget among
	// several parts (the text blocks of an MCP result), or that sends the
	// body inside an envelope of its own (an MCP adapter's continuation).
	// It applies to the response it is set on: a continuation without one
	// has the endpoint's. Its HardCap must be at least MinHardCap.
	Budget budget.Budget
	// Search finds what matches a pattern in the response Cursor belongs
	// to (any cursor of it), instead of continuing it; see [Search].
	Search *Search
	// Query evaluates a jq expression over the JSON response Cursor
	// belongs to, or over the response itself without a Cursor; its
	// results are shaped like a response. At most 1,000 bytes.
	Query string
	// Format asks for the format of pages: FormatJSON or FormatTOON; ""
	// means the endpoint's.
	Format string
	// Unrepeatable says the handler must not run again to continue this
	// response: an MCP tool that is neither read-only nor idempotent,
	// whose second run would repeat what the first changed. In replay mode
	// its snapshot is kept in the store, as in store mode; when the store
	// has no room, what fits is sent without a continuation, and says so.
	Unrepeatable bool
	// Original asks, for a response that is shaped, for Result.Original:
	// a token that reads the whole original back with [Guard.ReadResource]
	// (MCP adapters link it as a resource). Continuations ignore it.
	Original bool

	// resumed is set by Guard.Resume: the cursor is bound to the subject
	// alone, as an MCP continuation tool receives it.
	resumed bool
	// status is the HTTP status of the response being shaped (see
	// Response.Status), which its cursors carry.
	status int
}

// maxScope bounds the endpoint a cursor carries; longer ones (a concrete
// path used as the endpoint, say) are carried as a digest.
const maxScope = 256

// scope is the Endpoint as a cursor carries it.
func (req *Request) scope() string {
	if len(req.Endpoint) <= maxScope {
		return req.Endpoint
	}
	sum := sha256.Sum256([]byte(req.Endpoint))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// boundQuery is what a cursor is bound to besides the scope, subject and
// filters: the method, the concrete path and the order (sealed as one
// digest, whatever their length).
func (req *Request) boundQuery() string {
	return req.Method + "\n" + req.Path + "\n" + req.Order
}

// Response is a handler's response as the Guard sees it.
type Response struct {
	// Body is the response body; the Guard does not modify it. It may keep
	// it after Handle returns (in its Store, or while a shaping that ran
	// past its time limit finishes): an adapter that reuses its buffers
	// reuses this one only after a pass-through (a Record.Outcome of
	// passthrough or bypass).
	Body []byte
	// ContentType is the media type ("application/json", "text/plain; charset=utf-8").
	// Empty means sniffed: JSON when the body is valid JSON, else text when
	// it is valid UTF-8.
	ContentType string
	// CacheHit says whether Body came from a response cache (true) or the
	// handler (false); nil means no cache was consulted. The Guard copies it
	// to the record's CacheHit.
	CacheHit *bool
	// Status is the HTTP status of the handler's response; 0 means 200, or
	// none (MCP). The cursors issued for the response carry it, so that a
	// continuation served from the store answers with the same status
	// (Result.Status): the next page of a 404's body is a 404 too.
	Status int
}

// Result is what the Guard returns for one response.
type Result struct {
	// Body is what to send. For a pass-through it is the handler's body
	// itself, byte for byte.
	Body []byte
	// ContentType is the media type of Body.
	ContentType string
	// Shaped reports whether Body differs from the handler's body.
	Shaped bool
	// Strategy is what was done: one of the telemetry Strategy constants.
	Strategy telemetry.Strategy
	// Next is the cursor that continues the response, "" when none; it is
	// also inside Body. MCP adapters put it in the result's _meta.
	Next string
	// Details is, for a summary, the cursor that drills into the object it
	// summarized: pass it as Cursor with Fields set ("all", or the fields).
	// It opens only that object, for the subject it was issued to. MCP
	// adapters put it in the guidance line and in _meta.
	Details string
	// PartCursor is the cursor that opens the values Body holds back (its
	// placeholders' "ctxfit:part"), "" when it holds none: Next when there
	// is one, else a cursor of its own, also inside Body as partCursor.
	PartCursor string
	// Original is, when the request set Original and the response was
	// shaped, a token for [Guard.ReadResource] that reads back the whole
	// original, bound to the request's subject like a cursor and valid as
	// long as one; "" otherwise (or when the original could not be kept
	// for it, such as a response that must not run again and has no room
	// in the store).
	Original string
	// Guidance is a one-line description of what Body holds and how to get
	// more, for the text an MCP client shows the model, e.g. "Showing items
	// 1-37 of 500 (3,912 tokens; budget 4,000). ...". "" for a pass-through.
	Guidance string
	// Record is the telemetry record of the response (also sent to the
	// Guard's sink).
	Record telemetry.Record
	// Status is the HTTP status of the handler's response that Body
	// answers (Response.Status), for a continuation the status its
	// cursor carries; 0 means 200, or none.
	Status int
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
