package mcpfit

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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/cachedfetch"
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
	// SearchTool and QueryTool are the names of the tools that search and
	// query a shaped result. Empty means "ctxfit_search" and
	// "ctxfit_query".
	SearchTool, QueryTool string
	// Subject returns what cursors are bound to for a call: a cursor is
	// accepted only from a call with the same subject. Nil means the
	// session ID (req.Session.ID()), which is unique per streamable HTTP
	// session and empty for stdio (one client per process) and in stateless
	// HTTP mode, together with the authenticated user
	// (req.Extra.TokenInfo.UserID) when the transport has one. Set it to
	// bind cursors to a principal alone, so that they survive a new session.
	Subject func(ctx context.Context, req *mcp.CallToolRequest) string
	// Cache serves the results of guarded read-only tools (annotated
	// readOnlyHint: a cached result stands in for running the tool, which
	// must then change nothing) from a response cache (package cache),
	// keyed by tool name, subject and canonical arguments; the re-invocations of ctxfit_next (replay mode) and
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
	methodCallTool     = "tools/call"
	methodListTools    = "tools/list"
	methodReadResource = "resources/read"
	methodGetPrompt    = "prompts/get"
	methodComplete     = "completion/complete"
)

// Install guards every tool of s with g, registers the continuation and
// drill-down tools, and serves the resources shaped results link to. It
// adds one receiving middleware to s that:
//
//   - for tools/call, reads the tool name, the arguments and the session
//     (see [Options.Subject]), runs the tool, and passes its result through
//     the guard (see the package documentation): a result under the
//     threshold is returned untouched, one over it is replaced by a shaped
//     result, block by block; images and audio count what a model reads of
//     them; blobs, and media over the hard cap, become resource_links to
//     ctxfit://r/... . Tools whose [ctxfit.Endpoint] (Match = tool name) is
//     Disabled pass through.
//   - for resources/read (of a uri that is not ctxfit's), prompts/get and
//     completion/complete, shapes the server's own result as the proxy
//     does (endpoints "resources/read", "prompts/get",
//     "completion/complete") and passes it through the egress gate;
//   - for tools/list, returns copies of the guarded tools whose
//     outputSchema is rewritten to also accept shaped results
//     ([mcpcore.OutputSchema]); the server's own tools are not modified.
//
// It also adds the resource template ctxfit://r/{token}: resources/read of
// a link ctxfit issued returns the held-back bytes, to the session it was
// issued to.
//
// Input requests pass through; errors (isError) pass through within the
// hard cap. Nothing goes out over the hard cap: every result passes the
// egress gate last, which cuts what is still over it to its first bytes
// and a ctxfit:// link to the rest; when shaping fails (the store is
// unavailable, say) a result within the cap is sent as it came, and only
// when even the gate cannot keep the original does the call answer a tool
// error that says to retry. Call Install once per server, before it
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
	names := mcpcore.Names{Next: o.NextTool, Details: o.DetailsTool, Search: o.SearchTool, Query: o.QueryTool}.WithDefaults()
	a := &adapter{g: g, subject: o.Subject, cache: o.Cache, names: names,
		shaper: &mcpcore.Shaper{Guard: g, Names: names}}
	if err := a.names.Distinct(); err != nil {
		return fmt.Errorf("mcpfit: %w", err)
	}
	s.AddReceivingMiddleware(a.middleware)
	// Read-only: a continuation reads a snapshot, or runs again only a tool
	// that is read-only or idempotent (see mcpcore.Repeatable).
	handlers := []mcp.ToolHandler{a.next, a.details, a.search, a.query}
	for i, t := range a.names.Tools() {
		s.AddTool(&mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}}, handlers[i])
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "ctxfit-held-back",
		Title:       "Content a shaped tool result held back",
		Description: "Images, audio and binary content that a tool result held back as a resource_link; read it whole here.",
		URITemplate: mcpcore.ResourceTemplate,
	}, a.readResource)
	return nil
}

// adapter is the state of one Install.
type adapter struct {
	g       *ctxfit.Guard
	names   mcpcore.Names
	subject func(context.Context, *mcp.CallToolRequest) string
	cache   *cache.Cache
	shaper  *mcpcore.Shaper

	mu    sync.Mutex
	inner mcp.MethodHandler // the handler the middleware wraps
	hints map[string]hints  // what tools/list said of each tool
}

// hints are what a tool's annotations say of running it again.
type hints struct{ readOnly, idempotent bool }

// hintsOf returns what the server's tools/list says of the tool named
// name: from the last list that passed through the middleware or, when
// the tool was not in it, from a list asked of the handler the middleware
// wraps. A tool the list does not have gets no hints: not repeatable.
func (a *adapter) hintsOf(ctx context.Context, session *mcp.ServerSession, name string) hints {
	a.mu.Lock()
	h, ok := a.hints[name]
	inner := a.inner
	a.mu.Unlock()
	if ok || inner == nil {
		return h
	}
	var cursor string
	for range maxListPages {
		res, err := inner(ctx, methodListTools, &mcp.ListToolsRequest{Session: session, Params: &mcp.ListToolsParams{Cursor: cursor}})
		lr, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok || lr == nil {
			break
		}
		a.learn(lr.Tools, cursor == "")
		if cursor = lr.NextCursor; cursor == "" {
			break
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hints[name]
}

// maxListPages bounds the tools/list pages hintsOf reads.
const maxListPages = 100

// learn records the hints of tools; fresh starts over (a first page).
func (a *adapter) learn(tools []*mcp.Tool, fresh bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if fresh || a.hints == nil {
		a.hints = make(map[string]hints, len(tools))
	}
	for _, t := range tools {
		if t == nil {
			continue
		}
		var h hints
		if t.Annotations != nil {
			h = hints{readOnly: t.Annotations.ReadOnlyHint, idempotent: t.Annotations.IdempotentHint}
		}
		a.hints[t.Name] = h
	}
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
		case methodReadResource, methodGetPrompt, methodComplete:
			return a.gateOther(ctx, next, method, req)
		case methodListTools:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				first := true
				if r, ok := req.(*mcp.ListToolsRequest); ok && r.Params != nil && r.Params.Cursor != "" {
					first = false
				}
				a.learn(lr.Tools, first)
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
	var id string
	if req.Session != nil {
		id = req.Session.ID()
	}
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		// The authenticated principal as well: a session ID alone could be
		// replayed by another user.
		return id + "\x00" + req.Extra.TokenInfo.UserID
	}
	return id
}

// resultType is the content type under which a tool result's wire JSON is
// cached.
const resultType = "application/vnd.ctxfit.mcp-result+json"

// run runs a tool (through next) with the response cache, if any and
// the tool is cacheable (read-only), in front: the result comes back as
// wire JSON, or, when the handler answered with something else than a
// CallToolResult, as res.
func (a *adapter) run(ctx context.Context, call *mcpcore.Call, cacheable bool, exec func(context.Context) (mcp.Result, error)) (wire json.RawMessage, res mcp.Result, err error) {
	fetch := func(ctx context.Context) (ctxfit.Response, error) {
		r, err := exec(ctx)
		if err != nil {
			return ctxfit.Response{}, err
		}
		res = r
		ctr, ok := r.(*mcp.CallToolResult)
		if !ok || ctr == nil {
			cache.DontStore(ctx)
			return ctxfit.Response{}, nil
		}
		if ctr.IsError || ctr.InputRequests != nil {
			cache.DontStore(ctx)
		}
		b, err := jsonwire.MarshalUnescaped(ctr) // the same bytes on every Go release
		if err != nil {
			cache.DontStore(ctx)
			return ctxfit.Response{}, nil
		}
		if raw, ok := ctr.StructuredContent.(json.RawMessage); ok {
			// The SDK's marshalling escapes HTML: keep the bytes the tool
			// (or the proxy's upstream) wrote.
			b = mcpcore.WithStructured(b, raw)
		}
		return ctxfit.Response{Body: b, ContentType: resultType}, nil
	}
	if a.cache != nil && cacheable {
		fetch = cachedfetch.Wrap(a.cache, ctxfit.Request{Endpoint: call.Tool, Path: call.Tool, Subject: call.Subject, Filters: call.Arguments}, fetch)
	}
	resp, err := fetch(ctx)
	call.CacheHit = resp.CacheHit
	reportCacheOutcome(ctx, resp.CacheHit)
	return resp.Body, res, err
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
	h := a.hintsOf(ctx, req.Session, name)
	call := mcpcore.Call{Tool: name, Arguments: args, Subject: a.subjectOf(ctx, req),
		Unrepeatable: !mcpcore.Repeatable(h.readOnly, h.idempotent)}
	wire, res, err := a.run(ctx, &call, h.readOnly, func(ctx context.Context) (mcp.Result, error) { return next(ctx, methodCallTool, req) })
	if err != nil {
		return nil, a.gateError(ctx, call, err) // the tool's own protocol error
	}
	if wire == nil {
		return res, nil // not a tool result ctxfit reads
	}
	ctr, _ := res.(*mcp.CallToolResult)
	if ctr == nil {
		if ctr, err = fromWire(wire); err != nil { // served from the cache: the tool did not run
			return nil, err
		}
	}
	if ctr.InputRequests != nil {
		return ctr, nil
	}
	// Shaped (a tool's own error too, kept an error), then through the
	// egress gate: a result shaping failed on is sent as it came when it
	// is within the hard cap, else cut losslessly; never over the cap.
	var shaped json.RawMessage
	sh, serr := a.shaper.ShapeResult(ctx, call, wire)
	if serr == nil {
		shaped = sh.Result
	}
	gated, err := a.shaper.Gate(ctx, call, wire, shaped)
	if err != nil {
		// Passing the result on whole would break the budget: say what
		// went wrong and what to do, as the HTTP adapter's 503 does.
		return toResult(mcpcore.ErrorResult(mcpcore.ErrorOf(cmp.Or(serr, err)))), nil
	}
	if bytes.Equal(gated, wire) {
		return ctr, nil
	}
	got, err := fromWire(gated)
	if err != nil {
		return toResult(mcpcore.ErrorResult(mcpcore.ErrorOf(err))), nil
	}
	out := *ctr // keeps what the SDK set on the result (its result type)
	out.Content, out.StructuredContent, out.Meta = got.Content, got.StructuredContent, got.Meta
	return &out, nil
}

// gateOther passes the server's own resources/read (of a uri that is not
// ctxfit's), prompts/get and completion/complete results through shaping
// and the egress gate, as the proxy does: never over the hard cap.
func (a *adapter) gateOther(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, a.gateOtherError(ctx, req, err)
	}
	if res == nil {
		return res, err
	}
	parent := &mcp.CallToolRequest{}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		parent.Session = ss
	}
	if ex := req.GetExtra(); ex != nil {
		parent.Extra = ex
	}
	call := mcpcore.Call{Subject: a.subjectOf(ctx, parent)}
	switch r := req.(type) {
	case *mcp.ReadResourceRequest:
		if r.Params == nil || strings.HasPrefix(r.Params.URI, mcpcore.ResourcePrefix) {
			return res, nil // ctxfit's own links are answered within the cap
		}
		call.Tool, call.Arguments = mcpcore.ReadResourceTool, mcpcore.ReadArguments(r.Params.URI)
	case *mcp.GetPromptRequest:
		if r.Params == nil {
			return res, nil
		}
		args, err := json.Marshal(r.Params.Arguments)
		if err != nil {
			return res, nil
		}
		if call.Arguments, err = mcpcore.PromptArguments(r.Params.Name, args); err != nil {
			return res, nil
		}
		call.Tool = mcpcore.GetPromptTool
	default:
		call.Tool = mcpcore.CompleteTool
	}
	if !a.names.Guards(a.g.Config(), call.Tool) {
		return res, nil
	}
	wire, err := jsonwire.MarshalUnescaped(res)
	if err != nil {
		return res, nil
	}
	var shaped json.RawMessage
	var serr error
	switch call.Tool {
	case mcpcore.ReadResourceTool:
		var sh mcpcore.Shaped
		if sh, serr = a.shaper.ShapeRead(ctx, call, wire); serr == nil {
			shaped = sh.Result
		}
	case mcpcore.GetPromptTool:
		var sh mcpcore.Shaped
		if sh, serr = a.shaper.ShapePrompt(ctx, call, wire); serr == nil {
			shaped = sh.Result
		}
	}
	gated, err := a.shaper.Gate(ctx, call, wire, shaped)
	if err != nil {
		e := mcpcore.ErrorOf(cmp.Or(serr, err))
		return nil, &jsonrpc.Error{Code: int64(e.RPCCode()), Message: e.Text()}
	}
	if bytes.Equal(gated, wire) {
		return res, nil
	}
	var out mcp.Result
	switch call.Tool {
	case mcpcore.ReadResourceTool:
		out = &mcp.ReadResourceResult{}
	case mcpcore.GetPromptTool:
		out = &mcp.GetPromptResult{}
	default:
		out = &mcp.CompleteResult{}
	}
	if err := json.Unmarshal(gated, out); err != nil {
		return nil, err
	}
	return out, nil
}

// gateOtherError passes the server's own JSON-RPC error to a
// resources/read, prompts/get or completion/complete through the egress
// gate ([adapter.gateError]).
func (a *adapter) gateOtherError(ctx context.Context, req mcp.Request, err error) error {
	parent := &mcp.CallToolRequest{}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		parent.Session = ss
	}
	if ex := req.GetExtra(); ex != nil {
		parent.Extra = ex
	}
	call := mcpcore.Call{Tool: mcpcore.CompleteTool, Subject: a.subjectOf(ctx, parent)}
	switch req.(type) {
	case *mcp.ReadResourceRequest:
		call.Tool = mcpcore.ReadResourceTool
	case *mcp.GetPromptRequest:
		call.Tool = mcpcore.GetPromptTool
	}
	if !a.names.Guards(a.g.Config(), call.Tool) {
		return err
	}
	return a.gateError(ctx, call, err)
}

// gateError passes a handler's JSON-RPC error (a plain error is one with
// the code of an internal error, as the SDK sends it) through the egress
// gate ([mcpcore.Shaper.GateError]): as it is within the hard cap, else
// its message cut with a link to the whole error.
func (a *adapter) gateError(ctx context.Context, call mcpcore.Call, err error) error {
	code, msg, data := int64(jsonrpc.CodeInternalError), err.Error(), json.RawMessage(nil)
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		code, msg, data = we.Code, we.Message, we.Data
	}
	gmsg, gdata, gerr := a.shaper.GateError(ctx, call, code, msg, data)
	switch {
	case gerr != nil:
		e := mcpcore.ErrorOf(gerr)
		return &jsonrpc.Error{Code: int64(e.RPCCode()), Message: e.Text()}
	case gmsg == msg:
		return err
	}
	return &jsonrpc.Error{Code: code, Message: gmsg, Data: gdata}
}

// toResult reads the wire JSON of a tool result ctxfit built.
func toResult(wire json.RawMessage) *mcp.CallToolResult {
	r, err := fromWire(wire)
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "ctxfit: " + err.Error()}}}
	}
	return r
}

// fromWire reads a tool result's wire JSON, keeping its structured content
// as the raw JSON it is (decoded, a number such as 1e400 would not fit a
// float64, and object keys would lose their order).
func fromWire(wire json.RawMessage) (*mcp.CallToolResult, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(wire, &members); err != nil {
		return nil, err
	}
	structured := members["structuredContent"]
	delete(members, "structuredContent")
	rest, err := json.Marshal(members)
	if err != nil {
		return nil, err
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(rest, &r); err != nil {
		return nil, err
	}
	if len(structured) > 0 && string(structured) != "null" {
		r.StructuredContent = structured
	}
	return &r, nil
}

// rerun runs the tool named tool with args on the session of parent,
// through the handler the middleware wraps (so the result is not shaped),
// and the response cache.
func (a *adapter) rerun(parent *mcp.CallToolRequest, subject string) mcpcore.Rerun {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		inner := a.innerHandler()
		if inner == nil {
			return nil, errors.New("mcpfit: the middleware is not installed")
		}
		switch tool {
		case mcpcore.ReadResourceTool, mcpcore.GetPromptTool:
			return a.rerunOther(ctx, inner, parent, tool, args)
		}
		call := mcpcore.Call{Tool: tool, Arguments: args, Subject: subject}
		cacheable := a.hintsOf(ctx, parent.Session, tool).readOnly
		wire, _, err := a.run(ctx, &call, cacheable, func(ctx context.Context) (mcp.Result, error) {
			return inner(ctx, methodCallTool, &mcp.CallToolRequest{
				Session: parent.Session, Extra: parent.Extra,
				Params: &mcp.CallToolParamsRaw{Name: tool, Arguments: args},
			})
		})
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			return nil, &mcpcore.ToolError{Message: rpc.Message}
		}
		if err == nil && wire == nil {
			return nil, errors.New("mcpfit: the tool did not answer with a tool result")
		}
		return wire, err
	}
}

// rerunOther reads a resource or gets a prompt again through the handler
// the middleware wraps, in the tool-result form shaping gave it.
func (a *adapter) rerunOther(ctx context.Context, inner mcp.MethodHandler, parent *mcp.CallToolRequest, tool string, args json.RawMessage) (json.RawMessage, error) {
	var res mcp.Result
	var err error
	if tool == mcpcore.ReadResourceTool {
		uri, uerr := mcpcore.ReadURI(args)
		if uerr != nil {
			return nil, uerr
		}
		res, err = inner(ctx, methodReadResource, &mcp.ReadResourceRequest{Session: parent.Session, Extra: parent.Extra,
			Params: &mcp.ReadResourceParams{URI: uri}})
	} else {
		var p struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		}
		if err := json.Unmarshal(args, &p); err != nil {
			return nil, err
		}
		res, err = inner(ctx, methodGetPrompt, &mcp.GetPromptRequest{Session: parent.Session, Extra: parent.Extra,
			Params: &mcp.GetPromptParams{Name: p.Name, Arguments: p.Arguments}})
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return nil, &mcpcore.ToolError{Message: rpc.Message}
	}
	if err != nil {
		return nil, err
	}
	wire, err := jsonwire.MarshalUnescaped(res)
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
		out = mcpcore.ErrorResult(mcpcore.ErrorOf(err))
	}
	return toResult(out)
}

// next is the continuation tool.
func (a *adapter) next(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	subject := a.subjectOf(ctx, req)
	return a.own(ctx, req.Params.Name, subject, a.shaper.Next(ctx, subject, req.Params.Arguments, a.rerun(req, subject))), nil
}

// details is the drill-down tool.
func (a *adapter) details(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	subject := a.subjectOf(ctx, req)
	return a.own(ctx, req.Params.Name, subject, a.shaper.Details(ctx, subject, req.Params.Arguments, a.rerun(req, subject))), nil
}

// search is the search tool.
func (a *adapter) search(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	subject := a.subjectOf(ctx, req)
	return a.own(ctx, req.Params.Name, subject, a.shaper.Search(ctx, subject, req.Params.Arguments, a.rerun(req, subject))), nil
}

// query is the query tool.
func (a *adapter) query(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	subject := a.subjectOf(ctx, req)
	return a.own(ctx, req.Params.Name, subject, a.shaper.Query(ctx, subject, req.Params.Arguments, a.rerun(req, subject))), nil
}

// readResource serves resources/read of ctxfit://r/... .
func (a *adapter) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	parent := &mcp.CallToolRequest{Session: req.Session, Extra: req.Extra}
	subject := a.subjectOf(ctx, parent)
	wire, err := a.shaper.ReadResource(ctx, subject, req.Params.URI, a.rerun(parent, subject))
	if err != nil {
		e := mcpcore.ErrorOf(err)
		switch {
		case errors.Is(err, ctxfit.ErrBadRequest):
			// A range it cannot give: say why.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: e.Text()}
		case e.Data.Status == 400:
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		return nil, &jsonrpc.Error{Code: int64(e.RPCCode()), Message: e.Text()}
	}
	var out mcp.ReadResourceResult
	if err := json.Unmarshal(wire, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// listTools returns res with copies of the guarded tools whose output
// schema is rewritten to accept shaped results.
func (a *adapter) listTools(res *mcp.ListToolsResult) *mcp.ListToolsResult {
	out := *res
	out.Tools = make([]*mcp.Tool, len(res.Tools))
	cfg := a.g.Config()
	for i, t := range res.Tools {
		out.Tools[i] = t
		if t == nil || !a.guarded(t.Name) {
			continue
		}
		if n := mcpcore.MaxResultSizeChars(cfg, t.Name); n > 0 {
			clone := *t
			clone.Meta = maps.Clone(t.Meta)
			if clone.Meta == nil {
				clone.Meta = mcp.Meta{}
			}
			clone.Meta[mcpcore.MetaMaxResultSizeChars] = n
			out.Tools[i], t = &clone, &clone
		}
		if t.OutputSchema == nil {
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
