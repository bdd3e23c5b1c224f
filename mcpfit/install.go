package mcpfit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/jsonwire"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// Options configure [Install]. A nil *Options, like the zero value, means
// the defaults.
type Options struct {
	// NextTool is the name of the continuation tool. Empty means
	// "ctxfit_next".
	NextTool string
	// DetailsTool is the name of the drill-down tool. Empty means
	// "ctxfit_details".
	DetailsTool string
	// Subject returns what cursors are bound to for a call: a cursor is
	// accepted only from a call with the same subject. Nil means the
	// session ID (req.Session.ID()), which is unique per streamable HTTP
	// session and empty for stdio (one client per process) and in stateless
	// HTTP mode. Set it to bind cursors to a principal instead, for example
	// from req.Extra.TokenInfo.
	Subject func(ctx context.Context, req *mcp.CallToolRequest) string
	// Cache serves the results of guarded tools from a response cache
	// (package cache), keyed by tool name, subject and canonical
	// arguments; the re-invocations of ctxfit_next (replay mode) and
	// ctxfit_details use the same entries. Nil means no caching. Only
	// results ctxfit could shape are stored: never errors, input requests
	// or non-text content; [cache.Options.Cacheable] can narrow that to
	// some tools (req.Endpoint is the tool name). On a hit the tool does
	// not run and its result is rebuilt from the stored body: structured
	// content and one text block holding its JSON when the tool returned
	// structured content, else one text block with the tool's text blocks
	// joined by newlines; the tool's own _meta is not kept.
	Cache *cache.Cache
}

const (
	methodCallTool  = "tools/call"
	methodListTools = "tools/list"
)

// Install guards every tool of s with g and registers the continuation and
// drill-down tools. It adds one receiving middleware to s that:
//
//   - for tools/call, reads the tool name, the arguments and the session
//     (see [Options.Subject]), runs the tool, and passes its result through
//     [ctxfit.Guard.Handle]: a result under the threshold is returned
//     untouched, one over it is replaced by a shaped result (see the package
//     documentation). Tools whose [ctxfit.Endpoint] (Match = tool name) is
//     Disabled pass through.
//   - for tools/list, returns copies of the guarded tools whose
//     outputSchema is rewritten to also accept shaped results
//     ([mcpcore.OutputSchema]); the server's own tools are not modified.
//
// Install fails open: errors, input requests, non-text results and results
// ctxfit cannot shape pass through. Call Install once per server, before it
// serves; s and g must outlive the server's sessions. It returns an error
// for a nil server or guard, or tool names that collide.
func Install(s *mcp.Server, g *ctxfit.Guard, opts *Options) error {
	if s == nil || g == nil {
		return errors.New("mcpfit: Install needs a server and a guard")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	a := &adapter{g: g, subject: o.Subject, cache: o.Cache, names: mcpcore.Names{Next: o.NextTool, Details: o.DetailsTool}.WithDefaults()}
	if a.names.Next == a.names.Details {
		return fmt.Errorf("mcpfit: the continuation and details tools have the same name %q", a.names.Next)
	}
	s.AddReceivingMiddleware(a.middleware)
	s.AddTool(&mcp.Tool{
		Name:        a.names.Next,
		Title:       "Continue a large tool result",
		Description: mcpcore.NextDescription,
		InputSchema: mcpcore.NextInputSchema(),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, a.next)
	s.AddTool(&mcp.Tool{
		Name:        a.names.Details,
		Title:       "Drill into a summarized tool result",
		Description: mcpcore.DetailsDescription,
		InputSchema: mcpcore.DetailsInputSchema(),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, a.details)
	return nil
}

// adapter is the state of one Install.
type adapter struct {
	g       *ctxfit.Guard
	names   mcpcore.Names
	subject func(context.Context, *mcp.CallToolRequest) string
	cache   *cache.Cache

	mu    sync.Mutex
	inner mcp.MethodHandler // the handler the middleware wraps

	fit mcpcore.GuidanceFit
}

func (a *adapter) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	a.mu.Lock()
	if a.inner == nil {
		a.inner = next
	}
	a.mu.Unlock()
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodCallTool:
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				return a.callTool(ctx, next, r)
			}
		case methodListTools:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				return a.listTools(lr), nil
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

func (a *adapter) innerHandler() mcp.MethodHandler {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inner
}

// guarded reports whether the tool named name is shaped
// ([mcpcore.Names.Guards]).
func (a *adapter) guarded(name string) bool {
	return a.names.Guards(a.g.Config(), name)
}

func (a *adapter) subjectOf(ctx context.Context, req *mcp.CallToolRequest) string {
	if a.subject != nil {
		return a.subject(ctx, req)
	}
	if req.Session == nil {
		return ""
	}
	return req.Session.ID()
}

// errUnshapeable marks a tool result that passes through as it is.
var errUnshapeable = errors.New("mcpfit: result passes through")

// fetcher returns the Fetch of a tool call: it runs call and keeps its
// result in *orig, also when the result is not shaped (errUnshapeable).
func fetcher(call func(context.Context) (mcp.Result, error), orig *mcp.Result) ctxfit.Fetch {
	return func(ctx context.Context) (ctxfit.Response, error) {
		res, err := call(ctx)
		if err != nil {
			return ctxfit.Response{}, err
		}
		*orig = res
		ctr, ok := res.(*mcp.CallToolResult)
		if !ok || ctr == nil {
			return ctxfit.Response{}, errUnshapeable
		}
		body, contentType, ok := bodyOf(ctr)
		if !ok {
			return ctxfit.Response{}, errUnshapeable
		}
		return ctxfit.Response{Body: body, ContentType: contentType}, nil
	}
}

// bodyOf is what ctxfit measures and shapes of a tool result: the JSON of
// its structured content when there is any, else its text. Errors, input
// requests and results with non-text content are not shaped.
func bodyOf(r *mcp.CallToolResult) (body []byte, contentType string, ok bool) {
	if r.IsError || r.InputRequests != nil {
		return nil, "", false
	}
	var texts []string
	for _, c := range r.Content {
		t, isText := c.(*mcp.TextContent)
		if !isText {
			return nil, "", false
		}
		texts = append(texts, t.Text)
	}
	if r.StructuredContent != nil {
		b, err := jsonwire.Marshal(r.StructuredContent)
		if err != nil {
			return nil, "", false
		}
		return b, "application/json", true
	}
	if len(texts) == 0 {
		return nil, "", false
	}
	return []byte(strings.Join(texts, "\n")), "", true
}

// cached wraps fetch in the response cache of req, and keeps the response
// it returns in *got, so that a hit (fetch did not run) can be rebuilt
// into a tool result with [fromCache].
func (a *adapter) cached(req ctxfit.Request, fetch ctxfit.Fetch, got *ctxfit.Response) ctxfit.Fetch {
	if a.cache == nil {
		return fetch
	}
	fetch = cache.Wrap(a.cache, req, fetch)
	return func(ctx context.Context) (ctxfit.Response, error) {
		resp, err := fetch(ctx)
		*got = resp
		return resp, err
	}
}

// fromCache rebuilds a tool result from the body [bodyOf] made of it:
// structured content (and its JSON as text) for a JSON body, one text
// block otherwise.
func fromCache(resp ctxfit.Response) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(resp.Body)}}}
	if resp.ContentType == "application/json" {
		out.StructuredContent = json.RawMessage(resp.Body)
	}
	return out
}

func (a *adapter) callTool(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest) (mcp.Result, error) {
	name := req.Params.Name
	if !a.guarded(name) {
		return next(ctx, methodCallTool, req)
	}
	args, err := mcpcore.CanonicalArguments(req.Params.Arguments)
	if err != nil {
		return next(ctx, methodCallTool, req) // the tool reports its own bad input
	}
	var (
		orig mcp.Result
		got  ctxfit.Response
	)
	r := ctxfit.Request{Endpoint: name, Path: name, Subject: a.subjectOf(ctx, req), Filters: args}
	fetch := fetcher(func(ctx context.Context) (mcp.Result, error) { return next(ctx, methodCallTool, req) }, &orig)
	res, err := a.g.Handle(ctx, r, a.cached(r, fetch, &got))
	if orig == nil && got.CacheHit != nil && *got.CacheHit {
		orig = fromCache(got) // the tool did not run
	}
	if orig == nil {
		return nil, err // the tool's own protocol error
	}
	ctr, ok := orig.(*mcp.CallToolResult)
	if ok && errors.Is(err, ctxfit.ErrStoreUnavailable) && !ctr.IsError {
		// Shaping needs the store: passing the result on whole would break
		// the budget, so say to retry, as the HTTP adapter's 503 does.
		return errorResult(mcpcore.ErrorOf(err)), nil
	}
	if !ok || err != nil || !res.Shaped {
		return orig, nil // fail open
	}
	out := *ctr // keeps what the SDK set on the result (its result type)
	a.fill(&out, res, mcpcore.Call{Tool: name, Arguments: args}, ctr.StructuredContent != nil, ctr.Meta)
	return &out, nil
}

// fill sets the content, structured content and _meta of a shaped result.
func (a *adapter) fill(out *mcp.CallToolResult, res ctxfit.Result, call mcpcore.Call, structured bool, toolMeta mcp.Meta) {
	out.Content = []mcp.Content{&mcp.TextContent{Text: string(res.Body)}}
	if line := mcpcore.Guidance(res, a.names, call); line != "" && a.fit.Fits(res, a.g.Config().Encoding, line) {
		out.Content = append(out.Content, &mcp.TextContent{Text: line})
	}
	out.StructuredContent = nil
	if structured {
		out.StructuredContent = json.RawMessage(res.Body)
	}
	meta := make(mcp.Meta, len(toolMeta)+5)
	for k, v := range toolMeta {
		meta[k] = v
	}
	for k, v := range mcpcore.Meta(res) {
		meta[k] = v
	}
	out.Meta = meta
}

// invoke runs the tool named tool with args on the session of parent,
// through the handler the middleware wraps (so the result is not shaped).
func (a *adapter) invoke(parent *mcp.CallToolRequest, tool string, args json.RawMessage) func(context.Context) (mcp.Result, error) {
	return func(ctx context.Context) (mcp.Result, error) {
		inner := a.innerHandler()
		if inner == nil {
			return nil, errors.New("mcpfit: the middleware is not installed")
		}
		return inner(ctx, methodCallTool, &mcp.CallToolRequest{
			Session: parent.Session, Extra: parent.Extra,
			Params: &mcp.CallToolParamsRaw{Name: tool, Arguments: args},
		})
	}
}

// next is the continuation tool.
func (a *adapter) next(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cursor, bad := a.names.NextCursor(req.Params.Arguments)
	if bad != nil {
		return errorResult(*bad), nil // a tool error the model can correct, not -32602
	}
	r, err := a.g.Resume(cursor, a.subjectOf(ctx, req))
	if err != nil {
		return errorResult(mcpcore.ErrorOf(err)), nil
	}
	r.Path = r.Endpoint
	return a.serve(ctx, req, r)
}

// details is the drill-down tool.
func (a *adapter) details(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	r, bad := a.names.DetailsRequest(req.Params.Arguments)
	if bad != nil {
		return errorResult(*bad), nil // a tool error the model can correct, not -32602
	}
	r.Subject = a.subjectOf(ctx, req)
	return a.serve(ctx, req, r)
}

// serve answers a continuation or drill-down request r by running the tool
// it names.
func (a *adapter) serve(ctx context.Context, req *mcp.CallToolRequest, r ctxfit.Request) (*mcp.CallToolResult, error) {
	var (
		orig mcp.Result
		got  ctxfit.Response
	)
	res, err := a.g.Handle(ctx, r, a.cached(r, fetcher(a.invoke(req, r.Endpoint, r.Filters), &orig), &got))
	if err != nil {
		if ctr, ok := orig.(*mcp.CallToolResult); ok && errors.Is(err, errUnshapeable) {
			return ctr, nil // the tool answered with an error or non-text content
		}
		var wire *jsonrpc.Error
		if errors.As(err, &wire) {
			return errorResult(mcpcore.ToolFailed(r.Endpoint, wire.Message)), nil
		}
		return errorResult(mcpcore.ErrorOf(err)), nil
	}
	out := &mcp.CallToolResult{}
	a.fill(out, res, mcpcore.Call{Tool: r.Endpoint, Arguments: r.Filters}, mcpcore.IsObject(res.Body), nil)
	return out, nil
}

// errorResult is a tool result with isError set, carrying e as text and as
// structured content.
func errorResult(e mcpcore.Error) *mcp.CallToolResult {
	data, _ := json.Marshal(e)
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: e.Text()}},
		StructuredContent: json.RawMessage(data),
	}
}

// listTools returns res with copies of the guarded tools whose output
// schema is rewritten to accept shaped results.
func (a *adapter) listTools(res *mcp.ListToolsResult) *mcp.ListToolsResult {
	out := *res
	out.Tools = make([]*mcp.Tool, len(res.Tools))
	for i, t := range res.Tools {
		out.Tools[i] = t
		if t == nil || t.OutputSchema == nil || !a.guarded(t.Name) {
			continue
		}
		original, err := json.Marshal(t.OutputSchema)
		if err != nil {
			continue
		}
		schema, err := mcpcore.OutputSchema(original)
		if err != nil || schema == nil {
			continue
		}
		clone := *t
		clone.OutputSchema = schema
		out.Tools[i] = &clone
	}
	return &out
}
