package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// markerKey is the _meta key that tags an outgoing tools/call so that its
// raw response can be found again. The capturing connection removes it
// before the request reaches the upstream.
const markerKey = "ctxfit/proxyCall"

// captureTransport wraps an upstream transport so that the structured
// content of every tools/call response is kept as raw JSON.
//
// The SDK's client decodes structuredContent into map[string]any, which
// loses the upstream's key order and the precision of large integers; the
// proxy must hand the guard the upstream's bytes, or following every cursor
// would not reproduce the upstream's output exactly.
type captureTransport struct {
	inner mcp.Transport
	conn  *captureConn // set by Connect
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &captureConn{Connection: c, ids: map[string]string{}, raw: map[string]json.RawMessage{}}
	return t.conn, nil
}

// captureConn is an mcp.Connection that strips the marker of outgoing
// tools/call requests and keeps the raw structured content of their
// responses by marker. It is safe for concurrent use.
type captureConn struct {
	mcp.Connection

	mu  sync.Mutex
	ids map[string]string          // JSON-RPC id -> marker, for calls in flight
	raw map[string]json.RawMessage // marker -> structuredContent, until taken
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && req.ID.IsValid() {
		if marker, params, ok := stripMarker(req.Params); ok {
			out := *req
			out.Params = params
			c.mu.Lock()
			c.ids[idKey(req.ID)] = marker
			c.mu.Unlock()
			msg = &out
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		key := idKey(resp.ID)
		c.mu.Lock()
		marker, found := c.ids[key]
		delete(c.ids, key)
		c.mu.Unlock()
		if found && resp.Error == nil {
			var r struct {
				StructuredContent json.RawMessage `json:"structuredContent"`
			}
			if json.Unmarshal(resp.Result, &r) == nil && len(r.StructuredContent) > 0 && !bytes.Equal(r.StructuredContent, []byte("null")) {
				c.mu.Lock()
				c.raw[marker] = r.StructuredContent
				c.mu.Unlock()
			}
		}
	}
	return msg, err
}

// take returns and forgets the raw structured content of the call tagged
// marker, and forgets the call if it is still in flight (it timed out).
func (c *captureConn) take(marker string) json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	raw := c.raw[marker]
	delete(c.raw, marker)
	for k, m := range c.ids {
		if m == marker {
			delete(c.ids, k)
			break
		}
	}
	return raw
}

// stripMarker removes the marker from params._meta (and _meta itself when
// it holds nothing else) and returns it with the rewritten params.
func stripMarker(params json.RawMessage) (string, json.RawMessage, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return "", nil, false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(p["_meta"], &meta) != nil {
		return "", nil, false
	}
	var marker string
	if json.Unmarshal(meta[markerKey], &marker) != nil || marker == "" {
		return "", nil, false
	}
	delete(meta, markerKey)
	if len(meta) == 0 {
		delete(p, "_meta")
	} else {
		b, err := marshal(meta)
		if err != nil {
			return "", nil, false
		}
		p["_meta"] = b
	}
	out, err := marshal(p)
	if err != nil {
		return "", nil, false
	}
	return marker, out, true
}

// marshal encodes v compactly without escaping HTML, so that strings in
// the arguments reach the upstream as the client wrote them.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
