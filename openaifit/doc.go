// Package openaifit holds the OpenAI-compatible pieces of an agent that
// gives MCP tools to a model, without a provider SDK: MCP tool definitions
// as OpenAI function-calling definitions and back ([Toolset],
// [ToFunction], [FromFunction]), the wire types of chat completions
// ([ChatRequest], [ChatResponse], [ErrorBody]), and a net/http
// [Middleware] for an OpenAI-compatible POST /v1/chat/completions endpoint
// that fits each request's messages to the model's context window
// ([conversation.FitContext]) and limits each client with a token bucket
// (capacity 10 by default, refill configurable, keyed by client IP or a header), answering 429 with
// Retry-After and an OpenAI-style error body.
//
// # Tools
//
// An MCP tool becomes {"type":"function","function":{"name",
// "description","parameters"}}: the parameters are the tool's input
// schema. OpenAI limits function names to 64 of a-z, A-Z, 0-9, '_' and
// '-'; a tool name outside that ("files.read", a long name) gets a name
// from [FunctionName], and a [Toolset] maps a model's tool call back to
// the MCP tool and its arguments ([Toolset.Call]). The continuation and
// drill-down tools of mcpclientfit convert like any other tool.
//
// # Fitting a request
//
// The messages may use the whole context window less the reply
// (max_completion_tokens, max_tokens, or [Options.ReplyTokens]) and the
// tools' definitions. A message's content may be a string, null, or an
// array of parts: a text part counts as its text, any other part (an
// image, audio) as its JSON, which over-counts it. A tool result cleared
// behind a placeholder is kept, by the Keeper, as the text the model read
// (the parts of an array content joined by newlines).
package openaifit
