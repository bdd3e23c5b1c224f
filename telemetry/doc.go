// Package telemetry records what ctxfit did to every response it handed to
// an LLM: how many tokens and bytes it held before and after, which strategy
// shaped it, how long that took, and whether anything went wrong.
//
// The package copies the split of log/slog. A [Record] describes one
// response; a [Sink] receives records, as a slog.Handler receives log
// records; built-in sinks cover the common destinations; [Multi] fans one
// record out to several sinks.
//
// # Records
//
// A [Record] carries what happened to one response (request ID,
// endpoint, timestamp, estimated tokens, response bytes, item count, latency, the pagination, summarization and chunking flags and the
// optimization metadata) and what the engine adds: sizes before and after
// shaping, the [Record.Strategy] and [Record.Outcome], a fallback reason,
// the A/B comparison flag, the sampled error of the token estimator and the
// cache result. [Record.Validate] checks that they are consistent.
//
// # Sinks
//
//   - [NewSlogSink] writes one log line per response (WARN for oversized
//     attempts, INFO otherwise).
//   - [Aggregate] keeps the last N records in memory with running totals,
//     answers [Aggregate.Query] with a [Summary] (adoption of each strategy,
//     average sizes, tokens saved, oversize rate, estimator accuracy, cache
//     hit rate), calls a hook when the oversize rate crosses a threshold and
//     writes a JSON [HealthReport].
//   - Package [github.com/ctxfit/ctxfit/telemetry/otelsink] exports the same
//     numbers as OpenTelemetry metrics; it is a separate package so that
//     users who do not want OpenTelemetry do not link it.
//   - [Multi] sends each record to several sinks; one failing sink does not
//     stop the others.
//   - [Async] moves any sink off the request path: [Async.Record] never
//     blocks and never fails; records that do not fit its buffer are dropped
//     and counted.
//
// # Gateway records
//
// An API-to-MCP gateway (package gateway) reports its own events as
// [GatewayRecord] values: start-up and discovery times, validation
// successes, failures and retries, cache hits and misses, sessions opened
// and closed, API calls with their status, and the token reductions of its
// shaped results. A sink receives them when it implements the optional
// [GatewaySink] interface; [RecordGateway] gives a record to any [Sink],
// doing nothing for sinks that do not take them. [Multi], [Async],
// [SlogSink], [Aggregate] ([Aggregate.Gateway], a [GatewaySummary]) and
// otelsink's Sink all do.
//
// # Failure never reaches the response
//
// A sink's error is for the caller to log or count; it never fails a
// request. Wrap slow sinks (a network exporter, a database) in [NewAsync] so
// that they cannot delay one either.
//
// # Estimator accuracy
//
// When the cheap token estimator is in use, the guard counts a small
// fraction of responses (Config.EstimateSample, 1% by default) exactly as
// well; [RelativeError] of the two goes into [Record.EstimateError], and
// [Summary.EstimateAccuracy] reports the fraction of sampled estimates
// within [EstimateTolerance] (20%) of the exact count.
package telemetry
