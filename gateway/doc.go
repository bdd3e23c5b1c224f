// Package gateway turns an HTTP API with an OpenAPI 3.0 or 3.1 (or
// Swagger 2.0) description into MCP tools whose results ctxfit keeps inside the model's context
// window: one tool per operation, arguments validated before the call,
// every result guarded by mcpfit exactly as any other tool's (pass-through
// under the threshold; pages, summaries with drill-down, chunks, search,
// query and resource links over it), and GET results cached.
//
//	doc, err := gateway.Load(ctx, "https://api.example.com/openapi.json", nil)
//	gw, err := gateway.New(doc, guard, &gateway.Options{
//		Header: http.Header{"Authorization": {"Bearer " + token}},
//	})
//	defer gw.Close()
//	err = gw.Server().Run(ctx, &mcp.StdioTransport{})
//
// The command `ctxfit gateway --openapi FILE_OR_URL` serves the same over
// stdio or streamable HTTP.
//
// # Parsing
//
// A document is read as decoded JSON (YAML is decoded into the same
// values), not into github.com/getkin/kin-openapi's model: kin-openapi
// unmarshals each nested schema again at every level, which took 10 s for
// GitHub's 13 MB document, and compiling every schema at start took as
// long again. Decoding costs no more than the JSON itself; the tools'
// schemas are built from the decoded values, and compiled for validation
// at a tool's first call. A Swagger 2.0 document is converted to OpenAPI
// 3.0 on the decoded values too (body and formData parameters become the
// request body, collectionFormat a style, definitions components). [Load] inlines external references
// ($ref to another file or URL) beside the document (its directory and
// below, or its URL's origin and directory) or under
// [LoadOptions.AllowRefs]; another is a warning ([Document.Warnings]).
//
// A document is not refused for what it gets wrong about one operation: an
// operation the gateway cannot serve (a reference that does not resolve,
// a required request body of no media type it sends) is skipped, logged
// by [New] with its reason and counted in [Stats]. Path templates that
// differ only in parameter names are not a conflict: the gateway calls
// paths, it does not route them. A path template's parameter the document
// does not declare is a required string argument.
//
// # Tools from operations
//
// [Operations] makes one [Operation] per operation:
//
//   - name: the operationId (or the method and path when there is none)
//     with characters outside [A-Za-z0-9_.-] replaced by "_", cut to 128
//     characters, and made unique with a suffix _2, _3, ...; never the
//     name of one of ctxfit's own tools.
//   - description: the summary and the description, then the method and
//     path and tags: "List bookings. ... (GET /api/v1/bookings; tags:
//     bookings)".
//   - input schema: an object with one property per path, query, header
//     and cookie parameter, and "body" for the request body (JSON first,
//     then merge-patch, other +json types, a form, multipart or text, in
//     that order of preference among the media types the document
//     declares; when it declares several of them, "contentType" picks
//     one, the preferred by default); path parameters are required, as are the others the
//     document marks required; no other property is accepted. A name two
//     parameters share is prefixed with the location of the second
//     ("query_id").
//   - output schema: the schema of the first JSON 2xx response when it is
//     an object (MCP output schemas are objects); none otherwise. mcpfit
//     rewrites it so that shaped results validate too.
//   - annotations: GET and HEAD readOnlyHint, PUT idempotentHint, DELETE
//     destructiveHint; all openWorldHint.
//
// Schemas become self-contained JSON Schema 2020-12: component references
// are inlined (a recursive one becomes {}, which accepts anything),
// OpenAPI 3.0's nullable and boolean exclusiveMinimum/exclusiveMaximum are
// rewritten, and keywords JSON Schema does not have (example,
// discriminator, xml, externalDocs, x-*) are dropped.
//
// [Options.Include] selects operations by operationId, tool name, tag,
// path pattern ("/bookings/*") or "METHOD /path".
//
// # The tool catalog
//
// A tool list over the catalog budget (the guard's setting catalogBudget,
// by default the hard cap) is served as a budgeted catalog: ctxfit's tools,
// ctxfit_find_tools (which searches every operation's tool name,
// description, tags and method and path), ctxfit_call_tool (which calls
// one, as a call of that tool) and the tools that fit, each definition
// within the per-tool budget or trimmed with a ctxfit://r/... link to the
// whole. Within the budget tools/list is every tool. After a find, every
// session is told the list changed, and the finding session's list holds
// the found tools. ctxfit_find_tools and ctxfit_call_tool are reserved
// names, as ctxfit's own tools are.
//
// # Calls
//
// A call's arguments are validated against the input schema with
// github.com/google/jsonschema-go (which the MCP SDK uses); as it reports a
// message only, the gateway walks the schema again to name the violation:
// its location in the arguments and its keyword, following, under an
// anyOf or oneOf, the alternative that got furthest. Formats (date-time,
// date, time, email, uuid, ipv4, ipv6, uri, uri-reference, regex) are
// asserted on arguments, not on answers. A
// violation is a tool result with isError set and an [Error] of code
// parameter_invalid: the parameter, its value (shortened to 80 bytes), what
// is expected and a suggestion, so that a model can correct its call;
// nothing is sent to the API.
//
// A valid call becomes one HTTP request to the base URL ([Options.BaseURL],
// else the document's first server): path parameters escaped into the
// path in their style (simple, label or matrix), query parameters in
// theirs (form, arrays repeated unless explode is false; spaceDelimited,
// pipeDelimited, deepObject), header parameters, cookie parameters in one
// Cookie header, then [Options.Header] (credentials, never logged), and
// the body in its media type (a form and deepObject nest objects in
// brackets, name[key]=value). Formats (date-time, uuid, email, ...) are
// checked with the arguments. It
// has [Options.Timeout] (30 s by default). A 2xx JSON answer is the result's
// text, and its structured content when the tool has an output schema and
// the answer is an object that matches it (an answer that does not is
// delivered as text, under the {"text"} envelope the advertised schema
// admits, and logged: a strict client would otherwise throw it away); text stays text; other media become an embedded
// resource, which mcpfit holds back behind a link. Any other status is a
// tool error of code api_error with the status, an excerpt of the body (300
// bytes) and a suggestion that depends on the status; no answer at all is
// api_unreachable.
//
// # Bounds
//
// The gateway sends [Options.Header] only to the API's origin: a redirect
// to another scheme, host or port is not followed (Go's client would drop
// Authorization and Cookie there, but not X-Api-Key and the like); the
// call is an api_error that names the other origin. A path argument that
// is empty, or has a "." or ".." segment (split at slashes and
// backslashes, as given or percent-decoded once), would take the request
// out of the operation's path once a server resolves it; it is refused as
// parameter_invalid and nothing is sent. Other values are percent-encoded
// into their segment.
//
// At most [Options.MaxCalls] calls (16) are in flight at once; the others
// wait within their time limit. One answer is read up to
// [Options.MaxResponseBytes] (16 MiB once decompressed, so a gzip bomb
// costs no more), answer_too_large beyond; the buffers of all answers
// being read take at most [Options.MaxBufferedBytes] (128 MiB), and a call
// that would need more is gateway_busy. [Options.MaxSessions] (64) bounds
// the sessions served at once. A call ends at its time limit, when the
// client cancels it, and when the client's connection goes: the API
// request ends with it.
//
// # Cache
//
// Results of read-only tools (GET and HEAD) are served from a response
// cache (package cache through mcpfit's Options.Cache): an hour and 1,000
// entries by default, keyed by tool, caller and canonical arguments. Errors
// are never cached.
//
// # Metrics
//
// [Gateway.Stats] reports start-up time, discovery time (a session's
// first request to its first tools/list), validation successes and
// failures, retries after a failure, API calls and errors, answers outside
// their output schema, the operations skipped and the document's
// warnings, the token
// reductions of shaped results (the mean, and for summaries the share that
// cut 70% or more), cache hits and misses, the sessions (current and
// peak) and the peak of the bytes buffered to read answers.
//
// The same events go, as they happen, to [Options.Sink] when it is a
// telemetry.GatewaySink: one telemetry.GatewayRecord per start-up,
// discovery, validation, retry, cache lookup, session opened or closed, API
// call (with its status) and shaped result. telemetry.Aggregate adds them
// up, telemetry.SlogSink logs them and package telemetry/otelsink exports
// them as the ctxfit.gateway.* metrics. Give the guard the same sink
// (ctxfit.Options.Sink) to have its records of every result beside them.
package gateway
