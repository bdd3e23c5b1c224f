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
// The same as with mcpfit: [github.com/ctxfit/ctxfit/mcpfit] describes
// the shaped results (content, structured content, _meta, held-back
// media), the continuation, drill-down, search and query tools, the errors
// and what passes through. What differs with mcp-go follows.
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
// Errors the model can fix are tool results with isError set, as in
// mcpfit. Servers built with [server.WithInputSchemaValidation] reject a
// call of ctxfit_next or ctxfit_details with missing or mistyped arguments
// before the handler runs, as tool results too (SEP-1303). Task tools
// (AddTaskTool) bypass mcp-go's tool middleware and are never shaped.
package mcpgofit
