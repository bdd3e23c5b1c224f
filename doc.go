// Package ctxfit keeps what servers hand to an LLM inside the model's context
// window, and loses nothing doing it.
//
// Agents call MCP tools and HTTP APIs. One unbounded list, one verbose record
// or one large log in a tool result overflows the context window: the model
// loses track, the client truncates silently, or the call fails. ctxfit
// measures every response in exact tokens and, when it is over budget, shapes
// it so that nothing is over budget and nothing is lost: whatever it holds
// back stays reachable through signed, expiring cursors.
//
// # The guard
//
// [Guard] is the transport-neutral engine. [Guard.Handle] takes the request's
// ctxfit parameters ([Request]) and a [Fetch] that runs the handler, and
// returns what to send ([Result]):
//
//   - JSON of an endpoint with an [OutputFormat] (and
//     [WrapperConfig.CompactOutput] on), whatever its size: its compact
//     rendering, when the answer, with a details cursor to the original, is
//     smaller than the response (over the threshold, the rendering in
//     chunks, the first with the details cursor); else as below;
//   - under the threshold, the response itself, byte for byte;
//   - a JSON array, or an object whose bulk is one array: a page fitted to the
//     budget with a cursor to the next (an object keeps its other fields);
//   - another large object: a summary with a drill-down link;
//   - text, or a JSON string that dominates the response: chunks cut at
//     semantic boundaries;
//   - anything no strategy brings under the hard cap: a byte-bounded cut with
//     a continuation cursor.
//
// Shaped responses carry estimatedTokens (the exact count of the response
// itself, this metadata included), budgetUsed (that count over the
// threshold, to three decimals, at most 1) and budgetRemaining (threshold
// minus count, at least 0) in their meta.
//
// Continuations find their data in a [store.Store] (store mode, the
// default), under an ID derived from the data so that a response many
// clients page through is kept once, or by running the handler again and
// checking a fingerprint of the data (replay mode). [ProblemOf] maps every
// error to a status, a code and a suggestion an LLM can act on; the
// adapters use it in one place.
// [Config] holds the serializable settings, with per-endpoint overrides;
// [Guard.Reload] swaps them while requests are in flight.
//
// # Adapters
//
//   - [github.com/ctxfit/ctxfit/httpfit]: net/http middleware.
//   - [github.com/ctxfit/ctxfit/mcpfit]: the official MCP Go SDK; its
//     documentation describes what a model sees of a shaped MCP result.
//   - [github.com/ctxfit/ctxfit/mcpgofit]: mark3labs/mcp-go.
//
// All three call the same Guard, so they behave the same.
//
// # Building blocks
//
// Usable on their own, and importing no MCP SDK and no net/http server code:
//
//   - [github.com/ctxfit/ctxfit/budget]: exact token counting (tiktoken's
//     o200k_base and cl100k_base; docs/benchmarks.md compares it with
//     tiktoken-go on real corpora) and the budget itself.
//   - [github.com/ctxfit/ctxfit/cursor]: opaque continuation tokens,
//     encrypted and HMAC-SHA256 signed, expiring, bound to the endpoint and
//     query they were issued for, with key rotation.
//   - [github.com/ctxfit/ctxfit/pagination]: budget-fitted pages
//     (Page[T]).
//   - [github.com/ctxfit/ctxfit/summary]: projections, automatic field
//     selection, drill-downs, top-N and compact text formats.
//   - [github.com/ctxfit/ctxfit/chunk]: semantic chunking with exact token
//     bounds and line ranges.
//   - [github.com/ctxfit/ctxfit/conversation]: fitting a chat history into a
//     budget.
//   - [github.com/ctxfit/ctxfit/store]: the snapshot store and its
//     conformance suite.
//   - [github.com/ctxfit/ctxfit/telemetry]: a record per response and its
//     sinks (slog, an in-memory aggregate, OpenTelemetry metrics).
//   - [github.com/ctxfit/ctxfit/config]: environment variables, JSON and
//     YAML files, hot reload.
//
// The command-line tool is [github.com/ctxfit/ctxfit/cmd/ctxfit].
//
// # Two promises
//
// Nothing over budget: no shaped response exceeds the hard cap, by exact
// count. Nothing lost: following every cursor and drill-down reproduces the
// original data exactly. Property tests hold the packages to both.
package ctxfit
