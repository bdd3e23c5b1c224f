package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// httpConn is the client end of a streamable HTTP connection that relays
// messages as they are: each message is POSTed, and what comes back (a
// JSON body or an event stream) is read as messages; after
// notifications/initialized a GET opens the stream of server-initiated
// messages. The SDK's own client connection sets the protocol version and
// opens that stream only for an SDK client session, hence this one.
type httpConn struct {
	endpoint string
	client   *http.Client
	ctx      context.Context
	cancel   context.CancelFunc
	incoming chan jsonrpc.Message

	mu        sync.Mutex
	sessionID string
	version   string
	initID    jsonrpc.ID
	getOnce   sync.Once
	closeOnce sync.Once
	failed    error
}

func newHTTPConn(endpoint string, client *http.Client) *httpConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &httpConn{endpoint: endpoint, client: client, ctx: ctx, cancel: cancel, incoming: make(chan jsonrpc.Message, 16)}
}

func (c *httpConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

func (c *httpConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		c.mu.Lock()
		err := c.failed
		c.mu.Unlock()
		if err == nil {
			err = io.EOF
		}
		return nil, err
	case msg := <-c.incoming:
		return msg, nil
	}
}

func (c *httpConn) fail(err error) {
	c.mu.Lock()
	if c.failed == nil {
		c.failed = err
	}
	c.mu.Unlock()
	c.cancel()
}

func (c *httpConn) deliver(msg jsonrpc.Message) {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		isInit := c.initID.IsValid() && resp.ID == c.initID
		c.mu.Unlock()
		if isInit && resp.Result != nil {
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(resp.Result, &r)
			c.mu.Lock()
			c.version = r.ProtocolVersion
			c.mu.Unlock()
		}
	}
	select {
	case c.incoming <- msg:
	case <-c.ctx.Done():
	}
}

func (c *httpConn) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.mu.Lock()
	if c.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", c.sessionID)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	c.mu.Unlock()
	return req, nil
}

func (c *httpConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	req, isReq := msg.(*jsonrpc.Request)
	if isReq && req.Method == "initialize" {
		c.mu.Lock()
		c.initID = req.ID
		c.mu.Unlock()
	}
	hreq, err := c.newRequest(c.ctx, http.MethodPost, data)
	if err != nil {
		return err
	}
	if isReq && req.IsCall() && req.Method != "initialize" {
		// The answer may take as long as the call: never hold up the
		// messages behind it.
		go func() { _ = c.post(hreq, req, isReq) }()
		return nil
	}
	return c.post(hreq, req, isReq)
}

// post sends one message and delivers what comes back.
func (c *httpConn) post(hreq *http.Request, req *jsonrpc.Request, isReq bool) error {
	resp, err := c.client.Do(hreq)
	if err != nil {
		c.fail(fmt.Errorf("proxy: the upstream %s: %w", c.endpoint, err))
		return err
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.mu.Lock()
		c.sessionID = id
		c.mu.Unlock()
	}
	if isReq && req.Method == "notifications/initialized" {
		c.getOnce.Do(func() { go c.listen() })
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && c.SessionID() != "":
		resp.Body.Close()
		err := errors.New("proxy: the upstream ended the session (404)")
		c.fail(err)
		return err
	case resp.StatusCode >= 300:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if isReq && req.IsCall() {
			// The request gets an answer that says what the upstream said.
			c.deliver(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: fmt.Sprintf("the upstream answered HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))}})
		}
		return nil
	case resp.StatusCode == http.StatusAccepted:
		resp.Body.Close()
		return nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/event-stream" {
		go c.readEvents(resp.Body)
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessageSize+1))
	if err != nil {
		return nil
	}
	if len(body) > MaxMessageSize {
		if isReq && req.IsCall() {
			c.deliver(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: errTooLarge.Error()}})
		}
		return nil
	}
	c.decode(bytes.TrimSpace(body))
	return nil
}

// decode delivers the message, or batch of messages, of a JSON body.
func (c *httpConn) decode(body []byte) {
	if len(body) == 0 {
		return
	}
	if body[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) == nil {
			for _, m := range batch {
				c.decode(m)
			}
		}
		return
	}
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		c.deliver(msg)
	}
}

// readEvents delivers the messages of an event stream until it ends.
func (c *httpConn) readEvents(body io.ReadCloser) {
	defer body.Close()
	go func() {
		<-c.ctx.Done()
		body.Close()
	}()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), MaxMessageSize)
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			c.decode(bytes.TrimSpace(data.Bytes()))
			data.Reset()
		case bytes.HasPrefix(line, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
		}
	}
	c.decode(bytes.TrimSpace(data.Bytes()))
}

// listen keeps the GET stream of server-initiated messages open, reopening
// it when it ends, until the connection closes. An upstream that does not
// offer one (405) is not asked again.
func (c *httpConn) listen() {
	for c.ctx.Err() == nil {
		req, err := c.newRequest(c.ctx, http.MethodGet, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := c.client.Do(req)
		if err != nil {
			if c.ctx.Err() == nil {
				select {
				case <-time.After(time.Second):
				case <-c.ctx.Done():
				}
			}
			continue
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return
		}
		c.readEvents(resp.Body)
	}
}

func (c *httpConn) Close() error {
	c.closeOnce.Do(func() {
		if id := c.SessionID(); id != "" {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if req, err := c.newRequest(ctx, http.MethodDelete, nil); err == nil {
				if resp, err := c.client.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			cancel()
		}
		c.cancel()
	})
	return nil
}
