// Package proxy puts ctxfit in front of any MCP server that runs over
// stdio, whatever its language: it starts the server as a subprocess,
// connects to it as a client (the official Go SDK), mirrors its tools on a
// server guarded by [github.com/ctxfit/ctxfit/mcpfit], and forwards every
// call, so that the results a model gets stay within the token budget and
// ctxfit_next and ctxfit_details lead to the rest.
//
// The command-line front end is `ctxfit proxy` (cmd/ctxfit).
//
// # Tools
//
// The proxy lists the upstream's tools when it connects and again whenever
// the upstream sends notifications/tools/list_changed, and registers each
// (name, description, schemas and annotations unchanged) on its own server,
// which tells its clients of the change in turn. Arguments are forwarded as
// the client sent them and results come back as the upstream sent them:
// structured content is kept as the upstream's raw JSON, so following every
// cursor reproduces the upstream's output byte for byte. In replay mode
// ([ctxfit.ModeReplay]) a continuation calls the upstream tool again with
// the arguments sealed in the cursor.
//
// # Faults
//
// The upstream is supervised:
//
//   - Restart. When the process exits, or its standard output stops being
//     JSON-RPC (the connection is then broken: the process is stopped), the
//     proxy starts it again after a delay that doubles from
//     [Options.BackoffMin] to [Options.BackoffMax] with every failed
//     restart, with equal jitter, and starts over once an upstream stayed
//     up for [Options.HealthyAfter]. Calls in flight answer a tool error
//     ("the upstream server's connection broke during the call"), calls
//     during the restart answer "the upstream server is restarting; retry
//     in a few seconds", and the proxy keeps serving.
//   - Timeout. A call that gets no answer within [Options.CallTimeout]
//     answers a timeout error; the upstream keeps running.
//   - Circuit breaker ([github.com/sony/gobreaker/v2]). After
//     [Options.BreakerFailures] consecutive failures (broken connections
//     and timeouts; not tool errors, not JSON-RPC errors the upstream sent,
//     not calls refused during a restart) every call answers an error for
//     [Options.BreakerOpen]; then one call probes the upstream and closes
//     the breaker if it succeeds.
//   - Rate limit ([golang.org/x/time/rate]). With [Options.Rate] set, each
//     client (MCP session) gets a token bucket; a call over it answers an
//     error that says when to retry.
//
// Proxy errors are tool results with isError set, one text block
// ("Error <code>: <what happened>; <what to do>") and no structured
// content (clients validate structured content against the tool's output
// schema); their _meta holds [MetaError] and, when a retry helps,
// [MetaRetryAfter].
//
// # Logs
//
// Each tools/call a client makes is one Info record, "tool call", with
// request_id, tool, duration_ms, status (see the Status constants),
// tokens_before and tokens_after, and the session and strategy when there
// are any. With a JSON handler on standard error (as `ctxfit proxy` sets
// up) that is one JSON line per call; standard output stays the protocol's.
package proxy
