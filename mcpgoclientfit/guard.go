// Package mcpgoclientfit is mcpclientfit for agents on mark3labs/mcp-go's
// client: it keeps what the agent receives from MCP servers it does not
// control inside a token budget, losing nothing, with the same engine,
// budgets, promises, texts and continuation tools.
//
// mcp-go's client has no middleware: its requests go straight to its
// transport. So the [Guard] wraps the transport ([Guard.Wrap]) and works on
// the JSON-RPC messages themselves: a tools/call or resources/read result
// over the threshold is shaped before the client decodes it (a text block
// with the shaped body, a guidance line, ctxfit's _meta keys; blobs and
// media over the hard cap behind ctxfit://r/... links), structured content
// is shaped from the bytes the server wrote, and a tools/call of
// ctxfit_next or ctxfit_details, or a resources/read of a ctxfit:// URI,
// is answered by the wrapper and never sent. The wrapper keeps the optional
// interfaces of the transport it wraps (server-to-client requests, HTTP
// protocol versions, connection-lost handlers).
//
// The agent adds [Guard.Tools] to the tools it gives the model, and runs
// their calls with [Guard.CallTool] or with the client's CallTool. Cursors
// are bound to the subject of a call's context (store.WithSubject, package
// [github.com/ctxfit/ctxfit/store]), or to what [Options.Subject] returns.
// [Guard.Keep] is a conversation.Keeper.
package mcpgoclientfit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

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
	// store.SubjectFrom (set with store.WithSubject; "" when unset).
	Subject func(ctx context.Context) string
}

// Guard shapes the results an mcp-go client receives through the
// transports it wraps, and serves the continuation tools locally.
//
// A Guard is safe for concurrent use and may wrap any number of
// transports. The zero Guard is not usable: create one with [New].
type Guard struct {
	g    *ctxfit.Guard
	seq  atomic.Int64
	core *mcpcore.Client[*wrapped]
}

// New returns a Guard that shapes results with g. It fails for a nil guard
// and for continuation and details tools of the same name.
func New(g *ctxfit.Guard, opts *Options) (*Guard, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	c, err := mcpcore.NewClient[*wrapped]("mcpgoclientfit", g, o.NextTool, o.DetailsTool, o.Subject)
	if err != nil {
		return nil, err
	}
	return &Guard{g: g, core: c}, nil
}

// Tools returns the definitions of the continuation and drill-down tools,
// for the agent to add to the tools it gives the model.
func (cg *Guard) Tools() []mcp.Tool {
	ro := mcp.ToolAnnotation{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)}
	var tools []mcp.Tool
	for _, t := range cg.core.Names.Tools() {
		tool := mcp.NewToolWithRawSchema(t.Name, t.Description, t.InputSchema)
		tool.Annotations, tool.Title = ro, t.Title
		tools = append(tools, tool)
	}
	return tools
}

// Owns reports whether name is the continuation or the drill-down tool.
func (cg *Guard) Owns(name string) bool { return cg.core.Names.Own(name) }

// CallTool answers a call of the continuation or drill-down tool (see
// mcpclientfit.Guard.CallTool): errors a model can fix are results with
// isError set; a replay-mode continuation or a drill-down runs the tool
// again on the transport that last ran it. It returns an error only for a
// name the Guard does not own.
func (cg *Guard) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	wire, err := cg.core.Own(ctx, "mcpgoclientfit", name, args, cg.rerun(nil))
	if err != nil {
		return nil, err
	}
	raw := json.RawMessage(wire)
	return mcp.ParseCallToolResult(&raw)
}

// Keep keeps content, a tool result a conversation clears, as a snapshot
// bound to the subject of ctx, and returns the ctxfit_next call that reads
// it back (see mcpclientfit.Guard.Keep).
func (cg *Guard) Keep(ctx context.Context, _ string, content string) (conversation.Recall, error) {
	tool, args, err := cg.core.Keep(ctx, content)
	return conversation.Recall{Tool: tool, Arguments: args}, err
}

var _ conversation.Keeper = (*Guard)(nil)

// rerun runs a tool (or a read) again, unshaped, on the transport that
// last ran it, or on fallback.
func (cg *Guard) rerun(fallback *wrapped) mcpcore.Rerun {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == mcpcore.ReadResourceTool {
			uri, err := mcpcore.ReadURI(args)
			if err != nil {
				return nil, err
			}
			w := cg.core.Runner(mcpcore.ReadKey(uri), fallback)
			if w == nil {
				return nil, &mcpcore.ToolError{Message: "no MCP transport has read " + uri}
			}
			raw, err := w.send(ctx, string(mcp.MethodResourcesRead), map[string]any{"uri": uri})
			if err != nil {
				return nil, err
			}
			return mcpcore.ReadAsToolResult(raw)
		}
		if tool == mcpcore.GetPromptTool {
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal(args, &p); err != nil {
				return nil, err
			}
			w := cg.core.Runner(mcpcore.GetPromptTool+" "+p.Name, fallback)
			if w == nil {
				return nil, &mcpcore.ToolError{Message: "no MCP transport has got the prompt " + p.Name}
			}
			raw, err := w.send(ctx, string(mcp.MethodPromptsGet), map[string]any{"name": p.Name, "arguments": p.Arguments})
			if err != nil {
				return nil, err
			}
			return mcpcore.PromptAsToolResult(raw)
		}
		w := cg.core.Runner(tool, fallback)
		if w == nil {
			return nil, &mcpcore.ToolError{Message: "no MCP transport has called the tool " + tool}
		}
		return w.send(ctx, string(mcp.MethodToolsCall), map[string]any{"name": tool, "arguments": args})
	}
}

// Wrap returns t with the Guard in front of it: give the result to
// client.NewClient. It keeps the optional interfaces of t
// (transport.BidirectionalInterface, transport.HTTPConnection, and the
// connection-lost and legacy-protocol hooks of mcp-go's client).
func (cg *Guard) Wrap(t transport.Interface) transport.Interface {
	w := &wrapped{cg: cg, inner: t}
	_, bidi := t.(transport.BidirectionalInterface)
	_, conn := t.(transport.HTTPConnection)
	switch {
	case bidi && conn:
		return &bidiHTTPTransport{w}
	case bidi:
		return &bidiTransport{w}
	case conn:
		return &httpTransport{w}
	}
	return w
}

// wrapped is a transport with the Guard in front of it.
type wrapped struct {
	cg    *Guard
	inner transport.Interface

	mu      sync.Mutex
	meta    json.RawMessage // the _meta of the last request (protocol version, client info)
	version string
}

type bidiTransport struct{ *wrapped }
type httpTransport struct{ *wrapped }
type bidiHTTPTransport struct{ *wrapped }

func (b *bidiTransport) SetRequestHandler(h transport.RequestHandler) {
	b.inner.(transport.BidirectionalInterface).SetRequestHandler(h)
}

func (b *bidiHTTPTransport) SetRequestHandler(h transport.RequestHandler) {
	b.inner.(transport.BidirectionalInterface).SetRequestHandler(h)
}

func (h *httpTransport) SetProtocolVersion(v string) {
	h.inner.(transport.HTTPConnection).SetProtocolVersion(v)
}

func (h *bidiHTTPTransport) SetProtocolVersion(v string) {
	h.inner.(transport.HTTPConnection).SetProtocolVersion(v)
}

func (w *wrapped) Start(ctx context.Context) error { return w.inner.Start(ctx) }

func (w *wrapped) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	return w.inner.SendNotification(ctx, n)
}

func (w *wrapped) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	w.inner.SetNotificationHandler(h)
}

func (w *wrapped) Close() error { return w.inner.Close() }

func (w *wrapped) GetSessionId() string { return w.inner.GetSessionId() }

// SetConnectionLostHandler passes the handler on when the wrapped
// transport takes one.
func (w *wrapped) SetConnectionLostHandler(h func(error)) {
	if s, ok := w.inner.(interface{ SetConnectionLostHandler(func(error)) }); ok {
		s.SetConnectionLostHandler(h)
	}
}

// RequiresLegacyProtocol is the wrapped transport's answer, false when it
// has none.
func (w *wrapped) RequiresLegacyProtocol() bool {
	l, ok := w.inner.(interface{ RequiresLegacyProtocol() bool })
	return ok && l.RequiresLegacyProtocol()
}

// call is the part of a request's params the wrapper reads.
type call struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	URI       string          `json:"uri"`
	Meta      json.RawMessage `json:"_meta"`
}

// SendRequest answers tools/call of the continuation tools and
// resources/read of ctxfit:// URIs itself, shapes the results of other
// tools/call and resources/read requests, passes prompts/get results
// (shaped first) and completion/complete results through the egress gate,
// and passes everything else on.
func (w *wrapped) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	method := mcp.MCPMethod(req.Method)
	if method == mcp.MethodToolsList {
		resp, err := w.inner.SendRequest(ctx, req)
		if err == nil && resp != nil && resp.Error == nil {
			w.cg.learn(resp.Result)
		}
		return resp, err
	}
	switch method {
	case mcp.MethodToolsCall, mcp.MethodResourcesRead:
	case mcp.MethodPromptsGet, mcp.MethodCompletionComplete:
		return w.sendGated(ctx, req, method)
	default:
		return w.inner.SendRequest(ctx, req)
	}
	params, err := json.Marshal(req.Params)
	if err != nil {
		return w.inner.SendRequest(ctx, req)
	}
	var c call
	_ = json.Unmarshal(params, &c)
	w.note(c.Meta)
	cg := w.cg
	subject := cg.core.Subject(ctx)
	if method == mcp.MethodToolsCall {
		if cg.core.Names.Own(c.Name) {
			wire, _ := cg.core.Own(ctx, "mcpgoclientfit", c.Name, c.Arguments, cg.rerun(w))
			if gated, err := cg.core.Shaper.Gate(ctx, mcpcore.Call{Tool: c.Name, Subject: subject}, wire, nil); err == nil {
				wire = gated
			} else {
				wire = mcpcore.ErrorResult(mcpcore.ErrorOf(err))
			}
			return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Result: wire}, nil
		}
		if !cg.core.Names.Guards(cg.g.Config(), c.Name) {
			return w.inner.SendRequest(ctx, req)
		}
	} else if strings.HasPrefix(c.URI, mcpcore.ResourcePrefix) {
		wire, err := cg.core.Shaper.ReadResource(ctx, subject, c.URI, cg.rerun(w))
		if err != nil {
			e := mcpcore.ErrorOf(err)
			code := e.RPCCode()
			if e.Data.Status == 400 {
				code = mcp.RESOURCE_NOT_FOUND
			}
			return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID,
				Error: &mcp.JSONRPCErrorDetails{Code: code, Message: e.Text()}}, nil
		}
		return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Result: wire}, nil
	} else if !cg.core.Names.Guards(cg.g.Config(), mcpcore.ReadResourceTool) {
		return w.inner.SendRequest(ctx, req)
	}
	resp, err := w.inner.SendRequest(ctx, req)
	if err == nil && resp != nil && resp.Error != nil {
		errCall := mcpcore.Call{Tool: c.Name, Subject: subject}
		if method == mcp.MethodResourcesRead {
			errCall.Tool = mcpcore.ReadResourceTool
		}
		return w.gateError(ctx, errCall, resp), nil
	}
	if err != nil || resp == nil || needsInput(resp.Result) {
		return resp, err
	}
	var call mcpcore.Call
	var shaped mcpcore.Shaped
	var serr error
	if method == mcp.MethodToolsCall {
		cg.core.Remember(c.Name, w)
		args, err := mcpcore.CanonicalArguments(c.Arguments)
		if err != nil {
			return resp, nil
		}
		call = mcpcore.Call{Tool: c.Name, Arguments: args, Subject: subject, Unrepeatable: cg.core.Unrepeatable(c.Name)}
		shaped, serr = cg.core.Shaper.ShapeResult(ctx, call, resp.Result)
	} else {
		cg.core.Remember(mcpcore.ReadKey(c.URI), w)
		call = mcpcore.Call{Tool: mcpcore.ReadResourceTool, Arguments: mcpcore.ReadArguments(c.URI), Subject: subject}
		shaped, serr = cg.core.Shaper.ShapeRead(ctx, call, resp.Result)
	}
	if serr != nil {
		shaped.Result = nil
	}
	// Through the egress gate: a result shaping failed on is passed on as
	// it came when it is within the hard cap, else cut losslessly; never
	// over the cap.
	gated, err := cg.core.Shaper.Gate(ctx, call, resp.Result, shaped.Result)
	if err != nil {
		e := mcpcore.ErrorOf(cmp.Or(serr, err))
		if method == mcp.MethodToolsCall {
			gated = mcpcore.ErrorResult(e)
		} else {
			return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID,
				Error: &mcp.JSONRPCErrorDetails{Code: e.RPCCode(), Message: e.Text()}}, nil
		}
	}
	if bytes.Equal(gated, resp.Result) {
		return resp, nil
	}
	out := *resp
	out.Result = gated
	return &out, nil
}

// sendGated sends a prompts/get or completion/complete request and passes
// its result through the egress gate (a prompt shaped first).
func (w *wrapped) sendGated(ctx context.Context, req transport.JSONRPCRequest, method mcp.MCPMethod) (*transport.JSONRPCResponse, error) {
	cg := w.cg
	call := mcpcore.Call{Tool: mcpcore.CompleteTool, Subject: cg.core.Subject(ctx)}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if method == mcp.MethodPromptsGet {
		params, err := json.Marshal(req.Params)
		if err != nil || json.Unmarshal(params, &p) != nil {
			return w.inner.SendRequest(ctx, req)
		}
		args, err := mcpcore.PromptArguments(p.Name, p.Arguments)
		if err != nil {
			return w.inner.SendRequest(ctx, req)
		}
		call.Tool, call.Arguments = mcpcore.GetPromptTool, args
	}
	if !cg.core.Names.Guards(cg.g.Config(), call.Tool) {
		return w.inner.SendRequest(ctx, req)
	}
	resp, err := w.inner.SendRequest(ctx, req)
	if err == nil && resp != nil && resp.Error != nil {
		return w.gateError(ctx, call, resp), nil
	}
	if err != nil || resp == nil || needsInput(resp.Result) {
		return resp, err
	}
	var shaped json.RawMessage
	var serr error
	if call.Tool == mcpcore.GetPromptTool {
		cg.core.Remember(mcpcore.GetPromptTool+" "+p.Name, w)
		var sh mcpcore.Shaped
		if sh, serr = cg.core.Shaper.ShapePrompt(ctx, call, resp.Result); serr == nil {
			shaped = sh.Result
		}
	}
	gated, err := cg.core.Shaper.Gate(ctx, call, resp.Result, shaped)
	if err != nil {
		e := mcpcore.ErrorOf(cmp.Or(serr, err))
		return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID,
			Error: &mcp.JSONRPCErrorDetails{Code: e.RPCCode(), Message: e.Text()}}, nil
	}
	if bytes.Equal(gated, resp.Result) {
		return resp, nil
	}
	out := *resp
	out.Result = gated
	return &out, nil
}

// gateError passes the server's JSON-RPC error in resp, the answer to
// call, through the egress gate ([mcpcore.Shaper.GateError]): as it came
// within the hard cap, else its message cut with a link to the whole
// error.
func (w *wrapped) gateError(ctx context.Context, call mcpcore.Call, resp *transport.JSONRPCResponse) *transport.JSONRPCResponse {
	var data json.RawMessage
	if resp.Error.Data != nil {
		var err error
		if data, err = json.Marshal(resp.Error.Data); err != nil {
			return resp
		}
	}
	msg, gdata, err := w.cg.core.Shaper.GateError(ctx, call, int64(resp.Error.Code), resp.Error.Message, data)
	out := *resp
	switch {
	case err != nil:
		e := mcpcore.ErrorOf(err)
		out.Error = &mcp.JSONRPCErrorDetails{Code: e.RPCCode(), Message: e.Text()}
	case msg == resp.Error.Message:
		return resp
	default:
		out.Error = &mcp.JSONRPCErrorDetails{Code: resp.Error.Code, Message: msg, Data: gdata}
	}
	return &out
}

// needsInput reports whether a result asks the client for input (a
// multi-round-trip result), which passes through.
func needsInput(result json.RawMessage) bool {
	var r struct {
		ResultType    string          `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
	}
	_ = json.Unmarshal(result, &r)
	return r.ResultType == "input_required" || len(r.InputRequests) > 0 && string(r.InputRequests) != "null"
}

// note keeps the _meta of the client's requests, which a rerun repeats
// (protocol 2026-07-28 carries the protocol version and the client's
// identity in every request).
func (w *wrapped) note(meta json.RawMessage) {
	if len(meta) == 0 {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return
	}
	var version string
	_ = json.Unmarshal(m[mcp.MetaKeyProtocolVersion], &version)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.meta, w.version = meta, version
}

// send sends a request of the Guard's own (a rerun) on the wrapped
// transport, with an id of its own, and returns its result.
func (w *wrapped) send(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	w.mu.Lock()
	meta, version := w.meta, w.version
	w.mu.Unlock()
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	encoded, err := jsonwire.MarshalUnescaped(params)
	if err != nil {
		return nil, err
	}
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, Method: method, Params: json.RawMessage(encoded),
		ID: mcp.NewRequestId(fmt.Sprintf("ctxfit-%d", w.cg.seq.Add(1)))}
	if version != "" {
		if h := mcp.StandardHeaders(version, mcp.MCPMethod(method), encoded); len(h) > 0 {
			req.Header = map[string][]string{}
			for k, v := range h {
				req.Header.Set(k, v)
			}
		}
	}
	resp, err := w.inner.SendRequest(ctx, req)
	if err != nil {
		return nil, &mcpcore.ToolError{Message: err.Error()}
	}
	if resp.Error != nil {
		return nil, &mcpcore.ToolError{Message: resp.Error.Message}
	}
	return resp.Result, nil
}

// learn records what a tools/list result says of running each tool again:
// only a tool annotated read-only or idempotent is run again to continue
// its result (replay mode); any other's result is kept.
func (cg *Guard) learn(result json.RawMessage) {
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			Annotations struct {
				ReadOnly   *bool `json:"readOnlyHint"`
				Idempotent *bool `json:"idempotentHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &list) != nil {
		return
	}
	hints := make([]mcpcore.ToolHints, 0, len(list.Tools))
	for _, t := range list.Tools {
		a := t.Annotations
		hints = append(hints, mcpcore.ToolHints{Name: t.Name,
			ReadOnly: a.ReadOnly != nil && *a.ReadOnly, Idempotent: a.Idempotent != nil && *a.Idempotent})
	}
	cg.core.Learn(hints)
}
