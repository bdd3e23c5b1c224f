package proxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/buildinfo"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit"
)

// Version is the version the proxy reports as an MCP client to the
// upstream and as a server when the upstream gives none: the module
// version and VCS revision from the build information.
var Version = buildinfo.Read().Short()

// Defaults of [Options].
const (
	DefaultCallTimeout     = 60 * time.Second
	DefaultStartTimeout    = 30 * time.Second
	DefaultBreakerFailures = 5
	DefaultBreakerOpen     = 30 * time.Second
	DefaultBackoffMin      = 250 * time.Millisecond
	DefaultBackoffMax      = 30 * time.Second
	DefaultHealthyAfter    = 30 * time.Second
	DefaultTerminateGrace  = 2 * time.Second
)

// Command is how to start the upstream server: a program that speaks MCP
// over its standard input and output.
type Command struct {
	// Path is the program, looked up in PATH when it has no slash.
	Path string
	// Args are its arguments, without the program name.
	Args []string
	// Env is its environment; nil means the proxy's own.
	Env []string
	// Dir is its working directory; "" means the proxy's own.
	Dir string
}

// Options configure a [Proxy]. The zero value, like a nil *Options, means
// the defaults; New copies the options.
type Options struct {
	// CallTimeout bounds one tools/call to the upstream; past it the call
	// answers a tool error. Zero means 60 s.
	CallTimeout time.Duration
	// StartTimeout bounds starting and initializing the upstream and
	// listing its tools. Zero means 30 s.
	StartTimeout time.Duration
	// BreakerFailures is the number of consecutive upstream failures
	// (broken connections, timeouts) that opens the circuit breaker. Zero
	// means 5.
	BreakerFailures int
	// BreakerOpen is how long an open breaker answers calls with an error
	// before it lets one through to probe the upstream. Zero means 30 s.
	BreakerOpen time.Duration
	// BackoffMin and BackoffMax bound the delay before restarting an
	// upstream that went down: it doubles from BackoffMin with every failed
	// restart up to BackoffMax, jittered. Zero means 250 ms and 30 s.
	BackoffMin, BackoffMax time.Duration
	// HealthyAfter is how long an upstream must stay up for the backoff to
	// start over from BackoffMin. Zero means 30 s.
	HealthyAfter time.Duration
	// TerminateGrace is how long a stopping upstream gets to exit after its
	// standard input is closed, before it is killed. Zero means 2 s.
	TerminateGrace time.Duration
	// Rate limits the tool calls of each client (an MCP session: the one
	// stdio client, or each streamable HTTP session) to Rate per second;
	// calls over it answer a tool error. Zero means no limit.
	Rate rate.Limit
	// Burst is how many calls a client may make at once within Rate. Zero
	// means max(1, Rate rounded up).
	Burst int
	// Stderr receives the upstream's standard error. Nil means os.Stderr.
	Stderr io.Writer
	// Logger receives one record per tool call (Info; see [Proxy]) and the
	// upstream's restarts and breaker changes. Nil means slog.Default().
	Logger *slog.Logger
	// Install configures the continuation and drill-down tools; nil means
	// mcpfit's defaults.
	Install *mcpfit.Options
	// Now is the clock of the rate limiter and of the healthy period. Nil
	// means time.Now.
	Now func() time.Time
	// Rand returns the jitter of restart delays, in [0, 1). Nil means
	// math/rand/v2.Float64.
	Rand func() float64
}

func (o Options) resolved() Options {
	o.CallTimeout = cmp.Or(o.CallTimeout, DefaultCallTimeout)
	o.StartTimeout = cmp.Or(o.StartTimeout, DefaultStartTimeout)
	o.BreakerFailures = cmp.Or(o.BreakerFailures, DefaultBreakerFailures)
	o.BreakerOpen = cmp.Or(o.BreakerOpen, DefaultBreakerOpen)
	o.BackoffMin = cmp.Or(o.BackoffMin, DefaultBackoffMin)
	o.BackoffMax = cmp.Or(o.BackoffMax, max(DefaultBackoffMax, o.BackoffMin))
	o.HealthyAfter = cmp.Or(o.HealthyAfter, DefaultHealthyAfter)
	o.TerminateGrace = cmp.Or(o.TerminateGrace, DefaultTerminateGrace)
	if o.Burst == 0 && o.Rate > 0 {
		o.Burst = max(1, int(float64(o.Rate)+0.999999))
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	return o
}

// Proxy puts a [ctxfit.Guard] in front of an MCP server that runs as a
// subprocess over stdio, whatever its language. It starts the upstream,
// mirrors its tools on an [mcp.Server] guarded by [mcpfit.Install] (so
// results are shaped and ctxfit_next and ctxfit_details lead to the rest),
// and forwards every call.
//
// Faults of the upstream become tool errors a model can act on:
//
//   - an upstream that exits, or whose standard output stops being
//     JSON-RPC, is stopped and restarted with exponential, capped, jittered
//     backoff; calls meanwhile answer "the upstream server is restarting";
//   - a call the upstream does not answer within [Options.CallTimeout]
//     answers a timeout error;
//   - after [Options.BreakerFailures] consecutive failures (broken
//     connections, timeouts) a circuit breaker answers every call with an
//     error for [Options.BreakerOpen], then lets one call through to probe;
//   - a client over [Options.Rate] gets a rate-limit error.
//
// Every tools/call is logged as one Info record "tool call" with
// request_id, session, tool, duration_ms, status (success, tool_error, error,
// timeout, upstream_failure, restarting, circuit_open, rate_limited,
// canceled), tokens_before and tokens_after.
//
// A Proxy is safe for concurrent use; serve its [Proxy.Server] on any
// number of transports. The zero Proxy is not usable: create one with
// [New] and release it with [Proxy.Close].
type Proxy struct {
	o       Options
	guard   *ctxfit.Guard
	server  *mcp.Server
	sup     *supervisor
	breaker *gobreaker.CircuitBreaker[*mcp.CallToolResult]
	logger  *slog.Logger
	counter func() budget.Counter

	tmu      sync.Mutex
	tools    map[string][]byte // mirrored tool name -> its JSON, to skip identical re-adds
	reserved map[string]bool   // names of the proxy's own tools

	bmu      sync.Mutex
	openedAt time.Time // when the breaker last opened

	lmu      sync.Mutex
	limiters map[string]*clientLimiter
	reqSeq   uint64
}

// New starts the upstream described by cmd, waits until it has initialized
// and listed its tools (bounded by ctx and [Options.StartTimeout]), and
// returns a Proxy whose server mirrors those tools behind g. It fails when
// the first start fails; later failures are restarts. g must outlive the
// Proxy.
func New(ctx context.Context, cmd Command, g *ctxfit.Guard, opts *Options) (*Proxy, error) {
	if g == nil {
		return nil, errors.New("proxy: New needs a guard")
	}
	if cmd.Path == "" {
		return nil, errors.New("proxy: New needs the upstream's command")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.resolved()
	cmd.Args = append([]string(nil), cmd.Args...)
	cmd.Env = append([]string(nil), cmd.Env...)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	p := &Proxy{
		o: o, guard: g, logger: o.Logger,
		tools: map[string][]byte{}, limiters: map[string]*clientLimiter{},
	}
	p.counter = sync.OnceValue(func() budget.Counter {
		c, _ := budget.Exact(g.Config().Encoding)
		return c
	})
	p.breaker = gobreaker.NewCircuitBreaker[*mcp.CallToolResult](gobreaker.Settings{
		Name:        "upstream",
		MaxRequests: 1,
		Timeout:     o.BreakerOpen,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= uint32(o.BreakerFailures) },
		IsSuccessful: func(err error) bool {
			var wire *jsonrpcError
			return err == nil || errors.As(err, &wire) // the upstream answered
		},
		IsExcluded: func(err error) bool {
			return errors.Is(err, errRestarting) || errors.Is(err, errClosed) || errors.Is(err, context.Canceled)
		},
		OnStateChange: func(_ string, from, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				p.bmu.Lock()
				p.openedAt = time.Now()
				p.bmu.Unlock()
			}
			p.logger.Warn("proxy: circuit breaker "+to.String(), "from", from.String(), "to", to.String())
		},
	})
	names := mcpcore.Names{Next: mcpcore.DefaultNextTool, Details: mcpcore.DefaultDetailsTool}
	if o.Install != nil {
		names.Next = cmp.Or(o.Install.NextTool, names.Next)
		names.Details = cmp.Or(o.Install.DetailsTool, names.Details)
	}
	p.reserved = map[string]bool{names.Next: true, names.Details: true}

	// The server is built once the upstream has said who it is; tools
	// listed before that wait in pending.
	var pending []*mcp.Tool
	var ready bool
	var rmu sync.Mutex
	onTools := func(tools []*mcp.Tool) {
		rmu.Lock()
		defer rmu.Unlock()
		if !ready {
			pending = tools
			return
		}
		p.mirror(tools)
	}
	p.sup = newSupervisor(cmd, &p.o, p.logger, onTools)
	init, err := p.sup.start(ctx)
	if err != nil {
		return nil, err
	}
	info := &mcp.Implementation{Name: "ctxfit-proxy", Version: Version}
	var instructions string
	if init != nil && init.ServerInfo != nil {
		info = &mcp.Implementation{Name: init.ServerInfo.Name, Title: init.ServerInfo.Title, Version: init.ServerInfo.Version}
	}
	if init != nil {
		instructions = init.Instructions
	}
	p.server = mcp.NewServer(info, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       p.logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	if err := mcpfit.Install(p.server, g, o.Install); err != nil {
		p.sup.close()
		return nil, err
	}
	p.server.AddReceivingMiddleware(p.middleware) // outermost: once per client call
	rmu.Lock()
	ready = true
	p.mirror(pending)
	rmu.Unlock()
	return p, nil
}

// Server returns the MCP server to serve, for example with
// server.Run(ctx, &mcp.StdioTransport{}) or behind
// mcp.NewStreamableHTTPHandler.
func (p *Proxy) Server() *mcp.Server { return p.server }

// Restarts returns how many times the upstream has been restarted.
func (p *Proxy) Restarts() int { return p.sup.restartCount() }

// Close stops the upstream (closing its standard input, then killing it
// after [Options.TerminateGrace]). Calls after Close answer an error. It
// does not close the Guard.
func (p *Proxy) Close() error {
	p.sup.close()
	return nil
}

// mirror makes the server's upstream tools those of tools.
func (p *Proxy) mirror(tools []*mcp.Tool) {
	p.tmu.Lock()
	defer p.tmu.Unlock()
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil {
			continue
		}
		if p.reserved[t.Name] {
			p.logger.Warn("proxy: the upstream's tool has the name of a ctxfit tool; it is not mirrored", "tool", t.Name)
			continue
		}
		seen[t.Name] = true
		b, _ := json.Marshal(t)
		if old, ok := p.tools[t.Name]; ok && bytes.Equal(old, b) {
			continue
		}
		if err := p.addTool(t); err != nil {
			p.logger.Warn("proxy: the upstream's tool cannot be mirrored", "tool", t.Name, "err", err)
			delete(seen, t.Name)
			continue
		}
		p.tools[t.Name] = b
	}
	var gone []string
	for name := range p.tools {
		if !seen[name] {
			gone = append(gone, name)
			delete(p.tools, name)
		}
	}
	if len(gone) > 0 {
		p.server.RemoveTools(gone...)
	}
}

// addTool registers t on the server; the SDK panics on tools it finds
// invalid (an input schema that is not an object), which becomes an error.
func (p *Proxy) addTool(t *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	clone := *t
	if clone.InputSchema == nil {
		clone.InputSchema = map[string]any{"type": "object"}
	}
	p.server.AddTool(&clone, p.forward)
	return nil
}
