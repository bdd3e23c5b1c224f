// Package summary shrinks a JSON response that is over its token budget to
// the fields that matter, and tells the model how to fetch the rest, so that
// nothing is lost.
//
// It works on values and JSON bytes, not on HTTP requests: adapters call it
// with the bytes a handler or tool produced.
//
// # Projection
//
// [Project] keeps the fields that dotted paths name ("status",
// "price.basePrice", "guest.address.city", "rooms.id" through an array),
// with their nesting and the key order of the input. The result is always a
// part of the input; a path that names nothing is an [*UnknownPathError]
// that lists the top-level fields, never a silent omission.
//
// # Summaries
//
// A [Summarizer] passes a response of at most [budget.Budget.Threshold]
// tokens through byte for byte, and turns a larger one into a
// [SummaryResponse]:
//
//	{"summary":{"id":"BK12345","status":"confirmed",...},
//	 "meta":{"kind":"preview","totalFields":15,"projectedFields":["id","status",...],
//	         "detailsAvailable":{"endpoint":"/api/v1/bookings/BK12345",
//	                             "parameters":{"fields":"guest,priceBreakdown,amenities"}}}}
//
// The fields come from the [Shape] of the response: configured paths, or
// automatic selection of the identifying and primary fields within
// [Options.SummaryTokens] (see [Summarizer.Summarize]). [TopN] rules keep
// the best elements of arrays by a score, as the API-to-MCP gateway keeps
// the top three traits by accuracy. [ServeDetails] answers the drill-down
// request: fields=all for the whole object, or fields=a,b for exactly those
// sections.
//
// # Compact text
//
// A [Formatter] renders a response as compact text with a [Format] per
// operation (a text/template with relative time, short UUIDs and
// word-boundary truncation), falls back to the JSON when a format fails or
// runs past its time limit, and measures every use in [Metrics].
//
// # Errors
//
// Errors to branch on: [ErrInvalidJSON], [ErrInvalidPath] ([*PathError]),
// [ErrUnknownPath] ([*UnknownPathError]), [ErrNotObject],
// [ErrUnknownField] ([*UnknownFieldError]), [ErrTooLarge]
// ([*TooLargeError]), [ErrInvalidFormat] ([*FormatError]),
// [ErrInvalidOptions], and the fallback reasons [ErrNoFormat],
// [ErrFormatFailed] and [ErrFormatTimeout]. Every message starts with
// "summary:".
package summary
