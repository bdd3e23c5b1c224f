package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upConn is one connection to the upstream: for a stdio upstream, its
// process as well.
type upConn struct {
	mcp.Connection
	cmd    *exec.Cmd     // nil unless stdio
	exited chan struct{} // closed when the process has exited (stdio)
	grace  time.Duration
	once   sync.Once
}

// stop closes the connection and, for a stdio upstream, ends the process:
// its standard input closes, it gets grace to exit, then it is killed
// (with its process group), and it is reaped.
func (u *upConn) stop() {
	u.once.Do(func() {
		_ = u.Connection.Close()
		if u.cmd == nil {
			return
		}
		select {
		case <-u.exited:
		case <-time.After(u.grace):
			kill(u.cmd)
			<-u.exited
		}
	})
}

// dial opens a connection to the upstream. onBad hears of messages a
// stdio upstream wrote that could not be read.
func (p *Proxy) dial(ctx context.Context, onBad func(jsonrpc.ID, error)) (*upConn, error) {
	switch {
	case p.up.Dial != nil:
		c, err := p.up.Dial(ctx)
		if err != nil {
			return nil, err
		}
		return &upConn{Connection: c}, nil
	case p.up.Command != nil:
		return p.start(onBad)
	case p.up.SSE:
		// The event stream lives as long as the context Connect gets: not
		// the dial's, which ends with the handshake, but the connection's.
		t := &mcp.SSEClientTransport{Endpoint: p.up.URL, HTTPClient: p.httpClient(), MaxEventSize: MaxMessageSize}
		life, end := context.WithCancel(context.WithoutCancel(ctx))
		stop := context.AfterFunc(ctx, end) // a dial that times out or is canceled
		c, err := t.Connect(life)
		stop()
		if err != nil {
			end()
			return nil, fmt.Errorf("proxy: connecting to the upstream %s: %w", p.up.URL, err)
		}
		return &upConn{Connection: closeAlso{c, end}}, nil
	default:
		return &upConn{Connection: newHTTPConn(p.up.URL, p.httpClient())}, nil
	}
}

// closeAlso is a connection whose Close also ends its context.
type closeAlso struct {
	mcp.Connection
	end context.CancelFunc
}

func (c closeAlso) Close() error {
	err := c.Connection.Close()
	c.end()
	return err
}

// httpClient is the upstream's HTTP client with the configured headers.
func (p *Proxy) httpClient() *http.Client {
	base := p.up.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	if len(p.up.Header) == 0 {
		return base
	}
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = headerTransport{rt, p.up.Header}
	return &c
}

type headerTransport struct {
	next   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.header {
		r.Header[k] = append([]string(nil), v...)
	}
	return t.next.RoundTrip(r)
}

// start starts a stdio upstream process.
func (p *Proxy) start(onBad func(jsonrpc.ID, error)) (*upConn, error) {
	c := p.up.Command
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	cmd.Stderr = p.o.Stderr
	isolate(cmd)
	// Our own pipes, not cmd.StdoutPipe: Wait must not close the reading
	// end before the last message is read.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("proxy: starting the upstream server %q: %w", c.Path, err)
	}
	inR.Close()
	outW.Close()
	u := &upConn{cmd: cmd, exited: make(chan struct{}), grace: p.o.TerminateGrace}
	go func() {
		_ = cmd.Wait()
		outR.Close()
		close(u.exited)
	}()
	lc := newLineConn(outR, inW, func() error { return errors.Join(inW.Close()) }, onBad)
	go lc.readLoop()
	u.Connection = lc
	return u, nil
}
