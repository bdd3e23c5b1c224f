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
// A tool result under the Guard's threshold passes through untouched,
// counted as a client counts it: the exact token count of the result's
// JSON (content list, structuredContent, _meta, every member), but for
// images and audio, which count what a model reads of them (an image by
// its pixels, audio by its length; see Config.ImagePixelsPerToken and the
// others), not their base64. One over the threshold is shaped whole,
// within the hard cap by that count, and keeps its structure:
//
//   - content, block by block: the blocks keep their types, order and
//     places (images between texts stay where they were; texts are never
//     joined). The largest text blocks (or embedded text resources), as
//     many as it takes, are each shaped in their place with a share of the
//     budget: the block's text becomes the shaped body (a JSON page of a
//     list or summary of an object; a chunk of a text is the text itself,
//     its bytes as in the original, with where it lies in _meta
//     "dev.ctxfit/chunk"), marked with _meta {"dev.ctxfit/shaped":
//     "block"}, and a text block follows with
//     one line that says what the body holds and how to get more, e.g.
//     `Showing items 1-37 of 500 (3,912 tokens; budget 4,000). For the
//     next page call ctxfit_next with {"cursor":"..."}.` (marked with
//     _meta {"dev.ctxfit/guidance": true}, like every block ctxfit adds).
//   - a content list with more blocks than fit (thousands of links, or
//     more large texts than can each have a page) is sent in pages: a text
//     block with a JSON page of its blocks, as they are ({"items": [...],
//     "nextCursor": ...}, _meta {"dev.ctxfit/shaped": "content"}), and its
//     guidance line; ctxfit_next gives the next pages.
//   - images and audio stay; blobs (embedded resources that are not text),
//     and media alone over the hard cap, are held back behind a
//     resource_link to ctxfit://r/..., which resources/read returns byte
//     for byte, to the session it was issued to.
//   - structuredContent: when large, the shaped body, which also stands in
//     the place of the text blocks that carried it (_meta
//     {"dev.ctxfit/shaped": "structured"}); when there is no room for it
//     twice, it is held back behind a ctxfit://r/... link and its text
//     form is shaped in its place. tools/list advertises each guarded
//     tool's outputSchema as anyOf [the tool's own schema, the page,
//     summary and chunk envelopes] so that clients that validate
//     structured content (the TypeScript SDK: Claude Desktop, MCP
//     Inspector) accept shaped results.
//   - _meta: a fresh map with dev.ctxfit/nextCursor, dev.ctxfit/strategy,
//     dev.ctxfit/hardCap, and dev.ctxfit/tokens and
//     dev.ctxfit/originalTokens, which count the whole shaped result and
//     the whole original (as above, exactly), beside the tool's own keys.
//     A tool's _meta too large to send is held back: dev.ctxfit/heldMeta
//     is the ctxfit://r/... link that reads it.
//   - last, a resource_link (_meta {"dev.ctxfit/original": true}) to the
//     whole original: the tool's result as it came, content list
//     included, byte for byte, which resources/read returns whole or in
//     ranges (?bytes=A-B, ?lines=A-B).
//
// Continuations are held to the same count: a page or chunk of
// ctxfit_next, with its guidance line and _meta, stays within the hard
// cap as a client counts it.
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
