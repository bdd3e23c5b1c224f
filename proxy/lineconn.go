package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ctxfit/ctxfit/internal/redact"
)

// lineConn is an mcp.Connection over newline-delimited JSON (stdio) that
// survives bad input: a line that is not JSON-RPC, or one longer than
// [MaxMessageSize], is reported to onBad (with the request ID when one
// can be read from its start) and skipped; the next line is read as
// usual. It is safe for concurrent use.
type lineConn struct {
	r     *bufio.Reader
	w     io.Writer
	close func() error
	onBad func(id jsonrpc.ID, err error)

	wmu       sync.Mutex
	incoming  chan jsonrpc.Message
	readErr   error
	done      chan struct{}
	closeOnce sync.Once
}

func newLineConn(r io.Reader, w io.Writer, closeFn func() error, onBad func(jsonrpc.ID, error)) *lineConn {
	c := &lineConn{r: bufio.NewReaderSize(r, 64<<10), w: w, close: closeFn, onBad: onBad,
		incoming: make(chan jsonrpc.Message), done: make(chan struct{})}
	return c
}

// errTooLarge is what a message over MaxMessageSize is.
var errTooLarge = fmt.Errorf("proxy: a message of more than %d MiB was dropped", MaxMessageSize>>20)

var idPrefix = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)`)

// idOf reads the request ID from the start of a message that could not be
// decoded whole; the zero ID when there is none.
func idOf(head []byte) jsonrpc.ID {
	m := idPrefix.FindSubmatch(head)
	if m == nil {
		return jsonrpc.ID{}
	}
	var v any
	if m[1][0] == '"' {
		v = string(bytes.Trim(m[1], `"`))
	} else {
		var n float64
		_, _ = fmt.Sscan(string(m[1]), &n)
		v = n
	}
	id, _ := jsonrpc.MakeID(v)
	return id
}

func (c *lineConn) readLoop() {
	defer close(c.incoming)
	for {
		line, tooLong, err := c.readLine()
		if tooLong {
			c.onBad(idOf(line), errTooLarge)
			continue
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			msg, derr := jsonrpc.DecodeMessage(line)
			if derr != nil {
				c.onBad(idOf(line), fmt.Errorf("proxy: a message that is not JSON-RPC: %s", redact.Bound(derr.Error(), maxEcho)))
			} else {
				select {
				case c.incoming <- msg:
				case <-c.done:
					return
				}
			}
		}
		if err != nil {
			c.readErr = err
			return
		}
	}
}

// readLine reads one line of at most MaxMessageSize bytes; past that it
// skips to the end of the line and reports tooLong with the first bytes.
func (c *lineConn) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := c.r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxMessageSize {
			head := append([]byte(nil), line[:min(len(line), 4096)]...)
			if len(head) < 4096 {
				head = append(head, chunk[:min(len(chunk), 4096-len(head))]...)
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = c.r.ReadSlice('\n')
			}
			return head, true, err
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, false, err
		}
	}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	case msg, ok := <-c.incoming:
		if !ok {
			if c.readErr != nil && !errors.Is(c.readErr, io.EOF) {
				return nil, c.readErr
			}
			return nil, io.EOF
		}
		return msg, nil
	}
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.done:
		return io.ErrClosedPipe
	default:
	}
	_, err = c.w.Write(append(data, '\n'))
	return err
}

func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.done)
		if c.close != nil {
			err = c.close()
		}
	})
	return err
}

func (c *lineConn) SessionID() string { return "" }

// ServeStdio serves one client over r and w (standard input and output):
// see [Proxy.Serve]. A line from the client that is not JSON-RPC is
// answered with a JSON-RPC parse error (-32700) and the session goes on;
// one longer than [MaxMessageSize] with an invalid-request error.
func (p *Proxy) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	var conn *lineConn
	conn = newLineConn(r, w, nil, func(id jsonrpc.ID, err error) {
		code := int64(jsonrpc.CodeParseError)
		if errors.Is(err, errTooLarge) {
			code = jsonrpc.CodeInvalidRequest
		}
		p.logger.Warn("proxy: a bad message from the client", "err", err)
		_ = conn.Write(ctx, &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: err.Error()}})
	})
	go conn.readLoop()
	err := p.Serve(ctx, conn)
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}
