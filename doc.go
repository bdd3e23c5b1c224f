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
// # Packages
//
// The root package will hold the transport-neutral engine. The packages it
// builds on are usable on their own:
//
//   - [github.com/ctxfit/ctxfit/budget] counts tokens exactly (tiktoken's
//     o200k_base and cl100k_base, tens of times faster than tiktoken-go and
//     allocation-free) and holds the threshold and hard cap of a response.
//   - [github.com/ctxfit/ctxfit/cursor] issues opaque continuation tokens:
//     encrypted, HMAC-SHA256-signed, expiring, bound to the endpoint and query
//     they were issued for, with key rotation.
//   - [github.com/ctxfit/ctxfit/pagination] turns lists into pages sized to a
//     token budget, with a cursor to the next page, following the data model's
//     PaginatedResponse.
//
// The command-line tool is [github.com/ctxfit/ctxfit/cmd/ctxfit]: `ctxfit demo`
// shows the packages at work on generated data, `ctxfit count` counts the
// tokens of a file.
//
// # Two promises
//
// Nothing over budget: no shaped response exceeds the hard cap, by exact
// count. Nothing lost: following every cursor reproduces the original data
// exactly. The property tests of each package hold the code to both.
package ctxfit
