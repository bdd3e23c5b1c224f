package proxy

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's streamable HTTP server transport refuses, with HTTP 400,
// requests and notifications of methods its own server does not handle
// (tasks/get, tasks/result, and any method of a later revision or an
// extension). The proxy must relay them, so its handler wraps each such
// message of a POST in a method the transport knows (ping for a request,
// notifications/progress for a notification) with the original under
// tunnelKey, and tunnelConn unwraps it as it is read.
const tunnelKey = "dev.ctxfit/tunneled"

// knownMethods are the client-to-server methods the SDK's transport
// accepts as they are.
var knownMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "prompts/list": true,
	"prompts/get": true, "completion/complete": true, "logging/setLevel": true,
	"server/discover": true, "subscriptions/listen": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/roots/list_changed": true,
}

type tunneled struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// tunnelBody rewrites the messages of a POST body that the transport
// would refuse; it returns the body unchanged when there are none.
func tunnelBody(body []byte) []byte {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil {
			return body
		}
		changed := false
		for i, m := range batch {
			if out := tunnelOne(m); out != nil {
				batch[i], changed = out, true
			}
		}
		if !changed {
			return body
		}
		return marshalUnescaped(batch)
	}
	if out := tunnelOne(trimmed); out != nil {
		return out
	}
	return body
}

func tunnelOne(raw []byte) []byte {
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return nil
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || knownMethods[req.Method] {
		return nil
	}
	inner := marshalUnescaped(tunneled{Method: req.Method, Params: req.Params})
	out := &jsonrpc.Request{ID: req.ID, Method: "ping", Params: marshalUnescaped(map[string]json.RawMessage{tunnelKey: inner})}
	if !req.IsCall() {
		out.Method = "notifications/progress"
	}
	data, err := jsonrpc.EncodeMessage(out)
	if err != nil {
		return nil
	}
	return data
}

// tunnelConn is a downstream connection that unwraps tunneled messages.
type tunnelConn struct{ mcp.Connection }

func (c tunnelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || (req.Method != "ping" && req.Method != "notifications/progress") {
		return msg, err
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(req.Params, &p) != nil || p[tunnelKey] == nil {
		return msg, nil
	}
	var t tunneled
	if json.Unmarshal(p[tunnelKey], &t) != nil || t.Method == "" {
		return msg, nil
	}
	return &jsonrpc.Request{ID: req.ID, Method: t.Method, Params: t.Params}, nil
}
