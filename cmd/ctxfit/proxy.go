package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/proxy"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/store/redisstore"
	"github.com/ctxfit/ctxfit/telemetry"
)

const proxyUsage = `Usage: ctxfit proxy [FLAGS] -- COMMAND [ARGS...]
       ctxfit proxy [FLAGS] --upstream-url URL [--header NAME:VALUE ...]

Puts ctxfit in front of an MCP server: the one COMMAND runs over stdio
(a process per client session, without the CTXFIT_* variables), or the one
at URL (streamable HTTP, or the legacy HTTP+SSE transport with --sse).
Every request, response and notification is relayed both ways unchanged,
except that tools/list gains ctxfit_next, ctxfit_details, ctxfit_search and
ctxfit_query (and, when the whole list is over --catalog-budget, is a
budgeted catalog with ctxfit_find_tools and ctxfit_call_tool), and
tools/call, resources/read and prompts/get results are kept within the
token budget. Serves stdio (standard input and output are
the protocol; logs go to standard error as JSON lines) or, with --listen,
streamable HTTP at http://ADDR/mcp (a session per client, each with its own
upstream session) with a health report at http://ADDR/healthz.

` + listenCredentialsHelp + uiHelp + `
Settings come from the defaults, then the file of --config (or
CTXFIT_CONFIG), then the CTXFIT_* variables, then the flags below; the
file is watched and reloaded when it changes.

Flags:
`

// listenCredentialsHelp is the paragraph of the proxy's and the gateway's
// help on who may use a --listen session.
const listenCredentialsHelp = `In --listen mode a session belongs to the credential of the request that
made it (its Authorization header, the --credential-cookies and its TLS
client certificate, or none): a request with another credential is
answered 404, as for a session that does not exist. --auth-tokens-env NAME
refuses (401) every MCP request without Authorization: Bearer and one of
the comma-separated tokens of $NAME; without it, put an authenticating
server in front. /healthz shows counts and states, never a session ID or a
credential.
`

// proxyFlags are the command line of `ctxfit proxy`.
type proxyFlags struct {
	fs         *flag.FlagSet
	configPath string
	listen     string
	threshold  int
	hardCap    int
	mode       string
	encoding   string
	catalog    catalogFlags
	opts       proxy.Options
	rateSpec   string
	logLevel   string
	command    []string
	upstream   string
	sse        bool
	headers    headerFlags
	passEnv    string
	auth       listenAuth
	ui         uiFlags
	sink       telemetry.Sink // the guard's telemetry (ctxfit gateway --listen); nil means none
}

// repeated returns the values of a repeatable flag as they were given.
func (f *proxyFlags) repeated(name string) []string {
	if name == "header" {
		return f.headers
	}
	return f.opts.Redact
}

// headerFlags are the repeatable --header NAME:VALUE flags.
type headerFlags []string

func (h *headerFlags) String() string { return strings.Join(*h, ", ") }

func (h *headerFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("want NAME:VALUE, got %q", v)
	}
	*h = append(*h, strings.TrimSpace(name)+":"+strings.TrimSpace(value))
	return nil
}

func (h headerFlags) header() http.Header {
	out := http.Header{}
	for _, kv := range h {
		name, value, _ := strings.Cut(kv, ":")
		out.Add(name, value)
	}
	return out
}

func parseProxyFlags(args []string, out io.Writer) (*proxyFlags, error) {
	fs := newFlagSet("proxy", out)
	f := registerProxyFlags(fs)
	f.ui.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), proxyUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, usageErrorOf(err)
	}
	f.command = fs.Args()
	if err := f.check("ctxfit proxy [FLAGS] -- COMMAND [ARGS...]"); err != nil {
		return nil, err
	}
	if err := f.ui.check(fs, f.listen); err != nil {
		return nil, err
	}
	return f, nil
}

// registerProxyFlags defines the flags of `ctxfit proxy` on fs (which
// `ctxfit mcp-config` shares) and returns where they are stored.
func registerProxyFlags(fs *flag.FlagSet) *proxyFlags {
	f := &proxyFlags{fs: fs}
	fs.StringVar(&f.configPath, "config", "", "settings file (JSON or YAML), watched for changes; default $CTXFIT_CONFIG")
	fs.StringVar(&f.listen, "listen", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio")
	fs.IntVar(&f.threshold, "threshold", 0, "token count above which a result is shaped (default 4000)")
	fs.IntVar(&f.hardCap, "hard-cap", 0, "token count no shaped result exceeds (default 12000)")
	fs.StringVar(&f.mode, "mode", "", "how continuations find their data: store or replay (default store)")
	fs.StringVar(&f.encoding, "encoding", "", "tiktoken encoding: o200k_base or cl100k_base (default o200k_base)")
	f.catalog.register(fs)
	fs.DurationVar(&f.opts.CallTimeout, "call-timeout", proxy.DefaultCallTimeout, "longest wait for the upstream to answer one tool call")
	fs.StringVar(&f.rateSpec, "rate", "", "tool calls per second allowed per client, e.g. 5 or 5/s (default: no limit)")
	fs.IntVar(&f.opts.Burst, "burst", 0, "calls a client may make at once within --rate (default: the rate rounded up)")
	fs.IntVar(&f.opts.BreakerFailures, "breaker-failures", proxy.DefaultBreakerFailures, "consecutive upstream failures that open the circuit breaker")
	fs.DurationVar(&f.opts.BreakerOpen, "breaker-open", proxy.DefaultBreakerOpen, "how long the open breaker refuses calls")
	fs.DurationVar(&f.opts.BackoffMin, "backoff-min", proxy.DefaultBackoffMin, "first delay before restarting an upstream that went down")
	fs.DurationVar(&f.opts.BackoffMax, "backoff-max", proxy.DefaultBackoffMax, "longest delay between restarts")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.upstream, "upstream-url", "", "the upstream's URL (streamable HTTP, or HTTP+SSE with --sse) instead of a COMMAND")
	fs.BoolVar(&f.sse, "sse", false, "the --upstream-url speaks the legacy HTTP+SSE transport")
	fs.Var(&f.headers, "header", "NAME:VALUE sent with every request to the --upstream-url (repeatable), e.g. Authorization:Bearer ...")
	fs.StringVar(&f.passEnv, "pass-env", "", "comma-separated CTXFIT_* variables the stdio upstream may see (default none)")
	fs.IntVar(&f.opts.MaxSessions, "max-sessions", proxy.DefaultMaxSessions, "sessions (each with its own upstream process or session) served at once in --listen mode")
	fs.BoolVar(&f.opts.SharedUpstream, "shared-upstream", false, "let every session share one upstream session (one process), for stateless servers")
	fs.DurationVar(&f.opts.IdleTimeout, "idle-timeout", proxy.DefaultIdleTimeout, "end a --listen session (and its upstream) idle this long; 0 never")
	fs.DurationVar(&f.opts.PingInterval, "ping-interval", proxy.DefaultPingInterval, "how often each upstream session is pinged; 0 never")
	f.auth.register(fs)
	fs.BoolVar(&f.opts.LogArguments, "log-arguments", false, "log each tool call's arguments (values of --redact names and of names containing token, secret, key, pass, auth, credential, cookie, session or signature hidden; cursors as a digest)")
	fs.Func("redact", "comma-separated argument names never logged by --log-arguments", func(v string) error {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				f.opts.Redact = append(f.opts.Redact, n)
			}
		}
		return nil
	})
	return f
}

// check validates the parsed flags and the upstream's command; synopsis is
// the command line the error shows when the command is missing.
func (f *proxyFlags) check(synopsis string) error {
	if len(f.command) == 0 && f.upstream == "" {
		return usageError{errors.New("needs the upstream's command or --upstream-url: " + synopsis)}
	}
	if len(f.command) > 0 && f.upstream != "" {
		return usageError{errors.New("takes the upstream's command or --upstream-url, not both")}
	}
	if (f.sse || len(f.headers) > 0) && f.upstream == "" {
		return usageError{errors.New("--sse and --header need --upstream-url")}
	}
	if f.auth.set() && f.listen == "" {
		return usageError{errors.New("--auth-tokens-env and --credential-cookies guard --listen: give --listen ADDR, or leave them out over stdio")}
	}
	f.opts.CredentialCookies = f.auth.cookieNames()
	if f.opts.MaxSessions < 1 || f.opts.IdleTimeout < 0 || f.opts.PingInterval < 0 {
		return usageError{errors.New("--max-sessions must be >= 1, --idle-timeout and --ping-interval >= 0")}
	}
	if f.rateSpec != "" {
		r, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(f.rateSpec), "/s"), 64)
		if err != nil || r < 0 {
			return usageError{fmt.Errorf("--rate %q: want a number of calls per second, e.g. 5 or 5/s", f.rateSpec)}
		}
		f.opts.Rate = rate.Limit(r)
	}
	if f.opts.Burst < 0 || f.opts.BreakerFailures < 1 || f.opts.CallTimeout <= 0 || f.opts.BreakerOpen <= 0 ||
		f.opts.BackoffMin <= 0 || f.opts.BackoffMax < f.opts.BackoffMin {
		return usageError{errors.New("--burst must be >= 0, --breaker-failures >= 1, --call-timeout, --breaker-open and --backoff-min > 0, --backoff-max >= --backoff-min")}
	}
	if _, err := f.overlay(ctxfit.Config{}); err != nil {
		return usageError{err}
	}
	return nil
}

// overlay returns c with the settings given as flags; flags win over the
// file and the environment.
func (f *proxyFlags) overlay(c ctxfit.Config) (ctxfit.Config, error) {
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "threshold":
			c.Threshold = f.threshold
		case "hard-cap":
			c.HardCap = f.hardCap
		case "mode":
			c.Mode = ctxfit.Mode(f.mode)
		case "encoding":
			c.Encoding = f.encoding
		case "catalog-budget":
			c.CatalogBudget = f.catalog.budget
		case "tool-budget":
			c.ToolBudget = f.catalog.toolBudget
		case "catalog-tools":
			c.CatalogTools = f.catalog.tools
		}
	})
	if err := c.Validate(); err != nil {
		return ctxfit.Config{}, err
	}
	return c, nil
}

func (f *proxyFlags) level() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(f.logLevel)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// runProxy is `ctxfit proxy`: it serves until the client disconnects
// (stdio), or until SIGINT or SIGTERM.
func runProxy(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveProxy(ctx, args, stdin, stdout, stderr, os.Getenv)
}

func serveProxy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	f, err := parseProxyFlags(args, stderr) // stdout is the protocol
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: f.level()}))
	f.opts.Logger = logger
	f.opts.Stderr = stderr

	g, closeGuard, err := newProxyGuard(ctx, f, getenv, logger)
	if err != nil {
		return err
	}
	defer closeGuard()

	if len(f.command) > 0 {
		// Each session starts its own process: say now when there is none
		// to start.
		if _, err := exec.LookPath(f.command[0]); err != nil {
			return fmt.Errorf("proxy: starting the upstream server %q: %w", f.command[0], err)
		}
	}
	p, err := proxy.New(g, f.upstreamOf(), &f.opts)
	if err != nil {
		return err
	}
	defer p.Close()
	if f.listen == "" {
		return p.ServeStdio(ctx, stdin, stdout)
	}
	mcp, err := f.auth.guard(p.Handler(), getenv)
	if err != nil {
		return err
	}
	if f.ui.on {
		operators, err := f.ui.operators(getenv)
		if err != nil {
			return err
		}
		page, err := f.ui.handler(p.UI(&proxy.UIOptions{Calls: f.ui.calls, ShowArguments: f.ui.showArgs, Operators: operators}), &f.auth, operators, getenv)
		if err != nil {
			return err
		}
		stop, err := f.ui.serve(ctx, page, logger, "proxy")
		if err != nil {
			return err
		}
		defer stop()
	}
	return serveProxyHTTP(ctx, f.listen, p, mcp, logger)
}

// upstreamOf is the upstream the flags name. A zero --idle-timeout or
// --ping-interval means never.
func (f *proxyFlags) upstreamOf() proxy.Upstream {
	if f.opts.IdleTimeout == 0 {
		f.opts.IdleTimeout = -1
	}
	if f.opts.PingInterval == 0 {
		f.opts.PingInterval = -1
	}
	if f.upstream != "" {
		return proxy.Upstream{URL: f.upstream, SSE: f.sse, Header: f.headers.header()}
	}
	var allow []string
	for _, n := range strings.Split(f.passEnv, ",") {
		if n = strings.TrimSpace(n); n != "" {
			allow = append(allow, n)
		}
	}
	return proxy.Upstream{Command: &proxy.Command{Path: f.command[0], Args: f.command[1:], Env: proxy.PassEnv(os.Environ(), allow...)}}
}

// newProxyGuard returns the guard configured by the settings with the
// flags laid over them. With a settings file (--config or CTXFIT_CONFIG) it
// watches the file and reloads the guard when it changes; an invalid
// change is logged and the settings in force stay.
func newProxyGuard(ctx context.Context, f *proxyFlags, getenv func(string) string, logger *slog.Logger) (*ctxfit.Guard, func(), error) {
	path := f.configPath
	if path == "" {
		path = strings.TrimSpace(getenv(config.EnvConfig))
	}
	if path == "" {
		c, err := config.Load("", getenv)
		if err == nil {
			c, err = f.overlay(c)
		}
		if err != nil {
			return nil, nil, err
		}
		st, err := redisstore.FromURL(c.RedisURL, &redisstore.Options{Timeout: time.Duration(c.StoreTimeout)}) // nil unless CTXFIT_REDIS_URL is set
		if err != nil {
			return nil, nil, err
		}
		g, err := ctxfit.New(&ctxfit.Options{Config: c, Store: st, Logger: logger, Sink: f.sink})
		if err != nil {
			closeStore(st)
			return nil, nil, err
		}
		return g, func() { g.Close(); closeStore(st) }, nil
	}
	var guard atomic.Pointer[ctxfit.Guard]
	reload := func(c ctxfit.Config) {
		g := guard.Load()
		if g == nil {
			return // not built yet: it starts from the latest settings
		}
		c, err := f.overlay(c)
		if err == nil {
			err = g.Reload(c)
		}
		if err != nil {
			logger.Error("proxy: the new settings were not applied", "err", err)
		}
	}
	w, err := config.Watch(ctx, path, &config.WatchOptions{
		Logger:   logger,
		Getenv:   getenv,
		OnChange: func(_, c ctxfit.Config) { reload(c) },
	})
	if err != nil {
		return nil, nil, err
	}
	c, err := f.overlay(w.Current())
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	st, err := redisstore.FromURL(c.RedisURL, &redisstore.Options{Timeout: time.Duration(c.StoreTimeout)}) // read once: a reload does not change the store
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	g, err := ctxfit.New(&ctxfit.Options{Config: c, Store: st, Logger: logger, Sink: f.sink})
	if err != nil {
		w.Close()
		closeStore(st)
		return nil, nil, err
	}
	guard.Store(g)
	reload(w.Current()) // a change while the guard was built
	return g, func() { w.Close(); g.Close(); closeStore(st) }, nil
}

// closeStore closes st unless it is nil (the Guard's own in-memory store).
func closeStore(st store.Store) {
	if st != nil {
		_ = st.Close()
	}
}

// serveProxyHTTP serves mcp (the proxy's handler, behind --auth-tokens-env)
// at /mcp and the proxy's health report (counts and states, no session ID
// or credential) at /healthz.
func serveProxyHTTP(ctx context.Context, addr string, p *proxy.Proxy, mcp http.Handler, logger *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp)
	mux.Handle("/healthz", p.HealthHandler())
	return serveHTTP(ctx, addr, mux, logger, "proxy", nil, func() { _ = p.Close() })
}

// serveHTTP serves mux on addr until ctx ends, logging its MCP URL as
// command's and telling listening (if not nil) the address. Then stop (if not nil) ends
// the sessions first, so that their streams end and Shutdown has no
// hanging request to wait for, and whatever is left after half a second
// is closed.
func serveHTTP(ctx context.Context, addr string, mux http.Handler, logger *slog.Logger, command string, listening func(string), stop func()) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	logger.Info(command+": serving streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp")
	if listening != nil {
		listening(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		if stop != nil {
			stop()
		}
		shutdown, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if err := hs.Shutdown(shutdown); err != nil {
			_ = hs.Close()
		}
		return nil
	}
}

// catalogFlags are the flags of the budgeted tool catalog, which the proxy
// and the gateway share.
type catalogFlags struct {
	budget, toolBudget int
	tools              []string
}

func (c *catalogFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&c.budget, "catalog-budget", 0, "tokens of the whole tools/list; over it a budgeted catalog with ctxfit_find_tools and ctxfit_call_tool is served (default the hard cap; negative: every definition)")
	fs.IntVar(&c.toolBudget, "tool-budget", 0, "tokens of one tool definition in a budgeted catalog; a longer one is trimmed with a link to the whole (default an eighth of the catalog budget)")
	fs.Func("catalog-tools", "comma-separated tools (names or tags) a budgeted catalog lists first", func(v string) error {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				c.tools = append(c.tools, n)
			}
		}
		return nil
	})
}
