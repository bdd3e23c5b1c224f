// Package mcpfit keeps the tool results of an MCP server built with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk) inside a token
// budget, losing nothing: [Install] puts a [ctxfit.Guard] in front of every
// tool, and registers the tools that lead to the rest of a shaped result.
//
// This documentation is the one description of how ctxfit shapes MCP
// results; package mcpgofit (mark3labs/mcp-go) and package proxy (any MCP
// server) build their results from the same shared code and refer to it.
//
// # What a model sees
//
// A tool result under the Guard's threshold passes through untouched. One
// over it is replaced by a shaped result, block by block (a result with
// structured content is shaped as one body; large text blocks are each
// shaped in their place with a share of the budget, small ones stay):
//
//   - content: a text block with the shaped JSON body (a page of a list, a
//     summary of an object, or a chunk of a text, each within the hard
//     cap), then a text block with one line that says what the body holds
//     and how to get more, e.g. `Showing items 1-37 of 500 (3,912 tokens;
//     budget 4,000). For the next page call ctxfit_next with
//     {"cursor":"..."}.` The body comes first because it is what clients
//     that read only the first block, or that parse it as the JSON of
//     structuredContent, need; both blocks together stay within the hard
//     cap (the line is left out in the rare case it would not fit). A
//     resource_link to the whole original (ctxfit://r/...) follows when the
//     hard cap has room for it.
//   - images and audio: they stay, counted as what a model reads of them
//     (an image by its pixels, audio by its length; see
//     Config.ImagePixelsPerToken and the others), not as base64 text.
//     Blobs (embedded resources that are not text), and media alone over
//     the hard cap, are held back behind a resource_link to ctxfit://r/...,
//     which resources/read returns byte for byte, to the session it was
//     issued to.
//   - structuredContent: the shaped body, when the tool returned structured
//     content. tools/list advertises each guarded tool's outputSchema as
//     anyOf [the tool's own schema, the page, summary and chunk envelopes]
//     so that clients that validate structured content (the TypeScript SDK:
//     Claude Desktop, MCP Inspector) accept shaped results.
//   - _meta: a fresh map with dev.ctxfit/nextCursor, dev.ctxfit/strategy,
//     dev.ctxfit/tokens, dev.ctxfit/originalTokens and dev.ctxfit/hardCap, beside the
//     tool's own _meta keys.
//
// The model follows a cursor with the continuation tool (ctxfit_next,
// {"cursor": "..."}) until nextCursor is null: the pages or chunks together
// are the tool's whole result. It drills into a summary with the details
// tool (ctxfit_details, {"cursor": "...", "fields": "all"}), where the
// cursor is the summary's details cursor (_meta dev.ctxfit/detailsCursor): a
// drill-down opens only a result ctxfit itself summarized, for the caller
// it was issued to, never a tool the model names. ctxfit_search and
// ctxfit_query find what matches in a shaped result (a pattern, a jq
// expression) from its cursor.
//
// # How continuations run the tool again
//
// In replay mode, and for drill-downs, ctxfit must run the original tool
// again with the arguments sealed in the cursor. The SDK has no public way
// to call a registered tool, so the middleware keeps the method handler it
// wraps (the rest of the server's receiving chain: the middleware added
// before Install, then the SDK's own dispatch with its input validation) and
// ctxfit_next and ctxfit_details send it a tools/call request on the
// caller's session. Any tool the server has, however registered, can be
// continued, and the inner call is never shaped twice. Middleware added
// after Install runs once, for the call of ctxfit_next itself.
//
// What a re-run may run is narrow: only the call its cursor was issued for
// (tool and arguments sealed and signed in it), for the caller it was
// issued to (see [Options.Subject]), within the cursor's lifetime, and only
// for a tool annotated read-only or idempotent. That call passed the whole
// chain when it was made; a policy of middleware added after Install that
// changes within the cursor's lifetime is not checked again for the re-run.
// Where that matters, add such middleware before Install, or use store
// mode, where a continuation never runs the tool.
//
// # Errors
//
// Errors the model can fix (a malformed, tampered, expired or foreign
// cursor, an unknown field) are tool results with isError set, a text block
// with the message and a suggestion, and structuredContent holding the
// structured error (code, message, data{parameter, expected, suggestion}).
// A call of ctxfit_next or ctxfit_details with missing, mistyped or unknown
// arguments is such a tool result too (code "parameter_invalid", with the
// parameter, what it expects and a suggestion), as the MCP specification
// (2025-11-25) asks of input validation errors so that the model can
// correct its call, and as mcpgofit answers: JSON-RPC -32602 is left to the
// SDK for requests that are not tool calls.
//
// Install fails open: results that ask the client for input
// (inputRequests) pass through untouched, and errors (isError) do within
// the hard cap (over it, the egress gate cuts them, still errors). A result
// that needs shaping while the snapshot store is unavailable is a tool
// error (code store_unavailable) that says to retry, as the HTTP adapter's
// 503 does: passing it on whole would break the budget.
package mcpfit
