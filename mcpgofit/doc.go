// Package mcpgofit keeps the tool results of an MCP server built with
// mark3labs/mcp-go (github.com/mark3labs/mcp-go) inside a token budget,
// losing nothing: [Install] puts a [ctxfit.Guard] in front of every tool,
// and registers the tools that lead to the rest of a shaped result. It is
// the mcp-go sibling of package mcpfit (the official Go SDK); both build
// their results from the same shared code, so a model sees the same texts,
// tools and errors whichever SDK serves it.
//
// # What a model sees
//
// A tool result under the Guard's threshold passes through untouched. One
// over it is replaced by a shaped result:
//
//   - content: a text block with the shaped JSON body (a page of a list, a
//     summary of an object, or a chunk of a text, each within the hard
//     cap), then a text block with one line that says what the body holds
//     and how to get more, e.g. `Showing items 1-37 of 500 (3,912 tokens;
//     budget 4,000). For the next page call ctxfit_next with
//     {"cursor":"..."}.` Both blocks together stay within the hard cap (the
//     line is left out in the rare case it would not fit).
//   - structuredContent: the shaped body, when the tool returned structured
//     content.
//   - _meta: the tool's own _meta with dev.ctxfit/nextCursor, dev.ctxfit/strategy,
//     dev.ctxfit/tokens, dev.ctxfit/originalTokens and dev.ctxfit/hardCap added.
//
// The model follows a cursor with the continuation tool (ctxfit_next,
// {"cursor": "..."}) until there is no next cursor: the pages or chunks
// together are the tool's whole result. It drills into a summary with the
// details tool (ctxfit_details, {"cursor": "...", "fields": "all"}), where
// the cursor is the summary's details cursor (_meta dev.ctxfit/detailsCursor):
// a drill-down opens only a result ctxfit itself summarized, for the caller
// it was issued to.
//
// # Output schemas
//
// MCP clients that validate structured content (the TypeScript SDK: Claude
// Desktop, MCP Inspector) reject a result whose structuredContent does not
// match the tool's outputSchema, and so does mcp-go itself when the server
// is built with [server.WithOutputSchemaValidation], which validates the
// result after the tool middleware, against the tool as registered. Install
// therefore re-registers every tool that has an output schema with the
// schema rewritten to anyOf [the tool's own schema, the page, summary and
// chunk envelopes], and adds a tool filter that shows the same rewrite in
// tools/list for tools registered later (and the original schema for tools
// the Guard's settings disable). Register the tools before calling Install:
// a tool with an output schema added afterwards is rewritten in tools/list
// only, so with WithOutputSchemaValidation its shaped results fail mcp-go's
// own check.
//
// # How continuations run the tool again
//
// In replay mode, and for drill-downs, ctxfit runs the original tool again
// with the arguments sealed in the cursor (or given to ctxfit_details). The
// adapter dispatches a tools/call request for it through the server
// ([server.MCPServer.HandleMessage]) on the caller's session and context,
// marked so that the inner call is not shaped twice: the server's tool
// filters (access control), input validation, middleware and hooks apply to
// the inner call as to a call from the client, so they see two tools/call
// requests (ctxfit_next, then the tool). The inner request is dispatched in
// the pre-2026-07-28 form (no protocol _meta), which needs no per-request
// headers. A continuation served from the store (store mode, the default)
// does not run the tool.
//
// # Errors
//
// Errors the model can fix (a malformed, tampered, expired or foreign
// cursor, an unknown field) are tool results with isError set: a text block
// with the message and a suggestion, and structuredContent holding the
// structured error (code, message, data{parameter, expected, suggestion}).
//
// A call of ctxfit_next or ctxfit_details with missing or mistyped arguments
// is also such a tool result (code "parameter_invalid"), as in mcpfit and
// as the MCP specification (2025-11-25) asks of input validation errors.
// Servers built with [server.WithInputSchemaValidation] reject such calls
// before the handler runs, as tool results too (SEP-1303).
//
// Install fails open: results that are errors (isError), that ask the
// client for input (inputRequests), or that hold anything but text (images,
// audio, resources) pass through untouched. A result that needs shaping
// while the snapshot store is unavailable is a tool error (code
// store_unavailable) that says to retry, as the HTTP adapter's 503 does:
// passing it on whole would break the budget. Task tools
// (AddTaskTool) bypass mcp-go's tool middleware and are never shaped.
package mcpgofit
