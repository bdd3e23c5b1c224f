// Package proxy puts ctxfit in front of any MCP server, whatever its
// language and transport: it relays the protocol between clients and the
// server (the upstream) message by message, and keeps what it returns
// within the token budget, with ctxfit_next, ctxfit_details, ctxfit_search
// and ctxfit_query leading to the rest.
//
// The command-line front end is `ctxfit proxy` (cmd/ctxfit).
//
// # What is forwarded
//
// Every JSON-RPC request, response and notification, in both directions,
// including methods the proxy does not know by name: its params and
// results travel as the raw JSON they were (progress tokens, _meta,
// cancellation, ping, logging/setLevel and notifications/message,
// resources and templates, subscribe and notifications/resources/updated,
// prompts, completion, the list_changed notifications, tasks; and the
// upstream's requests of the client: sampling, elicitation, roots/list,
// with notifications/roots/list_changed back). The client's initialize,
// with its capabilities, reaches the upstream. Only the request IDs of the
// client's requests change on the way up (the proxy also asks the upstream
// things of its own), and they are restored on the way back. The proxy
// intercepts:
//
//   - initialize: the answer is the upstream's, with tools.listChanged
//     (a reconnected upstream may list other tools) and resources (the
//     content a shaped result holds back is read with resources/read)
//     added to its capabilities;
//   - tools/list: ctxfit's four tools follow the upstream's on the first
//     page; each guarded tool's outputSchema is rewritten to also accept
//     shaped results ([mcpcore.OutputSchema]) and its _meta gains
//     anthropic/maxResultSizeChars; nothing else of a tool changes. An
//     upstream tool named like one of ctxfit's is left out. When the
//     upstream's whole list (every page, which the proxy reads) is over the
//     catalog budget (the setting catalogBudget, by default the hard cap),
//     the first page is instead the session's budgeted catalog, in one
//     page: ctxfit's tools, ctxfit_find_tools, ctxfit_call_tool and the
//     tools that fit, trimmed to the per-tool budget with a ctxfit://r/...
//     link to the whole definition (see the catalog in docs/proxy.md);
//   - tools/call of ctxfit_find_tools (answered here; after a find of a
//     budgeted catalog the client gets notifications/tools/list_changed
//     and the session's later lists hold the found tools) and of
//     ctxfit_call_tool (forwarded as a call of the tool it names);
//   - tools/call of ctxfit's tools, and resources/read of the
//     ctxfit://r/... links of held-back content: answered by the proxy;
//   - server/discover (the stateless protocol of SEP-2575): answered
//     "method not found", so that clients fall back to initialize; each
//     session of the proxy is one upstream session.
//
// A call of a tool the upstream does not have gets the upstream's own
// answer.
//
// # What is shaped
//
// The results of tools/call, resources/read and prompts/get, from the
// upstream's bytes, as [github.com/ctxfit/ctxfit/mcpfit] shapes tool
// results (pages, summaries, chunks, held-back media; its documentation
// describes them): a resources/read result keeps its contents
// form, a prompts/get result its messages (a shaped message keeps its
// role, and the guidance line follows it). Following every cursor
// reproduces the upstream's output exactly. Errors, task-augmented calls
// (their CreateTaskResult) and results under the threshold pass unchanged;
// a result ctxfit cannot shape (the store is down) answers a tool error
// that says to retry, never the result over the hard cap. Cursors and
// snapshots are bound to the session that got them (its Mcp-Session-Id; a
// stdio client, one a process, binds them to "" as mcpfit does, so that
// proxies sharing a secret and a store honour each other's cursors). In replay mode only
// tools the upstream annotates readOnlyHint or idempotentHint are run
// again; the results of any other are kept.
//
// # Sessions
//
// Each downstream session has its own upstream session: [Proxy.ServeStdio]
// serves one client; [Proxy.Handler] serves streamable HTTP, a session per
// Mcp-Session-Id, at most [Options.MaxSessions] at once, each ended after
// [Options.IdleTimeout] without a message. With [Options.SharedUpstream]
// every session shares one upstream session instead, for stateless
// servers. For a stdio upstream each session starts its own process,
// without the proxy's CTXFIT_* variables ([PassEnv]). Upstreams are stdio ([Command]), streamable HTTP or the
// legacy HTTP+SSE transport ([Upstream].URL, with headers).
//
// # Faults and supervision
//
//   - Reconnect. When a session's upstream goes away (the process exits,
//     the connection breaks) its requests in flight are answered with
//     errors (a tool call: "the upstream server's connection broke during
//     the call"; others: a JSON-RPC error), and it is reconnected after a
//     delay that doubles from [Options.BackoffMin] to [Options.BackoffMax],
//     jittered, and initialized as the client initialized it; the client
//     then gets notifications/tools/list_changed. Subscriptions and log
//     levels are not replayed.
//   - Timeout. A tools/call the upstream does not answer within
//     [Options.CallTimeout] answers a timeout error, and the upstream is
//     told to cancel it.
//   - Circuit breaker. After [Options.BreakerFailures] consecutive failed
//     calls (broken connections, timeouts) of a session, its calls answer
//     an error for [Options.BreakerOpen].
//   - Rate limit. With [Options.Rate] set, each session gets a token
//     bucket; a call over it answers an error that says when to retry.
//   - Bad messages. A stdio line that is not JSON-RPC, or is longer than
//     [MaxMessageSize] (16 MiB), is dropped, never buffered whole: from the
//     client it is answered with a parse error (-32700) or an
//     invalid-request error (-32600); from the upstream, the request it
//     answered gets an error that says so. The session goes on.
//   - Health. Each upstream session is pinged every
//     [Options.PingInterval]; [Proxy.Health] (and /healthz in --listen
//     mode, [Proxy.HealthHandler]) counts the sessions by the state of
//     their upstream (connecting, connected, degraded, disconnected),
//     without their IDs, and names the upstream without its credentials.
//   - Principals. A [Proxy.Handler] session belongs to the credential
//     that made it (Authorization, [Options.CredentialCookies], the TLS
//     client certificate, or none); another credential naming it gets
//     404, and its cursors and links are bound to the credential too.
//
// Proxy errors are tool results with isError set, one text block
// ("Error <code>: <what happened>; <what to do>") and no structured
// content; their _meta holds [MetaError] and, when a retry helps,
// [MetaRetryAfter].
//
// # Logs
//
// Each tools/call a client makes is one Info record, "tool call", with
// tool, request_id (the client's JSON-RPC ID), session, duration_ms,
// status (success, failure or timeout; a tool's own isError is a success
// of the call), reason (the fault, when there is one: see the Status
// constants), tokens_before, tokens_after, the strategy when it was
// shaped and, with [Options.LogArguments], the arguments with secrets
// hidden: the value of every member whose name contains, in any case,
// token, secret, key, pass, pwd, auth, credential, cookie, session or
// signature, or is one of [Options.Redact], at any depth; passwords and
// secret parameters inside URLs and connection strings; cursors logged as
// a short digest ("sha256:" and 12 hex digits). What the record repeats of
// the client's input (strings, the request ID, errors) is cut to 256
// bytes. With a JSON
// handler on standard error (as `ctxfit proxy` sets up) that is one JSON
// line per call; standard output stays the protocol's.
package proxy
