package mcpclientfit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/internal/jsonwire"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// Options configure [New]. A nil *Options, like the zero value, means the
// defaults.
type Options struct {
	// NextTool is the name of the continuation tool. Empty means
	// "ctxfit_next".
	NextTool string
	// DetailsTool is the name of the drill-down tool. Empty means
	// "ctxfit_details".
	DetailsTool string
	// Subject returns what the cursors of a call are bound to. Nil means
	// store.SubjectFrom (set with store.WithSubject, package
	// [github.com/ctxfit/ctxfit/store]; "" when unset: every cursor of the
	// process then has the same, empty, subject).
	Subject func(ctx context.Context) string
}

// Guard shapes the results an MCP client receives (see the package
// documentation) and serves the continuation tools locally.
//
// A Guard is safe for concurrent use, and may be installed on any number
// of clients. The zero Guard is not usable: create one with [New].
type Guard struct {
	g    *ctxfit.Guard
	core *mcpcore.Client[*mcp.ClientSession]
}

// New returns a Guard that shapes results with g. It fails for a nil guard
// and for continuation and details tools of the same name. g must outlive
// the Guard.
func New(g *ctxfit.Guard, opts *Options) (*Guard, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	c, err := mcpcore.NewClient[*mcp.ClientSession]("mcpclientfit", g, o.NextTool, o.DetailsTool, o.Subject)
	if err != nil {
		return nil, err
	}
	return &Guard{g: g, core: c}, nil
}

// Install adds the Guard's middleware ([Guard.Middleware]) to c's sending
// middleware. Call it before c connects; middleware added after it runs
// before it, and sees results unshaped.
func (cg *Guard) Install(c *mcp.Client) {
	c.AddSendingMiddleware(cg.Middleware())
}

const (
	methodCallTool     = "tools/call"
	methodReadResource = "resources/read"
	methodGetPrompt    = "prompts/get"
	methodComplete     = "completion/complete"
)

// Middleware returns the sending middleware of the Guard:
//
//   - tools/call of ctxfit_next or ctxfit_details is answered by the Guard
//     ([Guard.CallTool]) and never sent;
//   - tools/call of another tool is sent, and its result shaped (see the
//     package documentation; an error too, kept an error) unless it asks
//     for input or names a tool whose [ctxfit.Endpoint] (Match = the tool
//     name) is Disabled;
//   - resources/read of a ctxfit://r/... URI is answered by the Guard: the
//     bytes a shaped result held back, whole, to the subject they were
//     held back for (a JSON-RPC error -32002 otherwise);
//   - resources/read of another URI is sent, and its result shaped as a
//     tool result whose blocks are its contents (endpoint
//     "resources/read"): a shaped text keeps its uri and mimeType with the
//     shaped body as its text, the guidance line follows as a text content
//     of the same uri (_meta "dev.ctxfit/guidance": true), a blob held back is
//     a text content at its ctxfit://r/... uri saying what it was (_meta
//     "dev.ctxfit/heldBack": the blob's uri);
//   - prompts/get is sent, and its result shaped (endpoint "prompts/get"),
//     then passed through the egress gate; completion/complete is sent and
//     its result passed through the egress gate (endpoint
//     "completion/complete": the values that fit, hasMore set);
//   - every other request passes through.
//
// When a result needs shaping and the Guard cannot shape it (the snapshot
// store is unavailable), the call answers a tool error that says to retry
// (a JSON-RPC error for resources/read): it fails closed, never passing a
// result over the hard cap on.
func (cg *Guard) Middleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if unshaped(ctx) {
				return next(ctx, method, req)
			}
			// The SDK sends a *mcp.ClientRequest[mcp.Params]: read the
			// params and the session through the interface.
			session, _ := req.GetSession().(*mcp.ClientSession)
			switch p := req.GetParams().(type) {
			case *mcp.CallToolParams:
				if method == methodCallTool && p != nil {
					return cg.callTool(ctx, next, method, req, session, p)
				}
			case *mcp.ReadResourceParams:
				if method == methodReadResource && p != nil {
					return cg.readResource(ctx, next, method, req, session, p)
				}
			case *mcp.GetPromptParams:
				if method == methodGetPrompt && p != nil {
					return cg.getPrompt(ctx, next, method, req, session, p)
				}
			case *mcp.CompleteParams:
				if method == methodComplete && p != nil {
					return cg.complete(ctx, next, method, req)
				}
			case *mcp.ListToolsParams:
				res, err := next(ctx, method, req)
				if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
					cg.learn(lr.Tools)
				}
				return res, err
			}
			return next(ctx, method, req)
		}
	}
}

// Tools returns the definitions of the continuation and drill-down tools,
// for the agent to add to the tools it gives the model. Their calls are
// answered by [Guard.CallTool].
func (cg *Guard) Tools() []*mcp.Tool {
	var tools []*mcp.Tool
	for _, t := range cg.core.Names.Tools() {
		tools = append(tools, &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}})
	}
	return tools
}

// Owns reports whether name is the continuation or the drill-down tool,
// whose calls [Guard.CallTool] answers.
func (cg *Guard) Owns(name string) bool { return cg.core.Names.Own(name) }

// CallTool answers a call of the continuation or drill-down tool with
// arguments args (a JSON object; nil means {}), for the subject of ctx: the
// next page, chunk or part of a shaped result, or the fields a summary
// left out. Errors a model can fix (a bad, expired or foreign cursor, an
// unknown field, missing arguments) are tool results with isError set and
// a text that says what to do. A replay-mode continuation or a drill-down
// calls the original tool again on the session that last called it
// through the Guard's middleware. CallTool returns an error only for a
// name the Guard does not own ([Guard.Owns]).
func (cg *Guard) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return cg.callOwn(ctx, nil, name, args)
}

func (cg *Guard) callOwn(ctx context.Context, session *mcp.ClientSession, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	wire, err := cg.core.Own(ctx, "mcpclientfit", name, args, cg.rerun(session))
	if err != nil {
		return nil, err
	}
	if wire, err = cg.core.Shaper.Gate(ctx, mcpcore.Call{Tool: name, Subject: cg.core.Subject(ctx)}, wire, nil); err != nil {
		wire = mcpcore.ErrorResult(mcpcore.ErrorOf(err))
	}
	return toResult(wire), nil
}

// Keep keeps content, a tool result that a conversation clears from its
// history, as a snapshot bound to the subject of ctx, and returns the call
// of the continuation tool that reads it back (see
// [conversation.Keeper]): following its cursors rebuilds content byte for
// byte, a JSON object or array as itself (in pages), any other text as
// text: each answer's first text block holds the text whole or a chunk of
// it as it is (not escaped again; its place in the block's _meta
// dev.ctxfit/chunk), and a guidance line follows that says how to read on,
// so that a recall costs the text and a line per chunk. The snapshot lives as long as a cursor
// (CursorTTL of the Guard's settings); in replay mode, or when the store
// refuses the snapshot, Keep fails and the result is not cleared.
func (cg *Guard) Keep(ctx context.Context, _ string, content string) (conversation.Recall, error) {
	tool, args, err := cg.core.Keep(ctx, content)
	return conversation.Recall{Tool: tool, Arguments: args}, err
}

var _ conversation.Keeper = (*Guard)(nil)

func (cg *Guard) callTool(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request, session *mcp.ClientSession, p *mcp.CallToolParams) (mcp.Result, error) {
	name := p.Name
	if cg.core.Names.Own(name) {
		args, err := argumentsOf(p.Arguments)
		if err != nil {
			return nil, &jsonrpc.Error{Code: mcpcore.CodeInvalidParams, Message: "mcpclientfit: " + err.Error()}
		}
		return cg.callOwn(ctx, session, name, args)
	}
	if !cg.core.Names.Guards(cg.g.Config(), name) {
		return next(ctx, method, req)
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return res, cg.gateError(ctx, name, err)
	}
	ctr, ok := res.(*mcp.CallToolResult)
	if !ok || ctr == nil || ctr.InputRequests != nil || ctr.NeedsInput() {
		return res, nil
	}
	cg.core.Remember(name, session)
	raw, err := argumentsOf(p.Arguments)
	if err != nil {
		return res, nil
	}
	args, err := mcpcore.CanonicalArguments(raw)
	if err != nil {
		return res, nil
	}
	wire, err := wireOf(ctr)
	if err != nil {
		return res, nil
	}
	call := mcpcore.Call{Tool: name, Arguments: args, Subject: cg.core.Subject(ctx), Unrepeatable: cg.core.Unrepeatable(name)}
	// Shaped (a tool's own error too, kept an error), then through the
	// egress gate: a result shaping failed on is passed on as it came when
	// it is within the hard cap, else cut losslessly; never over the cap.
	var shaped json.RawMessage
	sh, serr := cg.core.Shaper.ShapeResult(ctx, call, wire)
	if serr == nil {
		shaped = sh.Result
	}
	gated, err := cg.core.Shaper.Gate(ctx, call, wire, shaped)
	if err != nil {
		return toResult(mcpcore.ErrorResult(mcpcore.ErrorOf(cmp.Or(serr, err)))), nil
	}
	if bytes.Equal(gated, wire) {
		return ctr, nil
	}
	got, err := fromWire(gated)
	if err != nil {
		return toResult(mcpcore.ErrorResult(mcpcore.ErrorOf(err))), nil
	}
	out := *ctr // keeps what the SDK set on the result
	out.Content, out.StructuredContent, out.Meta = got.Content, got.StructuredContent, got.Meta
	return &out, nil
}

func (cg *Guard) readResource(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request, session *mcp.ClientSession, p *mcp.ReadResourceParams) (mcp.Result, error) {
	uri := p.URI
	subject := cg.core.Subject(ctx)
	if isOwnURI(uri) {
		wire, err := cg.core.Shaper.ReadResource(ctx, subject, uri, cg.rerun(session))
		if err != nil {
			e := mcpcore.ErrorOf(err)
			if e.Data.Status == 400 {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			return nil, &jsonrpc.Error{Code: int64(e.RPCCode()), Message: e.Text()}
		}
		var out mcp.ReadResourceResult
		if err := json.Unmarshal(wire, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	if !cg.core.Names.Guards(cg.g.Config(), mcpcore.ReadResourceTool) {
		return next(ctx, method, req)
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return res, cg.gateError(ctx, mcpcore.ReadResourceTool, err)
	}
	rr, ok := res.(*mcp.ReadResourceResult)
	if !ok || rr == nil || rr.InputRequests != nil {
		return res, nil
	}
	cg.core.Remember(mcpcore.ReadKey(uri), session)
	wire, err := jsonwire.MarshalUnescaped(rr)
	if err != nil {
		return res, nil
	}
	call := mcpcore.Call{Tool: mcpcore.ReadResourceTool, Arguments: mcpcore.ReadArguments(uri), Subject: subject}
	shaped, serr := cg.core.Shaper.ShapeRead(ctx, call, wire)
	if serr != nil {
		shaped.Result = nil
	}
	gated, err := cg.core.Shaper.Gate(ctx, call, wire, shaped.Result)
	if err != nil {
		e := mcpcore.ErrorOf(cmp.Or(serr, err))
		return nil, &jsonrpc.Error{Code: int64(e.RPCCode()), Message: e.Text()}
	}
	if bytes.Equal(gated, wire) {
		return rr, nil
	}
	var out mcp.ReadResourceResult
	if err := json.Unmarshal(gated, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (cg *Guard) getPrompt(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request, session *mcp.ClientSession, p *mcp.GetPromptParams) (mcp.Result, error) {
	if !cg.core.Names.Guards(cg.g.Config(), mcpcore.GetPromptTool) {
		return next(ctx, method, req)
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return res, cg.gateError(ctx, mcpcore.GetPromptTool, err)
	}
	gr, ok := res.(*mcp.GetPromptResult)
	if !ok || gr == nil {
		return res, nil
	}
	args, err := jsonwire.MarshalUnescaped(p.Arguments)
	if err != nil {
		return res, nil
	}
	pargs, err := mcpcore.PromptArguments(p.Name, args)
	if err != nil {
		return res, nil
	}
	cg.core.Remember(mcpcore.GetPromptTool+" "+p.Name, session)
	wire, err := jsonwire.MarshalUnescaped(gr)
	if err != nil {
		return res, nil
	}
	call := mcpcore.Call{Tool: mcpcore.GetPromptTool, Arguments: pargs, Subject: cg.core.Subject(ctx)}
	shaped, serr := cg.core.Shaper.ShapePrompt(ctx, call, wire)
	if serr != nil {
		shaped.Result = nil
	}
	return cg.gated(ctx, call, res, wire, shaped.Result, serr, &mcp.GetPromptResult{})
}

func (cg *Guard) complete(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	if !cg.core.Names.Guards(cg.g.Config(), mcpcore.CompleteTool) {
		return next(ctx, method, req)
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return res, cg.gateError(ctx, mcpcore.CompleteTool, err)
	}
	cr, ok := res.(*mcp.CompleteResult)
	if !ok || cr == nil {
		return res, nil
	}
	wire, err := jsonwire.MarshalUnescaped(cr)
	if err != nil {
		return res, nil
	}
	call := mcpcore.Call{Tool: mcpcore.CompleteTool, Subject: cg.core.Subject(ctx)}
	return cg.gated(ctx, call, res, wire, nil, nil, &mcp.CompleteResult{})
}

// gated passes a prompts/get or completion/complete result (res, as wire
// JSON; shaped what shaping made of it, serr why it failed) through the
// egress gate, and returns res itself when the gate left it as it was,
// else the gate's message read into out.
func (cg *Guard) gated(ctx context.Context, call mcpcore.Call, res mcp.Result, wire, shaped json.RawMessage, serr error, out mcp.Result) (mcp.Result, error) {
	gated, err := cg.core.Shaper.Gate(ctx, call, wire, shaped)
	if err != nil {
		e := mcpcore.ErrorOf(cmp.Or(serr, err))
		return nil, &jsonrpc.Error{Code: int64(e.RPCCode()), Message: e.Text()}
	}
	if bytes.Equal(gated, wire) {
		return res, nil
	}
	if err := json.Unmarshal(gated, out); err != nil {
		return nil, err
	}
	return out, nil
}

// gateError passes the server's JSON-RPC error to a guarded call of tool
// (a tool, or resources/read, prompts/get, completion/complete) through
// the egress gate ([mcpcore.Shaper.GateError]): as it came within the hard
// cap, else its message cut with a link to the whole error. Other errors
// (a broken connection) are ctxfit's to pass on as they are.
func (cg *Guard) gateError(ctx context.Context, tool string, err error) error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return err
	}
	call := mcpcore.Call{Tool: tool, Subject: cg.core.Subject(ctx)}
	msg, data, gerr := cg.core.Shaper.GateError(ctx, call, we.Code, we.Message, we.Data)
	switch {
	case gerr != nil:
		e := mcpcore.ErrorOf(gerr)
		return &jsonrpc.Error{Code: int64(e.RPCCode()), Message: e.Text()}
	case msg == we.Message:
		return err
	}
	return &jsonrpc.Error{Code: we.Code, Message: msg, Data: data}
}

func isOwnURI(uri string) bool {
	return len(uri) > len(mcpcore.ResourcePrefix) && uri[:len(mcpcore.ResourcePrefix)] == mcpcore.ResourcePrefix
}

// rerun runs a tool (or a read) again, unshaped, on the session that last
// ran it, or on fallback.
func (cg *Guard) rerun(fallback *mcp.ClientSession) mcpcore.Rerun {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		ctx = withUnshaped(ctx)
		if tool == mcpcore.ReadResourceTool {
			uri, err := mcpcore.ReadURI(args)
			if err != nil {
				return nil, err
			}
			s := cg.core.Runner(mcpcore.ReadKey(uri), fallback)
			if s == nil {
				return nil, &mcpcore.ToolError{Message: "no MCP session has read " + uri}
			}
			rr, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				return nil, toolError(err)
			}
			wire, err := jsonwire.MarshalUnescaped(rr)
			if err != nil {
				return nil, err
			}
			return mcpcore.ReadAsToolResult(wire)
		}
		if tool == mcpcore.GetPromptTool {
			var p struct {
				Name      string            `json:"name"`
				Arguments map[string]string `json:"arguments"`
			}
			if err := json.Unmarshal(args, &p); err != nil {
				return nil, err
			}
			s := cg.core.Runner(mcpcore.GetPromptTool+" "+p.Name, fallback)
			if s == nil {
				return nil, &mcpcore.ToolError{Message: "no MCP session has got the prompt " + p.Name}
			}
			gr, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: p.Arguments})
			if err != nil {
				return nil, toolError(err)
			}
			wire, err := jsonwire.MarshalUnescaped(gr)
			if err != nil {
				return nil, err
			}
			return mcpcore.PromptAsToolResult(wire)
		}
		s := cg.core.Runner(tool, fallback)
		if s == nil {
			return nil, &mcpcore.ToolError{Message: "no MCP session has called the tool " + tool}
		}
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return nil, toolError(err)
		}
		return wireOf(res)
	}
}

// wireOf returns the wire JSON of a tool result with its structured
// content as the server wrote its strings: the SDK's marshalling escapes
// '<', '>' and '&', which would cost a model tokens for nothing.
func wireOf(res *mcp.CallToolResult) (json.RawMessage, error) {
	wire, err := jsonwire.MarshalUnescaped(res)
	if err != nil || res.StructuredContent == nil {
		return wire, err
	}
	st, err := jsonwire.MarshalUnescaped(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	return mcpcore.WithStructured(wire, st), nil
}

// toolError is the error of a rerun the continuation answers as
// tool_failed.
func toolError(err error) error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return &mcpcore.ToolError{Message: rpc.Message}
	}
	return &mcpcore.ToolError{Message: err.Error()}
}

// argumentsOf returns a call's arguments as JSON.
func argumentsOf(args any) (json.RawMessage, error) {
	switch a := args.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		return a, nil
	case []byte:
		return a, nil
	}
	return jsonwire.MarshalUnescaped(args)
}

// toResult reads the wire JSON of a tool result ctxfit built.
func toResult(wire json.RawMessage) *mcp.CallToolResult {
	r, err := fromWire(wire)
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "ctxfit: " + err.Error()}}}
	}
	return r
}

// fromWire reads a tool result's wire JSON as the SDK's client reads one.
func fromWire(wire json.RawMessage) (*mcp.CallToolResult, error) {
	var r mcp.CallToolResult
	if err := json.Unmarshal(wire, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// learn records what the server's tools/list says of running its tools
// again: only a tool annotated read-only or idempotent is run again to
// continue its result (replay mode); any other's result is kept.
func (cg *Guard) learn(tools []*mcp.Tool) {
	hints := make([]mcpcore.ToolHints, 0, len(tools))
	for _, t := range tools {
		if t == nil {
			continue
		}
		h := mcpcore.ToolHints{Name: t.Name}
		if t.Annotations != nil {
			h.ReadOnly, h.Idempotent = t.Annotations.ReadOnlyHint, t.Annotations.IdempotentHint
		}
		hints = append(hints, h)
	}
	cg.core.Learn(hints)
}
