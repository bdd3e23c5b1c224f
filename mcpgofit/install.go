package mcpgofit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/cachedfetch"
	"github.com/ctxfit/ctxfit/internal/jsonwire"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// Options configure [Install]. A nil *Options, like the zero value, means
// the defaults. Install copies the Options; changing them afterwards has no
// effect.
type Options struct {
	// NextTool is the name of the continuation tool. Empty means
	// "ctxfit_next".
	NextTool string
	// SearchTool and QueryTool are the names of the tools that search and
	// query a shaped result. Empty means "ctxfit_search" and
	// "ctxfit_query".
	SearchTool, QueryTool string
	// DetailsTool is the name of the drill-down tool. Empty means
	// "ctxfit_details".
	DetailsTool string
	// Subject returns what cursors are bound to for a call: a cursor is
	// accepted only from a call with the same subject. Nil means the client
	// session's ID (server.ClientSessionFromContext), which is unique per
	// streamable HTTP, SSE or in-process session, "stdio" for stdio (one
	// client per process), and "" when the call has no session. Set it to
	// bind cursors to a principal instead (for example a user ID your
	// authentication put in the context). It is called concurrently, from
	// every tool call.
	Subject func(ctx context.Context, req mcp.CallToolRequest) string
	// Cache serves the results of guarded read-only tools (annotated
	// readOnlyHint: a cached result stands in for running the tool, which
	// must then change nothing) from a response cache (package cache),
	// keyed by tool name, subject and canonical arguments;
	// the re-invocations of ctxfit_next (replay mode) and ctxfit_details use
	// the same entries. Nil means no caching. Only results ctxfit could shape
	// are stored: never errors, input requests or non-text content. On a hit
	// the tool does not run and its result is rebuilt from the stored body
	// (structured content and its JSON as text when the tool returned
	// structured content, else one text block); the tool's own _meta is not
	// kept.
	Cache *cache.Cache
}

// Install guards every tool of s with g and registers the continuation and
// drill-down tools (see the package documentation). It:
//
//   - adds a tool handler middleware ([server.MCPServer.Use]) that reads the
//     tool name, the arguments (in canonical form, [ctxfit.Request.Filters])
//     and the subject (see [Options.Subject]) of each call, runs the tool,
//     and passes its result through [ctxfit.Guard.Handle]: a result under
//     the threshold is returned untouched, one over it is replaced by a
//     shaped result. Tools whose [ctxfit.Endpoint] (Match = tool name) is
//     Disabled pass through, as do input requests, and errors within the
//     hard cap (every result passes the egress gate last, which cuts what
//     is still over the cap to its first bytes and a ctxfit:// link);
//   - re-registers the tools of s that have an output schema with the
//     schema rewritten to accept shaped results too, and adds a tool filter
//     ([server.WithToolFilter]) that shows the rewrite in tools/list;
//   - registers the tools ctxfit_next and ctxfit_details (or the names in
//     opts).
//
// Call Install once per server, after registering its tools and before it
// serves; s and g must outlive the server's sessions. Middleware added with
// Use before Install runs outside ctxfit (it sees the shaped result),
// middleware added after runs inside (it sees the tool's own result). Install
// fails open (see package mcpfit's documentation) and returns an error for a nil
// server or guard, or a tool name that is taken.
func Install(s *server.MCPServer, g *ctxfit.Guard, opts *Options) error {
	if s == nil || g == nil {
		return errors.New("mcpgofit: Install needs a server and a guard")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	a := &adapter{s: s, g: g, subject: o.Subject, cache: o.Cache, names: mcpcore.Names{Next: o.NextTool, Details: o.DetailsTool, Search: o.SearchTool, Query: o.QueryTool}.WithDefaults()}
	a.shaper = &mcpcore.Shaper{Guard: g, Names: a.names}
	if err := a.names.Distinct(); err != nil {
		return fmt.Errorf("mcpgofit: %w", err)
	}
	for _, name := range a.names.All() {
		if s.GetTool(name) != nil {
			return fmt.Errorf("mcpgofit: the server already has a tool named %q (is ctxfit installed twice?)", name)
		}
	}
	a.rewriteRegistered()
	s.Use(a.middleware)
	server.WithToolFilter(a.filter)(s) // a ServerOption is a func(*MCPServer): it applies to a built server too
	server.WithResourceHandlerMiddleware(a.readMiddleware)(s)
	server.WithPromptHandlerMiddleware(a.promptMiddleware)(s)
	// mcp-go has no completion/complete middleware, but it hands the result
	// to its after-complete hooks before it sends it: the gate rewrites it
	// there. The server's own hooks stay.
	hooks := s.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(s)
	}
	hooks.AddAfterComplete(a.gateCompletion)
	// Read-only: a continuation reads a snapshot, or runs again only a tool
	// that is read-only or idempotent (see mcpcore.Repeatable).
	readOnly := mcp.ToolAnnotation{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)}
	handlers := []server.ToolHandlerFunc{a.next, a.details, a.search, a.query}
	for i, t := range a.names.Tools() {
		s.AddTool(mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, RawInputSchema: t.InputSchema, Annotations: readOnly}, handlers[i])
	}
	s.AddResourceTemplate(mcp.NewResourceTemplate(mcpcore.ResourceTemplate, "ctxfit-held-back",
		mcp.WithTemplateDescription("Images, audio and binary content that a tool result held back as a resource_link; read it whole here.")),
		a.readResource)
	return nil
}

// adapter is the state of one Install.
type adapter struct {
	s       *server.MCPServer
	g       *ctxfit.Guard
	names   mcpcore.Names
	subject func(context.Context, mcp.CallToolRequest) string
	cache   *cache.Cache

	// originals maps the name of a tool Install re-registered to its
	// schemas, so that tools/list can show a disabled tool's own schema.
	originals map[string]schemas // written by Install only
	rewrites  sync.Map           // original schema (string) -> rewritten (json.RawMessage)
	innerIDs  atomic.Uint64

	shaper *mcpcore.Shaper
}

type schemas struct{ original, rewritten json.RawMessage }

// innerKey marks the context of a tool call the adapter dispatches itself
// (a replay or a drill-down), which the middleware passes through.
type innerKey struct{}

func isInner(ctx context.Context) bool { return ctx.Value(innerKey{}) != nil }

// guarded reports whether the tool named name is shaped
// ([mcpcore.Names.Guards]).
func (a *adapter) guarded(name string) bool {
	return a.names.Guards(a.g.Config(), name)
}

func (a *adapter) subjectOf(ctx context.Context, req mcp.CallToolRequest) string {
	if a.subject != nil {
		return a.subject(ctx, req)
	}
	if session := server.ClientSessionFromContext(ctx); session != nil {
		return session.SessionID()
	}
	return ""
}

func (a *adapter) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name := req.Params.Name
		if isInner(ctx) || !a.guarded(name) {
			return next(ctx, req)
		}
		raw, err := argumentsOf(req)
		if err != nil {
			return next(ctx, req)
		}
		args, err := mcpcore.CanonicalArguments(raw)
		if err != nil {
			return next(ctx, req) // the tool reports its own bad input
		}
		readOnly, idempotent := a.hintsOf(name)
		call := mcpcore.Call{Tool: name, Arguments: args, Subject: a.subjectOf(ctx, req),
			Unrepeatable: !mcpcore.Repeatable(readOnly, idempotent)}
		wire, res, err := a.run(ctx, &call, readOnly, func(ctx context.Context) (*mcp.CallToolResult, error) { return next(ctx, req) })
		if err != nil {
			return nil, a.gateError(ctx, call, err) // the tool's own error, through the gate
		}
		if res == nil {
			if res, err = mcp.ParseCallToolResult(&wire); err != nil { // served from the cache
				return nil, err
			}
		}
		if len(res.InputRequests) > 0 || res.RequestState != "" {
			return res, nil
		}
		// Shaped (a tool's own error too, kept an error), then through the
		// egress gate: a result shaping failed on is sent as it came when
		// it is within the hard cap, else cut losslessly; never over the cap.
		var shapedWire json.RawMessage
		sh, serr := a.shaper.ShapeResult(ctx, call, wire)
		if serr == nil {
			shapedWire = sh.Result
		}
		gated, err := a.shaper.Gate(ctx, call, wire, shapedWire)
		if err != nil {
			// Passing the result on whole would break the budget: say
			// what went wrong and what to do, as the HTTP adapter's 503 does.
			return errorResult(mcpcore.ErrorOf(cmp.Or(serr, err))), nil
		}
		if bytes.Equal(gated, wire) {
			return res, nil
		}
		shaped := mcpcore.Shaped{Result: gated}
		got, err := mcp.ParseCallToolResult(&shaped.Result)
		if err != nil {
			return errorResult(mcpcore.ErrorOf(err)), nil
		}
		out := *res // keeps what the tool set beside content (its result type)
		out.Content, out.StructuredContent, out.RawStructuredContent, out.Meta = got.Content, nil, got.RawStructuredContent, got.Meta
		if len(got.RawStructuredContent) > 0 {
			out.StructuredContent = got.RawStructuredContent
		}
		return &out, nil
	}
}

// resultType is the content type under which a tool result's wire JSON is
// cached.
const resultType = "application/vnd.ctxfit.mcp-result+json"

// hintsOf returns what the annotations of the tool named name say of
// running it again; a tool without them is neither read-only nor
// idempotent.
func (a *adapter) hintsOf(name string) (readOnly, idempotent bool) {
	t := a.s.GetTool(name)
	if t == nil {
		return false, false
	}
	ann := t.Tool.Annotations
	return ann.ReadOnlyHint != nil && *ann.ReadOnlyHint, ann.IdempotentHint != nil && *ann.IdempotentHint
}

// run runs a tool with the response cache, if any and the tool is
// cacheable (read-only), in front, and returns
// its result as wire JSON, and as a result when the tool ran (nil on a
// cache hit).
func (a *adapter) run(ctx context.Context, call *mcpcore.Call, cacheable bool, exec func(context.Context) (*mcp.CallToolResult, error)) (json.RawMessage, *mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	fetch := func(ctx context.Context) (ctxfit.Response, error) {
		r, err := exec(ctx)
		if err != nil {
			return ctxfit.Response{}, err
		}
		if r == nil {
			return ctxfit.Response{}, errors.New("mcpgofit: the tool returned no result")
		}
		res = r
		if r.IsError || len(r.InputRequests) > 0 || r.RequestState != "" {
			cache.DontStore(ctx)
		}
		b, err := jsonwire.MarshalUnescaped(r) // the same bytes on every Go release
		if err != nil {
			return ctxfit.Response{}, err
		}
		if len(r.RawStructuredContent) > 0 {
			b = mcpcore.WithStructured(b, r.RawStructuredContent) // as the tool wrote it
		} else if raw, ok := r.StructuredContent.(json.RawMessage); ok {
			b = mcpcore.WithStructured(b, raw)
		}
		return ctxfit.Response{Body: b, ContentType: resultType}, nil
	}
	if a.cache != nil && cacheable {
		fetch = cachedfetch.Wrap(a.cache, ctxfit.Request{Endpoint: call.Tool, Path: call.Tool, Subject: call.Subject, Filters: call.Arguments}, fetch)
	}
	resp, err := fetch(ctx)
	call.CacheHit = resp.CacheHit
	return resp.Body, res, err
}

// argumentsOf returns the arguments of a call as JSON: as they came on the
// wire when mcp-go kept them, else encoded.
func argumentsOf(req mcp.CallToolRequest) (json.RawMessage, error) {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments, nil
	}
	switch v := req.Params.Arguments.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	default:
		return json.Marshal(v)
	}
}

// next is the continuation tool.
func (a *adapter) next(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, _ := argumentsOf(req) // arguments that do not encode stay nil, which lacks the cursor
	subject := a.subjectOf(ctx, req)
	return a.own(ctx, req.Params.Name, subject, a.shaper.Next(ctx, subject, raw, a.rerun(subject))), nil
}

// details is the drill-down tool.
func (a *adapter) details(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, _ := argumentsOf(req) // arguments that do not encode stay nil, which lacks the tool
	subject := a.subjectOf(ctx, req)
	return a.own(ctx, req.Params.Name, subject, a.shaper.Details(ctx, subject, raw, a.rerun(subject))), nil
}

// search is the search tool.
func (a *adapter) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, _ := argumentsOf(req)
	subject := a.subjectOf(ctx, req)
	return a.own(ctx, req.Params.Name, subject, a.shaper.Search(ctx, subject, raw, a.rerun(subject))), nil
}

// query is the query tool.
func (a *adapter) query(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, _ := argumentsOf(req)
	subject := a.subjectOf(ctx, req)
	return a.own(ctx, req.Params.Name, subject, a.shaper.Query(ctx, subject, raw, a.rerun(subject))), nil
}

// readMiddleware passes the server's own resources/read results (of a
// uri that is not ctxfit's) through shaping and the egress gate.
func (a *adapter) readMiddleware(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		contents, err := next(ctx, req)
		if isInner(ctx) || strings.HasPrefix(req.Params.URI, mcpcore.ResourcePrefix) ||
			!a.names.Guards(a.g.Config(), mcpcore.ReadResourceTool) {
			return contents, err
		}
		call := mcpcore.Call{Tool: mcpcore.ReadResourceTool, Arguments: mcpcore.ReadArguments(req.Params.URI),
			Subject: a.subjectOf(ctx, mcp.CallToolRequest{})}
		if err != nil {
			return nil, a.gateError(ctx, call, err)
		}
		wire, err := json.Marshal(mcp.ReadResourceResult{Contents: contents})
		if err != nil {
			return contents, nil
		}
		gated, err := a.gateOther(ctx, call, wire)
		if err != nil {
			return nil, err
		}
		if gated == nil {
			return contents, nil
		}
		res, err := mcp.ParseReadResourceResult((*json.RawMessage)(&gated))
		if err != nil {
			return nil, err
		}
		return res.Contents, nil
	}
}

// promptMiddleware passes the server's own prompts/get results through
// shaping and the egress gate.
func (a *adapter) promptMiddleware(next server.PromptHandlerFunc) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		res, err := next(ctx, req)
		if isInner(ctx) || !a.names.Guards(a.g.Config(), mcpcore.GetPromptTool) {
			return res, err
		}
		if err != nil {
			return nil, a.gateError(ctx, mcpcore.Call{Tool: mcpcore.GetPromptTool, Subject: a.subjectOf(ctx, mcp.CallToolRequest{})}, err)
		}
		if res == nil {
			return res, nil
		}
		wire, err := json.Marshal(res)
		if err != nil {
			return res, nil
		}
		args, _ := json.Marshal(req.Params.Arguments)
		pargs, err := mcpcore.PromptArguments(req.Params.Name, args)
		if err != nil {
			return res, nil
		}
		call := mcpcore.Call{Tool: mcpcore.GetPromptTool, Arguments: pargs, Subject: a.subjectOf(ctx, mcp.CallToolRequest{})}
		gated, err := a.gateOther(ctx, call, wire)
		if err != nil || gated == nil {
			return res, err
		}
		return mcp.ParseGetPromptResult((*json.RawMessage)(&gated))
	}
}

// cutError is a handler's error whose message the egress gate cut: it says
// the cut message and unwraps to the error it stands for, so that mcp-go
// answers it with the same JSON-RPC code.
type cutError struct {
	msg string
	err error
}

func (e *cutError) Error() string { return e.msg }
func (e *cutError) Unwrap() error { return e.err }

// gateError passes a handler's error, which mcp-go answers as a JSON-RPC
// error with its message, through the egress gate
// ([mcpcore.Shaper.GateError]): as it is within the hard cap, else its
// message cut with a ctxfit://r/ link to the whole error.
func (a *adapter) gateError(ctx context.Context, call mcpcore.Call, err error) error {
	msg, _, gerr := a.shaper.GateError(ctx, call, mcp.INTERNAL_ERROR, err.Error(), nil)
	switch {
	case gerr != nil:
		return &cutError{msg: mcpcore.ErrorOf(gerr).Text(), err: err}
	case msg == err.Error():
		return err
	}
	return &cutError{msg: msg, err: err}
}

// gateCompletion passes a completion/complete result through the egress
// gate, in place (mcp-go sends the result its after-complete hooks saw):
// never over the hard cap. A result the gate cannot pass goes out empty.
func (a *adapter) gateCompletion(ctx context.Context, _ any, _ *mcp.CompleteRequest, res *mcp.CompleteResult) {
	if res == nil || isInner(ctx) || !a.names.Guards(a.g.Config(), mcpcore.CompleteTool) {
		return
	}
	wire, err := json.Marshal(res)
	if err != nil {
		*res = mcp.CompleteResult{Completion: mcp.Completion{Values: []string{}}}
		return
	}
	call := mcpcore.Call{Tool: mcpcore.CompleteTool, Subject: a.subjectOf(ctx, mcp.CallToolRequest{})}
	gated, err := a.shaper.Gate(ctx, call, wire, nil)
	if err != nil {
		*res = mcp.CompleteResult{Completion: mcp.Completion{Values: []string{}}}
		return
	}
	if bytes.Equal(gated, wire) {
		return
	}
	var out mcp.CompleteResult
	if json.Unmarshal(gated, &out) != nil {
		out = mcp.CompleteResult{Completion: mcp.Completion{Values: []string{}}}
	}
	*res = out
}

// gateOther shapes a resources/read or prompts/get result (wire) and
// passes it through the egress gate; nil when it goes out as it came.
func (a *adapter) gateOther(ctx context.Context, call mcpcore.Call, wire json.RawMessage) (json.RawMessage, error) {
	var sh mcpcore.Shaped
	var serr error
	if call.Tool == mcpcore.ReadResourceTool {
		sh, serr = a.shaper.ShapeRead(ctx, call, wire)
	} else {
		sh, serr = a.shaper.ShapePrompt(ctx, call, wire)
	}
	var shaped json.RawMessage
	if serr == nil {
		shaped = sh.Result
	}
	gated, err := a.shaper.Gate(ctx, call, wire, shaped)
	if err != nil {
		return nil, fmt.Errorf("%s", mcpcore.ErrorOf(cmp.Or(serr, err)).Text())
	}
	if bytes.Equal(gated, wire) {
		return nil, nil
	}
	return gated, nil
}

// rerunOther reads a resource or gets a prompt again through the server,
// unshaped, in the tool-result form shaping gave it.
func (a *adapter) rerunOther(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	method, params := mcp.MethodPromptsGet, args
	if tool == mcpcore.ReadResourceTool {
		method = mcp.MethodResourcesRead
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": fmt.Sprintf("ctxfit-%d", a.innerIDs.Add(1)),
		"method": method, "params": params})
	if err != nil {
		return nil, err
	}
	var res any
	switch resp := a.s.HandleMessage(context.WithValue(ctx, innerKey{}, true), msg).(type) {
	case mcp.JSONRPCResponse:
		res = resp.Result
	case mcp.JSONRPCError:
		return nil, &mcpcore.ToolError{Message: resp.Error.Message}
	default:
		return nil, fmt.Errorf("mcpgofit: unexpected response %T", resp)
	}
	wire, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	if tool == mcpcore.ReadResourceTool {
		return mcpcore.ReadAsToolResult(wire)
	}
	return mcpcore.PromptAsToolResult(wire)
}

// own passes a result of one of ctxfit's tools through the egress gate.
func (a *adapter) own(ctx context.Context, tool, subject string, wire json.RawMessage) *mcp.CallToolResult {
	out, err := a.shaper.Gate(ctx, mcpcore.Call{Tool: tool, Subject: subject}, wire, nil)
	if err != nil {
		return errorResult(mcpcore.ErrorOf(err))
	}
	return toResult(out)
}

// readResource serves resources/read of ctxfit://r/... .
func (a *adapter) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	subject := a.subjectOf(ctx, mcp.CallToolRequest{})
	wire, err := a.shaper.ReadResource(ctx, subject, req.Params.URI, a.rerun(subject))
	if err != nil {
		return nil, fmt.Errorf("%s", mcpcore.ErrorOf(err).Text())
	}
	res, err := mcp.ParseReadResourceResult((*json.RawMessage)(&wire))
	if err != nil {
		return nil, err
	}
	return res.Contents, nil
}

// toResult reads the wire JSON of a tool result ctxfit built.
func toResult(wire json.RawMessage) *mcp.CallToolResult {
	res, err := mcp.ParseCallToolResult(&wire)
	if err != nil {
		return errorResult(mcpcore.ErrorOf(err))
	}
	if len(res.RawStructuredContent) > 0 {
		res.StructuredContent = res.RawStructuredContent
	}
	return res
}

// rerun runs a tool again through the server (the middleware passes it
// through), with the response cache.
func (a *adapter) rerun(subject string) mcpcore.Rerun {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == mcpcore.ReadResourceTool || tool == mcpcore.GetPromptTool {
			return a.rerunOther(ctx, tool, args)
		}
		call := mcpcore.Call{Tool: tool, Arguments: args, Subject: subject}
		readOnly, _ := a.hintsOf(tool)
		wire, _, err := a.run(ctx, &call, readOnly, a.invoke(tool, args))
		if ie, ok := errors.AsType[*innerError](err); ok {
			return nil, &mcpcore.ToolError{Message: ie.Error()}
		}
		return wire, err
	}
}

// innerError is the JSON-RPC error of a tool call the adapter dispatched.
type innerError struct {
	tool string
	code int
	msg  string
}

func (e *innerError) Error() string {
	return fmt.Sprintf("mcpgofit: calling %s: %s (JSON-RPC error %d)", e.tool, e.msg, e.code)
}

// invoke returns a function that calls the tool named tool with args
// through the server, on the session and context of the caller, marked so
// that the middleware does not shape the result.
func (a *adapter) invoke(tool string, args json.RawMessage) func(context.Context) (*mcp.CallToolResult, error) {
	return func(ctx context.Context) (*mcp.CallToolResult, error) {
		msg, err := json.Marshal(map[string]any{
			"jsonrpc": mcp.JSONRPC_VERSION,
			"id":      fmt.Sprintf("ctxfit-%d", a.innerIDs.Add(1)),
			"method":  mcp.MethodToolsCall,
			"params":  map[string]any{"name": tool, "arguments": args},
		})
		if err != nil {
			return nil, err
		}
		switch resp := a.s.HandleMessage(context.WithValue(ctx, innerKey{}, true), msg).(type) {
		case mcp.JSONRPCResponse:
			if res, ok := resp.Result.(*mcp.CallToolResult); ok {
				return res, nil
			}
			return nil, &innerError{tool: tool, code: mcp.INTERNAL_ERROR, msg: fmt.Sprintf("unexpected result %T", resp.Result)}
		case mcp.JSONRPCError:
			return nil, &innerError{tool: tool, code: resp.Error.Code, msg: resp.Error.Message}
		default:
			return nil, &innerError{tool: tool, code: mcp.INTERNAL_ERROR, msg: fmt.Sprintf("unexpected response %T", resp)}
		}
	}
}

// errorResult is a tool result with isError set, carrying e as text and as
// structured content.
func errorResult(e mcpcore.Error) *mcp.CallToolResult {
	data, _ := json.Marshal(e)
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{mcp.NewTextContent(e.Text())},
		StructuredContent: json.RawMessage(data),
	}
}

// outputSchemaOf returns a tool's output schema as JSON, by the rule mcp-go's
// output validation uses, and whether it has one.
func outputSchemaOf(t mcp.Tool) (json.RawMessage, bool) {
	if len(t.RawOutputSchema) > 0 {
		return t.RawOutputSchema, true
	}
	if t.OutputSchema.Type == "" && len(t.OutputSchema.Properties) == 0 && len(t.OutputSchema.Required) == 0 {
		return nil, false
	}
	b, err := json.Marshal(t.OutputSchema)
	return b, err == nil
}

func setOutputSchema(t *mcp.Tool, schema json.RawMessage) {
	t.RawOutputSchema = schema
	t.OutputSchema = mcp.ToolOutputSchema{} // mcp-go refuses to marshal a tool with both
}

// rewritten returns schema rewritten to accept shaped results, cached.
func (a *adapter) rewritten(schema json.RawMessage) (json.RawMessage, bool) {
	if v, ok := a.rewrites.Load(string(schema)); ok {
		return v.(json.RawMessage), true
	}
	out, err := mcpcore.OutputSchema(schema)
	if err != nil || out == nil {
		return nil, false
	}
	a.rewrites.Store(string(schema), out)
	return out, true
}

// rewriteRegistered re-registers the tools of the server that have an
// output schema with the schema rewritten, so that mcp-go's output
// validation, which runs after the middleware against the registered tool,
// accepts shaped results. Disabled tools are rewritten too: settings can be
// reloaded.
func (a *adapter) rewriteRegistered() {
	a.originals = make(map[string]schemas)
	var batch []server.ServerTool
	for name, st := range a.s.ListTools() {
		schema, ok := outputSchemaOf(st.Tool)
		if !ok {
			continue
		}
		rw, ok := a.rewritten(schema)
		if !ok || bytes.Equal(rw, schema) {
			continue
		}
		t := st.Tool
		setOutputSchema(&t, rw)
		batch = append(batch, server.ServerTool{Tool: t, Handler: st.Handler})
		a.originals[name] = schemas{original: schema, rewritten: rw}
	}
	if len(batch) > 0 {
		a.s.AddTools(batch...)
	}
}

// filter is the tool filter: it shows every guarded tool's output schema
// rewritten to accept shaped results, and a disabled tool's own schema.
func (a *adapter) filter(_ context.Context, tools []mcp.Tool) []mcp.Tool {
	out := make([]mcp.Tool, len(tools))
	copy(out, tools)
	cfg := a.g.Config()
	for i := range out {
		t := &out[i]
		if a.guarded(t.Name) {
			if n := mcpcore.MaxResultSizeChars(cfg, t.Name); n > 0 {
				meta := &mcp.Meta{AdditionalFields: map[string]any{}}
				if t.Meta != nil {
					meta.ProgressToken = t.Meta.ProgressToken
					maps.Copy(meta.AdditionalFields, t.Meta.AdditionalFields)
				}
				meta.AdditionalFields[mcpcore.MetaMaxResultSizeChars] = n
				t.Meta = meta
			}
		}
		schema, ok := outputSchemaOf(*t)
		if !ok {
			continue
		}
		if !a.guarded(t.Name) {
			if o, ok := a.originals[t.Name]; ok && bytes.Equal(schema, o.rewritten) {
				setOutputSchema(t, o.original)
			}
			continue
		}
		if rw, ok := a.rewritten(schema); ok {
			setOutputSchema(t, rw)
		}
	}
	return out
}
