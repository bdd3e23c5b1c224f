// Package mcpclientfit keeps what an agent receives from MCP servers it does
// not control inside a token budget, losing nothing: a [Guard] is a sending
// middleware on a client of the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk) that shapes every tools/call and
// resources/read result before the agent reads it, with the same engine,
// budgets and promises as a server guarded by mcpfit, whatever the
// server's language and without a proxy process.
//
// # What the agent receives
//
// A result under the [ctxfit.Guard]'s threshold comes back as the server
// sent it. One over it comes back shaped, as mcpfit shapes it on the
// server side: a text block with the shaped body (a JSON page of a list
// or summary of an object, or a chunk of a text as it is, with where it
// lies in _meta dev.ctxfit/chunk; each within the hard cap), a
// text block with one line that says what the body holds and how to get
// more, _meta with dev.ctxfit/nextCursor, dev.ctxfit/strategy, dev.ctxfit/tokens,
// dev.ctxfit/originalTokens and dev.ctxfit/hardCap; blobs, and media over the hard
// cap, become resource_links to ctxfit://r/... . A resources/read result
// is shaped the same way and keeps the form of a ReadResourceResult (see
// [Guard.Middleware]). A tool's own error (isError) is shaped the same
// way and stays an error. Input requests and calls of tools the Guard's
// settings disable pass through untouched.
//
// # The continuation tools, served locally
//
// The model follows a cursor with ctxfit_next and drills into a summary
// with ctxfit_details. The agent adds [Guard.Tools] to the tools it gives
// the model and runs their calls with [Guard.CallTool], or with
// ClientSession.CallTool on any session the middleware is installed on:
// either way the Guard answers them itself, and no server ever sees those
// calls. resources/read of a ctxfit://r/... URI is answered locally too.
// In store mode (the default) a continuation reads the Guard's snapshot
// store; in replay mode, and for drill-downs, the Guard calls the tool
// again, unshaped, on the session that last called it.
//
// # Subjects
//
// Cursors are bound to a subject: a continuation is served only for the
// subject its cursor was issued to. The subject of a call is
// store.SubjectFrom of its context (set it with store.WithSubject, package
// [github.com/ctxfit/ctxfit/store], for example to the id of the chat
// session the call serves: the subject its snapshots are charged to, too),
// or what [Options.Subject] returns.
//
// # Conversations
//
// [Guard.Keep] implements conversation.Keeper: a tool result that
// conversation.FitContext clears from a chat history is kept with the
// Guard as a snapshot, and the placeholder that replaces it carries the
// ctxfit_next call that reads it back.
package mcpclientfit
