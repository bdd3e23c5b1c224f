package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errRestarting answers calls while no upstream connection is up.
var errRestarting = errors.New("proxy: the upstream server is restarting")

// errClosed answers calls after Close.
var errClosed = errors.New("proxy: closed")

// link is one live upstream process and the client session over its stdio.
type link struct {
	cs      *mcp.ClientSession
	capture *captureConn
	cmd     *exec.Cmd
	stdin   io.Closer
	exited  chan struct{} // closed when the process has exited
	ended   chan struct{} // closed when the session has ended
	up      time.Time     // when the session was initialized
	markers *atomic.Uint64
}

// call runs tools/call on the upstream and returns its result with the
// structured content as the upstream's raw JSON.
func (l *link) call(ctx context.Context, name string, args []byte) (*mcp.CallToolResult, error) {
	marker := strconv.FormatUint(l.markers.Add(1), 10)
	params := &mcp.CallToolParams{Name: name, Meta: mcp.Meta{markerKey: marker}}
	if len(args) > 0 {
		params.Arguments = rawArgs(args)
	}
	res, err := l.cs.CallTool(ctx, params)
	raw := l.capture.take(marker)
	if err != nil {
		return nil, err
	}
	if raw != nil && res.StructuredContent != nil {
		res.StructuredContent = raw
	}
	return res, nil
}

// rawArgs marshals as the bytes it holds.
type rawArgs []byte

func (r rawArgs) MarshalJSON() ([]byte, error) { return r, nil }

// alive reports whether the session is still up.
func (l *link) alive() bool {
	select {
	case <-l.ended:
		return false
	case <-l.exited:
		return false
	default:
		return true
	}
}

// stop ends the session and the process: it closes the process's standard
// input, gives it grace to exit, then kills it.
func (l *link) stop(grace time.Duration) {
	l.stdin.Close()
	select {
	case <-l.exited:
	case <-time.After(grace):
		kill(l.cmd)
		<-l.exited
	}
	l.cs.Close() // closes our ends of the pipes; the reader sees EOF
	<-l.ended
}

// supervisor starts the upstream, restarts it with backoff when it exits or
// its connection breaks, and publishes its tools.
type supervisor struct {
	cmd    Command
	o      *Options // resolved
	logger *slog.Logger
	client *mcp.Client
	// onTools receives the upstream's tools after every (re)connection and
	// tools/list_changed notification, one call at a time.
	onTools func([]*mcp.Tool)

	markers atomic.Uint64
	refresh chan struct{} // a tools/list_changed arrived

	mu       sync.Mutex
	cur      *link // nil while restarting
	restarts int   // total restarts, for logs and tests
	closed   bool

	cancel context.CancelFunc
	done   chan struct{}
}

func newSupervisor(cmd Command, o *Options, logger *slog.Logger, onTools func([]*mcp.Tool)) *supervisor {
	s := &supervisor{cmd: cmd, o: o, logger: logger, onTools: onTools, refresh: make(chan struct{}, 1), done: make(chan struct{})}
	s.client = mcp.NewClient(&mcp.Implementation{Name: "ctxfit-proxy", Version: Version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case s.refresh <- struct{}{}:
			default:
			}
		},
	})
	return s
}

// start connects to the upstream once, then supervises it in the
// background. It fails when the first connection fails.
func (s *supervisor) start(ctx context.Context) (*mcp.InitializeResult, error) {
	l, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.publish(ctx, l); err != nil {
		l.stop(s.o.TerminateGrace)
		return nil, err
	}
	s.mu.Lock()
	s.cur = l
	s.mu.Unlock()
	init := l.cs.InitializeResult()
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go s.run(runCtx, l)
	return init, nil
}

// current returns the live link, or errRestarting.
func (s *supervisor) current() (*link, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.cur == nil || !s.cur.alive() {
		return nil, errRestarting
	}
	return s.cur, nil
}

// restartCount returns how many times the upstream was restarted.
func (s *supervisor) restartCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

func (s *supervisor) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
}

// run watches l and replaces it when it goes down, until ctx is done.
func (s *supervisor) run(ctx context.Context, l *link) {
	defer close(s.done)
	attempt := 0
	for {
		if l != nil {
			if !s.watch(ctx, l) {
				l.stop(s.o.TerminateGrace)
				return
			}
			l.stop(s.o.TerminateGrace)
			s.mu.Lock()
			s.cur = nil
			s.mu.Unlock()
			if s.o.Now().Sub(l.up) >= s.o.HealthyAfter {
				attempt = 0 // it ran long enough: start the backoff over
			}
			state := "exited"
			if l.cmd.ProcessState != nil {
				state = l.cmd.ProcessState.String()
			}
			s.logger.Warn("proxy: the upstream server went down; restarting it", "process", state)
		}
		delay := backoff(attempt, s.o.BackoffMin, s.o.BackoffMax, s.o.Rand())
		attempt++
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		next, err := s.connect(ctx)
		if err == nil {
			if err = s.publish(ctx, next); err != nil {
				next.stop(s.o.TerminateGrace)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.logger.Error("proxy: restarting the upstream server failed", "err", err, "attempt", attempt, "retryIn", backoff(attempt, s.o.BackoffMin, s.o.BackoffMax, 0.5).String())
			l = nil
			continue
		}
		s.mu.Lock()
		s.cur = next
		s.restarts++
		s.mu.Unlock()
		s.logger.Info("proxy: the upstream server is up again", "attempt", attempt, "pid", next.cmd.Process.Pid)
		l = next
	}
}

// watch waits until l goes down (false when ctx ended first) and handles
// tools/list_changed meanwhile.
func (s *supervisor) watch(ctx context.Context, l *link) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-l.ended:
			return true
		case <-l.exited:
			return true
		case <-s.refresh:
			if err := s.publish(ctx, l); err != nil && l.alive() {
				s.logger.Warn("proxy: listing the upstream's tools failed", "err", err)
			}
		}
	}
}

// publish lists the tools of l and hands them to onTools.
func (s *supervisor) publish(ctx context.Context, l *link) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.StartTimeout)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range l.cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("proxy: listing the upstream's tools: %w", err)
		}
		tools = append(tools, t)
	}
	s.onTools(tools)
	return nil
}

// connect starts the upstream process and initializes a session with it.
func (s *supervisor) connect(ctx context.Context) (*link, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.StartTimeout)
	defer cancel()
	cmd := exec.Command(s.cmd.Path, s.cmd.Args...)
	cmd.Env = s.cmd.Env
	cmd.Dir = s.cmd.Dir
	cmd.Stderr = s.o.Stderr
	isolate(cmd)
	// Our own pipes, not cmd.StdoutPipe: Wait must not close the reading
	// end before the last response is read.
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
		return nil, fmt.Errorf("proxy: starting the upstream server %q: %w", s.cmd.Path, err)
	}
	inR.Close()
	outW.Close()
	l := &link{cmd: cmd, stdin: inW, exited: make(chan struct{}), ended: make(chan struct{}), markers: &s.markers}
	go func() {
		_ = cmd.Wait()
		close(l.exited)
	}()
	t := &captureTransport{inner: &mcp.IOTransport{Reader: outR, Writer: inW}}
	type connected struct {
		cs  *mcp.ClientSession
		err error
	}
	done := make(chan connected, 1)
	go func() {
		cs, err := s.client.Connect(ctx, t, nil)
		done <- connected{cs, err}
	}()
	var c connected
	select {
	case c = <-done:
	case <-l.exited:
		// The process died before it answered initialize; our pipes may
		// still be open, so unblock the handshake.
		outR.Close()
		inW.Close()
		c = <-done
		if c.err == nil {
			c.cs.Close()
		}
		return nil, fmt.Errorf("proxy: the upstream server exited during initialization (%s)", cmd.ProcessState)
	}
	if c.err != nil {
		kill(cmd)
		outR.Close()
		inW.Close()
		<-l.exited
		return nil, fmt.Errorf("proxy: initializing the upstream server: %w", c.err)
	}
	l.cs, l.capture, l.up = c.cs, t.conn, s.o.Now()
	go func() {
		_ = c.cs.Wait()
		close(l.ended)
	}()
	return l, nil
}
