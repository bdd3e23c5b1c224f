package proxy

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/buildinfo"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/ui"
)

// Version is the version the proxy reports: the module version and VCS
// revision from the build information.
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
	DefaultPingInterval    = 30 * time.Second
	DefaultMaxSessions     = 64
	DefaultIdleTimeout     = 30 * time.Minute
	// MaxMessageSize is the largest JSON-RPC message the proxy reads from
	// a stdio client or upstream: 16 MiB. A larger one is dropped with an
	// error, never buffered whole.
	MaxMessageSize = 16 << 20
)

// Command is how to start a stdio upstream: a program that speaks MCP over
// its standard input and output.
type Command struct {
	// Path is the program, looked up in PATH when it has no slash.
	Path string
	// Args are its arguments, without the program name.
	Args []string
	// Env is its environment; nil means the proxy's own without the
	// CTXFIT_* variables (see [PassEnv]).
	Env []string
	// Dir is its working directory; "" means the proxy's own.
	Dir string
}

// Upstream says which MCP server the proxy stands in front of: exactly one
// of Command (stdio: a process per session), URL (streamable HTTP, or the
// legacy HTTP+SSE transport with SSE set) or Dial.
type Upstream struct {
	Command *Command
	// URL is the endpoint of an HTTP upstream.
	URL string
	// SSE selects the legacy HTTP+SSE transport for URL (URL is then the
	// SSE endpoint); false means streamable HTTP.
	SSE bool
	// Header is sent with every HTTP request to the upstream (for example
	// Authorization). Nil means none.
	Header http.Header
	// HTTPClient makes the HTTP requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Dial opens a connection to the upstream; for tests and embedding
	// (an in-memory server, say).
	Dial func(ctx context.Context) (mcp.Connection, error)
}

// PassEnv returns env without the CTXFIT_* variables (the proxy's secret
// and store URL are no business of the upstream's), except those named in
// allow.
func PassEnv(env []string, allow ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CTXFIT_") && !contains(allow, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Options configure a [Proxy]. The zero value, like a nil *Options, means
// the defaults; New copies the options.
type Options struct {
	// CallTimeout bounds one tools/call to the upstream; past it the call
	// answers a tool error and the upstream is told to cancel. Zero means
	// 60 s.
	CallTimeout time.Duration
	// StartTimeout bounds connecting to and initializing an upstream. Zero
	// means 30 s.
	StartTimeout time.Duration
	// BreakerFailures is the number of consecutive failed tool calls
	// (broken connections, timeouts) of a session that opens its circuit
	// breaker. Zero means 5.
	BreakerFailures int
	// BreakerOpen is how long an open breaker answers calls with an error.
	// Zero means 30 s.
	BreakerOpen time.Duration
	// BackoffMin and BackoffMax bound the delay before reconnecting an
	// upstream that went down: it doubles from BackoffMin with every
	// failed attempt up to BackoffMax, jittered. Zero means 250 ms and
	// 30 s.
	BackoffMin, BackoffMax time.Duration
	// HealthyAfter is how long an upstream must stay up for the backoff to
	// start over from BackoffMin. Zero means 30 s.
	HealthyAfter time.Duration
	// TerminateGrace is how long a stopping stdio upstream gets to exit
	// after its standard input is closed, before it is killed. Zero means
	// 2 s.
	TerminateGrace time.Duration
	// PingInterval is how often each upstream session is pinged; a ping
	// that fails marks it degraded. Zero means 30 s; negative means never.
	PingInterval time.Duration
	// MaxSessions bounds the downstream sessions served at once (each has
	// its own upstream session: for a stdio upstream, its own process).
	// Zero means 64.
	MaxSessions int
	// IdleTimeout ends a streamable HTTP session (and its upstream) that
	// sent nothing for this long. Zero means 30 min; negative means never.
	IdleTimeout time.Duration
	// Rate limits the tool calls of each session to Rate per second;
	// calls over it answer a tool error. Zero means no limit.
	Rate rate.Limit
	// Burst is how many calls a session may make at once within Rate. Zero
	// means max(1, Rate rounded up).
	Burst int
	// SharedUpstream makes every session share one upstream session (one
	// process for a stdio upstream), for stateless servers: the first
	// client's initialize initializes it and later clients get its answer;
	// responses go to the session that asked, progress to the session whose
	// request carries the token, the upstream's requests (sampling,
	// elicitation, roots) to the session with the latest request in
	// flight, and other notifications to every session. When the upstream
	// goes away, its sessions end. Each session's messages wait in its
	// own queue, so a client that does not read slows only itself; one
	// that falls 1024 messages behind is disconnected. False means a
	// session per upstream session.
	SharedUpstream bool
	// LogArguments adds each tool call's arguments to its log record,
	// with the values of secret members (at any depth: a name that
	// contains token, secret, key, pass, pwd, auth, credential, cookie,
	// session or signature in any case, or one in Redact) replaced by
	// "[redacted]", the secrets inside URLs and connection strings too,
	// cursors as a short digest and every string cut to 256 bytes. False
	// means arguments are not logged.
	LogArguments bool
	// Redact are argument names, beyond those that look secret, whose
	// values are never logged (compared case-insensitively). Nil means
	// none.
	Redact []string
	// Stderr receives a stdio upstream's standard error. Nil means
	// os.Stderr.
	Stderr io.Writer
	// Logger receives one record per tool call (Info) and the upstreams'
	// state changes, with the secrets inside their strings and errors
	// (URLs' passwords and secret parameters, connection strings' passwords,
	// bearer tokens) redacted and each string cut to 4 KiB. Nil means
	// slog.Default().
	Logger *slog.Logger
	// CredentialCookies are the names of the cookies that, beside the
	// Authorization header and the TLS client certificate, make up the
	// credential a [Proxy.Handler] session belongs to. Nil means none.
	CredentialCookies []string
	// Names are the names of ctxfit's tools; zero fields mean the defaults.
	Names mcpcore.Names
	// Now is the clock of the rate limiter and of the health report. Nil
	// means time.Now.
	Now func() time.Time
	// Rand returns the jitter of reconnect delays, in [0, 1). Nil means
	// math/rand/v2.Float64.
	Rand func() float64
}

// DefaultRedact are argument names whose values are never logged. Every
// name that contains token, secret, key, pass, pwd, auth, credential,
// cookie, session or signature is redacted too (see [Options.LogArguments]).
var DefaultRedact = []string{"password", "token", "secret", "apiKey", "api_key", "authorization"}

func (o Options) resolved() Options {
	o.CallTimeout = cmp.Or(o.CallTimeout, DefaultCallTimeout)
	o.StartTimeout = cmp.Or(o.StartTimeout, DefaultStartTimeout)
	o.BreakerFailures = cmp.Or(o.BreakerFailures, DefaultBreakerFailures)
	o.BreakerOpen = cmp.Or(o.BreakerOpen, DefaultBreakerOpen)
	o.BackoffMin = cmp.Or(o.BackoffMin, DefaultBackoffMin)
	o.BackoffMax = cmp.Or(o.BackoffMax, max(DefaultBackoffMax, o.BackoffMin))
	o.HealthyAfter = cmp.Or(o.HealthyAfter, DefaultHealthyAfter)
	o.TerminateGrace = cmp.Or(o.TerminateGrace, DefaultTerminateGrace)
	o.PingInterval = cmp.Or(o.PingInterval, DefaultPingInterval)
	o.MaxSessions = cmp.Or(o.MaxSessions, DefaultMaxSessions)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, DefaultIdleTimeout)
	if o.Burst == 0 && o.Rate > 0 {
		o.Burst = max(1, int(float64(o.Rate)+0.999999))
	}
	o.Redact = append(append([]string(nil), DefaultRedact...), o.Redact...)
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
	o.Names = o.Names.WithDefaults()
	return o
}

// Proxy relays MCP between clients and an upstream server, message by
// message, and puts a [ctxfit.Guard] on what it returns (see the package
// documentation). Each downstream session ([Proxy.Serve]) gets its own
// upstream session.
//
// A Proxy is safe for concurrent use. The zero Proxy is not usable:
// create one with [New] and release it with [Proxy.Close].
type Proxy struct {
	o       Options
	up      Upstream
	guard   *ctxfit.Guard
	core    *mcpcore.Client[*session]
	logger  *slog.Logger
	counter func() budget.Counter

	seq    atomic.Int64 // upstream request IDs, unique across sessions
	shared *sharedUpstream
	usage  mcpcore.ToolUsage // calls of each tool, for the catalog

	catMu  sync.Mutex
	catKey string           // what the last catalog was built of
	cat    *mcpcore.Catalog // the last catalog built

	uiOnce   sync.Once
	ui       atomic.Pointer[ui.UI] // the page of Proxy.UI; nil until asked for
	showArgs bool                  // set once, before ui

	mu       sync.Mutex
	sessions map[*session]bool
	closed   bool
	wg       sync.WaitGroup
}

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("proxy: closed")

// ErrTooManySessions is returned by Serve when [Options.MaxSessions]
// sessions are being served.
var ErrTooManySessions = errors.New("proxy: too many sessions")

// New returns a Proxy in front of up, guarded by g. It starts nothing:
// each session connects to the upstream when its client initializes. g
// must outlive the Proxy.
func New(g *ctxfit.Guard, up Upstream, opts *Options) (*Proxy, error) {
	if g == nil {
		return nil, errors.New("proxy: New needs a guard")
	}
	n := 0
	if up.Command != nil {
		n++
		if up.Command.Path == "" {
			return nil, errors.New("proxy: the upstream's command has no path")
		}
		c := *up.Command
		c.Args = append([]string(nil), c.Args...)
		if c.Env == nil {
			c.Env = PassEnv(os.Environ())
		}
		up.Command = &c
	}
	if up.URL != "" {
		n++
	}
	if up.Dial != nil {
		n++
	}
	if n != 1 {
		return nil, errors.New("proxy: New needs exactly one upstream: a command, a URL or a Dial function")
	}
	up.Header = up.Header.Clone()
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.resolved()
	logger := slog.New(redactHandler{Handler: o.Logger.Handler(), extra: o.Redact})
	p := &Proxy{o: o, up: up, guard: g, logger: logger, sessions: map[*session]bool{}}
	p.shared = &sharedUpstream{p: p, writeDeadline: sharedWriteDeadline}
	core, err := mcpcore.NewClient[*session]("proxy", g, o.Names.Next, o.Names.Details, func(ctx context.Context) string {
		s, _ := ctx.Value(sessionKey{}).(*session)
		if s == nil {
			return ""
		}
		return s.bound
	})
	if err != nil {
		return nil, err
	}
	core.Names = o.Names
	core.Shaper.Names = o.Names
	if err := o.Names.Distinct(); err != nil {
		return nil, err
	}
	p.core = core
	p.counter = sync.OnceValue(func() budget.Counter {
		c, _ := budget.Exact(g.Config().Encoding)
		return c
	})
	return p, nil
}

type sessionKey struct{}

// Close ends every session and stops their upstreams (stdio upstreams are
// reaped); it waits for them. Serve fails after Close.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	all := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		all = append(all, s)
	}
	p.mu.Unlock()
	for _, s := range all {
		s.end()
	}
	p.wg.Wait()
	p.shared.stop()
	return nil
}

// Serve relays one downstream session, down (a connection from an MCP
// client: stdio, or one streamable HTTP session), until the client goes
// away, ctx ends or the Proxy closes. Its upstream session starts when the
// client sends initialize and ends with it. Serve closes down.
func (p *Proxy) Serve(ctx context.Context, down mcp.Connection) error {
	s, err := p.newSession(down, "")
	if err != nil {
		down.Close()
		return err
	}
	defer p.wg.Done()
	return s.run(ctx)
}

// newSession registers a session of down for owner, the principal of the
// client ("" for a connection that has none: stdio, or Serve's caller's).
func (p *Proxy) newSession(down mcp.Connection, owner string) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if len(p.sessions) >= p.o.MaxSessions {
		return nil, ErrTooManySessions
	}
	s := newSession(p, down, owner)
	p.sessions[s] = true
	p.wg.Add(1)
	return s, nil
}

func (p *Proxy) forget(s *session) {
	p.mu.Lock()
	delete(p.sessions, s)
	p.mu.Unlock()
}

// Sessions returns how many downstream sessions are being served.
func (p *Proxy) Sessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions)
}

// marshal encodes v compactly without escaping HTML.
func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
