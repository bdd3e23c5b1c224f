package proxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit/internal/jsonwire"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/store"
)

const resourcePrefix = mcpcore.ResourcePrefix

// marshalUnescaped encodes v compactly without escaping HTML.
func marshalUnescaped(v any) json.RawMessage {
	b, _ := jsonwire.MarshalUnescaped(v)
	return b
}

// object is a JSON object as its members in order, so that what the proxy
// does not change goes out as it came in.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(raw json.RawMessage) (*object, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	o := &object{vals: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = v
	}
	return o, true
}

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalUnescaped(k))
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// mergeInitialize returns the upstream's initialize result with ctxfit's
// capabilities added: tools (ctxfit's tools are listed even when the
// upstream has none) with listChanged (a reconnected upstream may list
// others), and resources (the held-back content of shaped results is read
// with resources/read).
func (p *Proxy) mergeInitialize(raw json.RawMessage) json.RawMessage {
	res, ok := parseObject(raw)
	if !ok {
		return raw
	}
	caps, ok := parseObject(res.vals["capabilities"])
	if !ok {
		caps = &object{vals: map[string]json.RawMessage{}}
	}
	tools, ok := parseObject(caps.vals["tools"])
	if !ok {
		tools = &object{vals: map[string]json.RawMessage{}}
	}
	tools.set("listChanged", json.RawMessage("true"))
	caps.set("tools", tools.marshal())
	if _, ok := caps.vals["resources"]; !ok {
		caps.set("resources", json.RawMessage("{}"))
	}
	res.set("capabilities", caps.marshal())
	return res.marshal()
}

// ownTools are the tools/list entries of ctxfit's tools.
func (p *Proxy) ownTools() []json.RawMessage {
	ann := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	tools := p.o.Names.Tools()
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		out[i] = marshalUnescaped(&mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, Annotations: ann})
	}
	return out
}

// listTools rewrites a tools/list result: each guarded tool's outputSchema
// is rewritten to accept shaped results and its _meta gets
// anthropic/maxResultSizeChars; an upstream tool named like one of
// ctxfit's (the catalog's included) is left out; the first page (a
// request without a cursor) gets ctxfit's tools at its end. What each
// tool says of running again is learned for replay mode.
func (p *Proxy) listTools(params, raw json.RawMessage) json.RawMessage {
	res, out, ok := p.rewritePage(raw)
	if !ok {
		return raw
	}
	if cursorOf(params) == "" {
		out = append(out, p.ownTools()...)
	}
	res.set("tools", marshalUnescaped(out))
	return res.marshal()
}

// cursorOf is the cursor of a tools/list request's params, "" for none.
func cursorOf(params json.RawMessage) string {
	var req struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &req)
	return req.Cursor
}

// rewritePage reads a page of the upstream's tools/list and returns it
// with its tools rewritten as [Proxy.listTools] says (without ctxfit's);
// false when it is not a tools/list result.
func (p *Proxy) rewritePage(raw json.RawMessage) (*object, []json.RawMessage, bool) {
	res, ok := parseObject(raw)
	if !ok {
		return nil, nil, false
	}
	var tools []json.RawMessage
	if json.Unmarshal(res.vals["tools"], &tools) != nil {
		return nil, nil, false
	}
	cfg := p.guard.Config()
	out := make([]json.RawMessage, 0, len(tools)+4)
	var hints []mcpcore.ToolHints
	for _, t := range tools {
		var head struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  *struct {
				ReadOnly   bool `json:"readOnlyHint"`
				Idempotent bool `json:"idempotentHint"`
			} `json:"annotations"`
		}
		if json.Unmarshal(t, &head) != nil {
			out = append(out, t)
			continue
		}
		if p.o.Names.Own(head.Name) || head.Name == mcpcore.FindTool || head.Name == mcpcore.CallTool {
			p.logger.Warn("proxy: the upstream's tool has the name of a ctxfit tool; it is not listed", "tool", head.Name)
			continue
		}
		h := mcpcore.ToolHints{Name: head.Name}
		if head.Annotations != nil {
			h.ReadOnly, h.Idempotent = head.Annotations.ReadOnly, head.Annotations.Idempotent
		}
		hints = append(hints, h)
		if !p.o.Names.Guards(cfg, head.Name) {
			out = append(out, t)
			continue
		}
		tool, ok := parseObject(t)
		if !ok {
			out = append(out, t)
			continue
		}
		if len(head.OutputSchema) > 0 && string(head.OutputSchema) != "null" {
			if schema, err := mcpcore.OutputSchema(head.OutputSchema); err == nil && schema != nil {
				tool.set("outputSchema", schema)
			}
		}
		if n := mcpcore.MaxResultSizeChars(cfg, head.Name); n > 0 {
			meta, ok := parseObject(tool.vals["_meta"])
			if !ok {
				meta = &object{vals: map[string]json.RawMessage{}}
			}
			meta.set(mcpcore.MetaMaxResultSizeChars, marshalUnescaped(n))
			tool.set("_meta", meta.marshal())
		}
		out = append(out, tool.marshal())
	}
	p.core.Learn(hints)
	return res, out, true
}

// callTool handles the client's tools/call: ctxfit's tools are answered
// here; any other goes upstream, within the rate limit and the breaker.
func (s *session) callTool(m *jsonrpc.Request) {
	var params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &params)
	pd := &pending{clientID: m.ID, method: m.Method, params: m.Params, tool: params.Name, start: s.p.o.Now()}
	if status, res := s.admit(); res != nil {
		s.p.logCall(s, pd, status, res, nil)
		s.toClient(&jsonrpc.Response{ID: m.ID, Result: res})
		return
	}
	switch params.Name {
	case mcpcore.FindTool:
		s.findTools(m, pd, params.Arguments)
		return
	case mcpcore.CallTool:
		s.callThrough(m, pd, params.Arguments)
		return
	}
	if s.p.o.Names.Own(params.Name) {
		s.localRequest(m, func(ctx context.Context) {
			res, err := s.p.core.Own(ctx, "proxy", params.Name, params.Arguments, s.rerun())
			if err == nil {
				res, err = s.p.core.Shaper.Gate(ctx, mcpcore.Call{Tool: params.Name, Subject: s.subject}, res, nil)
			}
			if err != nil {
				res = mcpcore.ErrorResult(mcpcore.ErrorOf(err))
			}
			if ctx.Err() != nil && s.ctx.Err() == nil {
				s.p.logCall(s, pd, StatusCanceled, nil, ctx.Err())
				return // canceled: no answer
			}
			s.p.logCall(s, pd, "", res, nil)
			s.toClient(&jsonrpc.Response{ID: m.ID, Result: res})
		})
		return
	}
	s.p.usage.Add(params.Name)
	s.forward(m, pd)
}

// rerun runs a tool, a read or a prompt again on the session's upstream,
// unshaped.
func (s *session) rerun() mcpcore.Rerun {
	return func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		ctx, cancel := context.WithTimeout(ctx, s.p.o.CallTimeout)
		defer cancel()
		switch tool {
		case mcpcore.ReadResourceTool:
			uri, err := mcpcore.ReadURI(args)
			if err != nil {
				return nil, err
			}
			raw, err := s.call(ctx, "resources/read", map[string]string{"uri": uri})
			if err != nil {
				return nil, toolError(err)
			}
			return mcpcore.ReadAsToolResult(raw)
		case mcpcore.GetPromptTool:
			raw, err := s.call(ctx, "prompts/get", args)
			if err != nil {
				return nil, toolError(err)
			}
			return mcpcore.PromptAsToolResult(raw)
		}
		params := map[string]json.RawMessage{"name": marshalUnescaped(tool)}
		if len(args) > 0 {
			params["arguments"] = args
		}
		raw, err := s.call(ctx, "tools/call", params)
		if err != nil {
			return nil, toolError(err)
		}
		return raw, nil
	}
}

func toolError(err error) error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return &mcpcore.ToolError{Message: rpc.Message}
	}
	return &mcpcore.ToolError{Message: err.Error()}
}

// shape shapes the upstream's result of a tools/call, resources/read or
// prompts/get, and logs a tools/call.
func (s *session) shape(pd *pending, raw json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	ctx := store.WithSubject(context.WithValue(s.ctx, sessionKey{}, s), s.bound)
	cfg := s.p.guard.Config()
	names := s.p.o.Names
	switch pd.method {
	case "tools/call":
		var params struct {
			Arguments json.RawMessage  `json:"arguments"`
			Task      *json.RawMessage `json:"task"`
		}
		_ = json.Unmarshal(pd.params, &params)
		out := raw
		switch {
		case params.Task != nil:
			s.rememberTask(pd.tool, params.Arguments, raw)
		case names.Guards(cfg, pd.tool):
			out = s.shapeCall(ctx, pd.tool, params.Arguments, raw)
		}
		s.succeeded()
		s.p.logCall(s, pd, "", out, nil)
		return out, nil
	case "tasks/result":
		if !names.Guards(cfg, pd.tool) {
			return raw, nil
		}
		return s.shapeCall(ctx, pd.tool, pd.args, raw), nil
	case "resources/read":
		if !names.Guards(cfg, mcpcore.ReadResourceTool) {
			return raw, nil
		}
		call := mcpcore.Call{Tool: mcpcore.ReadResourceTool, Arguments: mcpcore.ReadArguments(pd.uri), Subject: s.bound}
		shaped, err := s.p.core.Shaper.ShapeRead(ctx, call, raw)
		return s.gate(ctx, call, raw, shaped.Result, err)
	case "prompts/get":
		if !names.Guards(cfg, mcpcore.GetPromptTool) {
			return raw, nil
		}
		var params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(pd.params, &params)
		args, err := mcpcore.PromptArguments(params.Name, params.Arguments)
		if err != nil {
			return raw, nil
		}
		// A prompt is got again to continue it: prompts change nothing.
		call := mcpcore.Call{Tool: mcpcore.GetPromptTool, Arguments: args, Subject: s.bound}
		shaped, err := s.p.core.Shaper.ShapePrompt(ctx, call, raw)
		return s.gate(ctx, call, raw, shaped.Result, err)
	case "completion/complete":
		if !names.Guards(cfg, mcpcore.CompleteTool) {
			return raw, nil
		}
		return s.gate(ctx, mcpcore.Call{Tool: mcpcore.CompleteTool, Subject: s.subject}, raw, nil, nil)
	}
	return raw, nil
}

// gate passes a result of resources/read, prompts/get or
// completion/complete through the egress gate ([mcpcore.Shaper.Gate]):
// shaped (nil when shapeErr is set) within the hard cap, else the
// gate's lossless cut; an error only when the gate cannot keep the
// original.
func (s *session) gate(ctx context.Context, call mcpcore.Call, raw, shaped json.RawMessage, shapeErr error) (json.RawMessage, *jsonrpc.Error) {
	if shapeErr != nil {
		shaped = nil
	}
	out, err := s.p.core.Shaper.Gate(ctx, call, raw, shaped)
	if err != nil {
		e := mcpcore.ErrorOf(cmp.Or(shapeErr, err))
		return nil, &jsonrpc.Error{Code: int64(e.RPCCode()), Message: e.Text()}
	}
	return out, nil
}

// errorCall is the call whose hard cap bounds the upstream's JSON-RPC
// error answering pd: a guarded tools/call (or tasks/result),
// resources/read, prompts/get or completion/complete; false for any other
// request, whose errors pass as they came.
func (s *session) errorCall(pd *pending) (mcpcore.Call, bool) {
	tool := pd.tool
	switch pd.method {
	case "tools/call", "tasks/result":
	case "resources/read":
		tool = mcpcore.ReadResourceTool
	case "prompts/get":
		tool = mcpcore.GetPromptTool
	case "completion/complete":
		tool = mcpcore.CompleteTool
	default:
		return mcpcore.Call{}, false
	}
	if tool == "" || !s.p.o.Names.Guards(s.p.guard.Config(), tool) {
		return mcpcore.Call{}, false
	}
	return mcpcore.Call{Tool: tool, Subject: s.bound}, true
}

// gateError passes the upstream's JSON-RPC error answering call through
// the egress gate ([mcpcore.Shaper.GateError]): as it came within the hard
// cap, else its message cut with a link to the whole error.
func (s *session) gateError(call mcpcore.Call, err error) error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return err
	}
	ctx := store.WithSubject(context.WithValue(s.ctx, sessionKey{}, s), s.bound)
	msg, data, gerr := s.p.core.Shaper.GateError(ctx, call, we.Code, we.Message, we.Data)
	if gerr != nil {
		e := mcpcore.ErrorOf(gerr)
		return &jsonrpc.Error{Code: int64(e.RPCCode()), Message: e.Text()}
	}
	return &jsonrpc.Error{Code: we.Code, Message: msg, Data: data}
}

// maxTasks bounds the tasks a session remembers the call of.
const maxTasks = 1024

// rememberTask notes which call created the task a CreateTaskResult names,
// so that its result is shaped when it is fetched.
func (s *session) rememberTask(tool string, args, raw json.RawMessage) {
	var r struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Task.TaskID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tasks) >= maxTasks {
		clear(s.tasks)
	}
	s.tasks[r.Task.TaskID] = &pending{tool: tool, args: args}
}

// shapeCall shapes a tool result and passes it through the egress gate: a
// result the guard cannot shape is sent as it came when it is within the
// hard cap, else cut by the gate; a tool error that says to retry only
// when the gate cannot keep the original. Never the result over the hard
// cap.
func (s *session) shapeCall(ctx context.Context, tool string, rawArgs, raw json.RawMessage) json.RawMessage {
	args, err := mcpcore.CanonicalArguments(rawArgs)
	if err != nil {
		return raw
	}
	call := mcpcore.Call{Tool: tool, Arguments: args, Subject: s.bound, Unrepeatable: s.p.core.Unrepeatable(tool)}
	shaped, err := s.p.core.Shaper.ShapeResult(ctx, call, raw)
	var out json.RawMessage
	if err == nil {
		out, err = s.p.core.Shaper.Gate(ctx, call, raw, shaped.Result)
	} else if out, _ = s.p.core.Shaper.Gate(ctx, call, raw, nil); out != nil {
		err = nil
	}
	if err != nil {
		return mcpcore.ErrorResult(mcpcore.ErrorOf(err))
	}
	return out
}

// readOwn answers resources/read of a ctxfit://r/... link.
func (s *session) readOwn(ctx context.Context, m *jsonrpc.Request, uri string) {
	raw, err := s.p.core.Shaper.ReadResource(ctx, s.bound, uri, s.rerun())
	if ctx.Err() != nil && s.ctx.Err() == nil {
		return
	}
	if err != nil {
		e := mcpcore.ErrorOf(err)
		code := int64(e.RPCCode())
		if e.Data.Status == 400 {
			code = mcp.CodeResourceNotFound
		}
		s.replyError(m.ID, code, e.Text())
		return
	}
	s.toClient(&jsonrpc.Response{ID: m.ID, Result: raw})
}

// Statuses of a tool call, as logged: status is one of the first three,
// reason says which fault when it is not success.
const (
	StatusSuccess         = "success"          // the tool answered (isError or not)
	StatusFailure         = "failure"          // anything else but a timeout
	StatusTimeout         = "timeout"          // the upstream did not answer in time
	StatusError           = "error"            // reason: a JSON-RPC error (from the upstream or ctxfit)
	StatusToolError       = "tool_error"       // reason: the tool answered with isError
	StatusUpstreamFailure = "upstream_failure" // reason: the upstream's connection broke during the call
	StatusRestarting      = "restarting"       // reason: no upstream connection: it is reconnecting
	StatusCircuitOpen     = "circuit_open"     // reason: the breaker is open
	StatusRateLimited     = "rate_limited"     // reason: the client is over its rate
	StatusCanceled        = "canceled"         // reason: the client canceled the call
)

// Keys of the _meta of the proxy's own tool errors.
const (
	// MetaError is the _meta key of a proxy error's code (the reason).
	MetaError = "dev.ctxfit/proxyError"
	// MetaRetryAfter is the _meta key of the seconds to wait before a retry.
	MetaRetryAfter = "dev.ctxfit/retryAfter"
)

// errorResult is a tool error: text only, with no structured content, so
// that clients that validate structured content against the tool's output
// schema accept it.
func errorResult(code, msg string, retryAfter int) json.RawMessage {
	meta := map[string]any{MetaError: code}
	if retryAfter > 0 {
		meta[MetaRetryAfter] = retryAfter
	}
	return marshalUnescaped(map[string]any{
		"content": []any{map[string]string{"type": "text", "text": "Error " + code + ": " + msg}},
		"isError": true,
		"_meta":   meta,
	})
}
