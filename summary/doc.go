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
// [Response]:
//
//	{"summary":{"id":"BK12345","status":"confirmed",...},
//	 "meta":{"kind":"preview","totalFields":15,"projectedFields":["id","status",...],
//	         "detailsAvailable":{"endpoint":"/api/v1/bookings/BK12345",
//	                             "parameters":{"fields":"guest,priceBreakdown,amenities"}}}}
//
// The fields come from the [Shape] of the response: configured paths, or
// automatic selection of the identifying and primary fields within
// [Options.SummaryTokens] (see [Summarizer.SummarizeContext]): identity
// fields first, then as many real values as fit. [TopN] rules keep the
// best elements of arrays by a score, as the API-to-MCP gateway keeps the
// top three traits by accuracy.
//
// The names of the sections a summary left out take at most a tenth of
// the threshold, by exact count. A wide object whose left-out names would
// take more gets fields=all in its drill-down link, and lists in
// meta.omittedFields as many of those names as fit, in input order, with
// their number in meta.omittedFieldCount (see [Meta]):
//
//	"meta":{"kind":"preview","totalFields":1504,"projectedFields":["id","name",...],
//	        "detailsAvailable":{"endpoint":"/env","parameters":{"fields":"all"}},
//	        "omittedFieldCount":1476,"omittedFields":["NPM_CONFIG_0","HOME_NODE_1",...]}
//
// # Drill-downs
//
// [ServeDetails] answers the drill-down request: fields=all for the whole
// object, fields=a,b for exactly those sections, and dotted paths
// ("guest.address.city", "rooms.id" through an array) for the parts they
// name, as [Project] selects them. Whatever it returns whole is the
// input's own text, byte for byte.
//
// # Cost and cancellation
//
// Parsing, selection, projection, fitting a summary to its budget, meta
// and drill-downs take time linear in the input (sorting the candidate
// fields of a summary, n log n); a summary costs a bounded number of exact
// counts besides the count of the input. [Summarizer.SummarizeContext],
// [ProjectContext] and [ServeDetailsContext] look at their context every
// thousand or so steps and stop soon after it ends, with an error that
// wraps ctx.Err().
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
// [ErrFormatFailed] and [ErrFormatTimeout], and the context's errors.
// Every message starts with "summary:" and stays short: the lists it gives
// are cut, with the number of names left out.
package summary
