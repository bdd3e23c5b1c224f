package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/internal/errorbody"
	"github.com/ctxfit/ctxfit/internal/principal"
	"github.com/ctxfit/ctxfit/internal/ui"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/telemetry/otelsink"
)

const gatewayUsage = `Usage: ctxfit gateway --openapi FILE_OR_URL [--base-url URL] [--include OPS]
                      [--header NAME:VALUE]... [--listen ADDR] [FLAGS]

Serves the operations of the HTTP API that an OpenAPI 3.0 or 3.1 document
(or a Swagger 2.0 one, converted; JSON or YAML) describes as MCP tools, one per operation, with their arguments validated
before the call and every result kept within the token budget by ctxfit
(ctxfit_next, ctxfit_details, ctxfit_search and ctxfit_query lead to the
rest). When the tool list is over --catalog-budget (by default the hard
cap), tools/list is a budgeted catalog: ctxfit's tools, ctxfit_find_tools
(searches every operation by name, description, tag and path) and
ctxfit_call_tool, and the tools that fit. GET results are cached. Serves stdio (standard input and output are
the protocol; logs go to standard error as JSON lines) or, with --listen,
streamable HTTP at http://ADDR/mcp with a health report at
http://ADDR/healthz and Prometheus metrics at http://ADDR/metrics (the
gateway's ctxfit_gateway_* series beside the guard's ctxfit_* ones).

` + listenCredentialsHelp + uiHelp + `
MCP_TRANSPORT=http (or streamable-http, http-sse) with MCP_PORT=PORT
(1024-65535) serves streamable HTTP on 127.0.0.1:PORT when --listen is not
given; MCP_TRANSPORT=stdio is the default.

A --header value of the form env:NAME is read from the environment variable
NAME, so that credentials stay out of the process list. Header values are
never logged, and sent only to the API's origin: a redirect to another
scheme, host or port is not followed. A path argument that is empty or has
a "." or ".." segment is refused, so that no call leaves the paths of the
document.

External references ($ref to another file or URL) are read when they are
beside the document (files in its directory or below, URLs under its
origin and directory) or under a prefix of --allow-ref. An operation the
gateway cannot serve (a reference not read, a required request body of no
media type it sends) is skipped with a warning that says why; /healthz
counts them.

--max-calls, --max-response-mib, --buffer-mib, --max-sessions and
--idle-timeout bound what clients can make the gateway hold: calls beyond
--max-calls wait within --timeout; an answer over --max-response-mib
(counted decompressed) or one that does not fit in --buffer-mib is a tool
error that tells the model to ask for less or call again later.

Settings come from the defaults, then the file of --config (or
CTXFIT_CONFIG), then the CTXFIT_* variables, then the flags below, as for
ctxfit proxy. The file's "gateway" section holds route maps (include,
exclude, resources, names), read at start-up; the flags add to them.

Flags:
`

// gatewayFlags are the command line of `ctxfit gateway`.
type gatewayFlags struct {
	guard    *proxyFlags // the guard's settings, read as ctxfit proxy reads them
	openapi  string
	baseURL  string
	include  []string
	allowRef []string
	exclude  []string
	resource []string
	names    map[string]string
	headers  http.Header
	timeout  time.Duration
	cacheTTL time.Duration
	entries  int
	noCache  bool
	// bounds
	maxCalls, maxResponseMiB, bufferMiB, maxSessions int
	idleTimeout                                      time.Duration
}

// defaultGatewayIdleTimeout ends a --listen session idle this long.
const defaultGatewayIdleTimeout = 30 * time.Minute

func parseGatewayFlags(args []string, out io.Writer, getenv func(string) string) (*gatewayFlags, error) {
	fs := newFlagSet("gateway", out)
	pf := &proxyFlags{fs: fs}
	f := &gatewayFlags{guard: pf, headers: http.Header{}}
	fs.StringVar(&f.openapi, "openapi", "", "the OpenAPI 3.0 or 3.1 (or Swagger 2.0) document: a file, or an http(s) URL fetched at start-up")
	fs.Func("allow-ref", "a URL prefix or directory the document's external references may be read from, besides those beside it; repeatable", func(v string) error {
		if v = strings.TrimSpace(v); v == "" {
			return errors.New("want a URL prefix or a directory")
		}
		f.allowRef = append(f.allowRef, v)
		return nil
	})
	fs.StringVar(&f.baseURL, "base-url", "", "the API's base URL (default: the document's first server, resolved against its URL)")
	fs.Func("include", "operations to serve, comma-separated: operationIds, tags, path patterns (/items/*) or 'METHOD /path'; repeatable (default: all)", func(v string) error {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				f.include = append(f.include, s)
			}
		}
		return nil
	})
	fs.Func("exclude", "operations not to serve, as --include names them; applied after --include; repeatable", func(v string) error {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				f.exclude = append(f.exclude, s)
			}
		}
		return nil
	})
	fs.Func("resource", "GET operations to serve as MCP resources (a template when the path has parameters) rather than tools, as --include names them; repeatable", func(v string) error {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				f.resource = append(f.resource, s)
			}
		}
		return nil
	})
	fs.Func("name", "a tool's name, OPERATION=NAME (OPERATION: an operationId, a tool name or 'METHOD /path'); repeatable", func(v string) error {
		key, name, ok := strings.Cut(v, "=")
		key, name = strings.TrimSpace(key), strings.TrimSpace(name)
		if !ok || key == "" || name == "" {
			return errors.New("want OPERATION=NAME, e.g. getUser=user or 'GET /users/{id}=user'")
		}
		if f.names == nil {
			f.names = map[string]string{}
		}
		f.names[key] = name
		return nil
	})
	fs.Func("header", "a header sent with every API call, NAME:VALUE (VALUE env:VAR reads $VAR); repeatable", func(v string) error {
		name, value, ok := strings.Cut(v, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return errors.New("want NAME:VALUE")
		}
		if envName, ok := strings.CutPrefix(value, "env:"); ok {
			value = getenv(envName)
			if value == "" {
				return fmt.Errorf("header %s: the environment variable %s is empty", name, envName)
			}
		}
		f.headers.Add(name, value)
		return nil
	})
	fs.StringVar(&pf.listen, "listen", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio")
	fs.DurationVar(&f.timeout, "timeout", gateway.DefaultTimeout, "time limit of one API call")
	fs.DurationVar(&f.cacheTTL, "cache-ttl", gateway.DefaultCacheTTL, "how long a GET result is served from the cache")
	fs.IntVar(&f.entries, "cache-entries", gateway.DefaultCacheEntries, "how many results the cache holds")
	fs.BoolVar(&f.noCache, "no-cache", false, "do not cache GET results")
	fs.IntVar(&f.maxCalls, "max-calls", gateway.DefaultMaxCalls, "API calls in flight at once; more wait, within --timeout")
	fs.IntVar(&f.maxResponseMiB, "max-response-mib", gateway.DefaultMaxResponseBytes>>20, "MiB of one API answer (decompressed) the gateway reads; a longer one is an error")
	fs.IntVar(&f.bufferMiB, "buffer-mib", gateway.DefaultMaxBufferedBytes>>20, "MiB of memory the calls in flight may take together to read their answers")
	fs.IntVar(&f.maxSessions, "max-sessions", gateway.DefaultMaxSessions, "sessions served at once; one more is refused")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", defaultGatewayIdleTimeout, "end a --listen session idle this long; 0 never")
	fs.StringVar(&pf.configPath, "config", "", "settings file (JSON or YAML), watched for changes; default $CTXFIT_CONFIG")
	fs.IntVar(&pf.threshold, "threshold", 0, "token count above which a result is shaped (default 4000)")
	fs.IntVar(&pf.hardCap, "hard-cap", 0, "token count no shaped result exceeds (default 12000)")
	fs.StringVar(&pf.mode, "mode", "", "how continuations find their data: store or replay (default store)")
	fs.StringVar(&pf.encoding, "encoding", "", "tiktoken encoding: o200k_base or cl100k_base (default o200k_base)")
	pf.catalog.register(fs)
	fs.StringVar(&pf.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	pf.auth.register(fs)
	pf.ui.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), gatewayUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, usageErrorOf(err)
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	if f.openapi == "" {
		return nil, usageError{errors.New("needs the API's OpenAPI document: --openapi FILE_OR_URL")}
	}
	if f.timeout <= 0 || f.entries <= 0 || f.cacheTTL <= 0 {
		return nil, usageError{errors.New("--timeout, --cache-ttl and --cache-entries must be > 0")}
	}
	if f.maxCalls < 1 || f.maxResponseMiB < 1 || f.bufferMiB < 1 || f.maxSessions < 1 || f.idleTimeout < 0 {
		return nil, usageError{errors.New("--max-calls, --max-response-mib, --buffer-mib and --max-sessions must be >= 1, --idle-timeout >= 0")}
	}
	if f.bufferMiB < f.maxResponseMiB {
		return nil, usageError{fmt.Errorf("--buffer-mib (%d) must be at least --max-response-mib (%d): one answer must fit", f.bufferMiB, f.maxResponseMiB)}
	}
	if pf.listen == "" {
		listen, err := listenFromEnv(getenv)
		if err != nil {
			return nil, usageError{err}
		}
		pf.listen = listen
	}
	if pf.auth.set() && pf.listen == "" {
		return nil, usageError{errors.New("--auth-tokens-env and --credential-cookies guard --listen: give --listen ADDR (or MCP_TRANSPORT=http), or leave them out over stdio")}
	}
	if err := pf.ui.check(fs, pf.listen); err != nil {
		return nil, err
	}
	if _, err := pf.overlay(ctxfit.Config{}); err != nil {
		return nil, usageError{err}
	}
	return f, nil
}

// listenFromEnv returns the address MCP_TRANSPORT and MCP_PORT ask for:
// "" for stdio (the default), 127.0.0.1:PORT for streamable HTTP.
func listenFromEnv(getenv func(string) string) (string, error) {
	switch t := strings.ToLower(strings.TrimSpace(getenv("MCP_TRANSPORT"))); t {
	case "", "stdio":
		return "", nil
	case "http", "streamable-http", "http-sse":
		raw := strings.TrimSpace(getenv("MCP_PORT"))
		if raw == "" {
			return "", fmt.Errorf("MCP_TRANSPORT=%s needs MCP_PORT", t)
		}
		port, err := strconv.Atoi(raw)
		if err != nil || port < 1024 || port > 65535 {
			return "", fmt.Errorf("MCP_PORT=%q: want a port between 1024 and 65535", raw)
		}
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
	default:
		return "", fmt.Errorf("MCP_TRANSPORT=%q: want stdio, http, streamable-http or http-sse (served as streamable HTTP)", t)
	}
}

// runGateway is `ctxfit gateway`: it serves until the client disconnects
// (stdio), or until SIGINT or SIGTERM.
func runGateway(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveGateway(ctx, args, stdin, stdout, stderr, os.Getenv, nil)
}

// serveGateway is runGateway with its context, environment and, for tests,
// a function called with the HTTP address once it listens.
func serveGateway(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, listening func(string)) error {
	started := time.Now()
	f, err := parseGatewayFlags(args, stderr, getenv) // stdout is the protocol
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: f.guard.level()}))
	doc, err := gateway.Load(ctx, f.openapi, &gateway.LoadOptions{AllowRefs: f.allowRef})
	if err != nil {
		return err
	}
	var metrics http.Handler
	if f.guard.listen != "" {
		sink, handler, shutdown, err := prometheusSink()
		if err != nil {
			return err
		}
		defer shutdown() // after the guard and the gateway have flushed theirs
		f.guard.sink, metrics = sink, handler
	}
	g, closeGuard, err := newProxyGuard(ctx, f.guard, getenv, logger)
	if err != nil {
		return err
	}
	defer closeGuard()
	routes := g.Config().Gateway // the settings file's route maps, then the flags'
	names := maps.Clone(routes.Names)
	if len(f.names) > 0 && names == nil {
		names = map[string]string{}
	}
	maps.Copy(names, f.names)
	opts := &gateway.Options{
		BaseURL: f.baseURL, Include: append(routes.Include, f.include...), Exclude: append(routes.Exclude, f.exclude...),
		Resources: append(routes.Resources, f.resource...), Names: names, Header: f.headers, Timeout: f.timeout,
		CacheTTL: f.cacheTTL, CacheEntries: f.entries, Logger: logger, Started: started,
		Sink: f.guard.sink, MaxCalls: f.maxCalls, MaxSessions: f.maxSessions,
		MaxResponseBytes: int64(f.maxResponseMiB) << 20, MaxBufferedBytes: int64(f.bufferMiB) << 20,
	}
	if f.noCache {
		opts.CacheTTL = -1
	}
	if f.guard.listen != "" {
		opts.Install = &mcpfit.Options{Subject: credentialSubject(f.guard.auth.cookieNames())}
	}
	gw, err := gateway.New(doc, g, opts)
	if err != nil {
		return err
	}
	defer gw.Close()
	headers := make([]string, 0, len(f.headers))
	for name := range f.headers {
		headers = append(headers, name)
	}
	logger.Info("gateway: serving", "document", f.openapi, "tools", len(gw.Operations()), "headers", headers)
	if f.guard.listen == "" {
		err := gw.Server().Run(ctx, &mcp.IOTransport{Reader: readCloser(stdin), Writer: writeCloser(stdout)})
		if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	sessions := &principal.Sessions{Cookies: f.guard.auth.cookieNames()}
	if f.guard.ui.on {
		operators, err := f.guard.ui.operators(getenv)
		if err != nil {
			return err
		}
		cookies := f.guard.auth.cookieNames()
		upstream := gatewayUpstream(f.baseURL, f.openapi)
		page := ui.New(&ui.Options{Size: f.guard.ui.calls, ShowArguments: f.guard.ui.showArgs, Operators: operators, Cookies: cookies,
			Sessions: func() []ui.Session { return uiSessions(gw.Server(), sessions) },
			Health:   func() any { return uiHealth(gw.Stats(), upstream) }})
		// Added after mcpfit's, this middleware wraps it: it sees what the
		// model received.
		gw.Server().AddReceivingMiddleware(uiMiddleware(page, g, uiOptions{Cookies: cookies, ShowArguments: f.guard.ui.showArgs}))
		h, err := f.guard.ui.handler(page, &f.guard.auth, operators, getenv)
		if err != nil {
			return err
		}
		stop, err := f.guard.ui.serve(ctx, h, logger, "gateway")
		if err != nil {
			return err
		}
		defer stop()
	}
	endpoint, err := f.guard.auth.guard(sessions.Handler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gw.Server() }, &mcp.StreamableHTTPOptions{SessionTimeout: f.idleTimeout})), getenv)
	if err != nil {
		return err
	}
	return serveGatewayHTTP(ctx, f.guard.listen, endpoint, gw, metrics, logger, listening)
}

// credentialSubject binds a --listen session's cursors and links to the
// credential of the requests that carry its calls (a digest of their
// Authorization header and the cookies named, see [principal.Of]) as well
// as to the session ID, so that a cursor is refused to another credential
// even with the session's ID.
func credentialSubject(cookies []string) func(context.Context, *mcp.CallToolRequest) string {
	return func(_ context.Context, req *mcp.CallToolRequest) string {
		var id string
		if req.Session != nil {
			id = req.Session.ID()
		}
		if req.Extra == nil || req.Extra.Header == nil {
			return id
		}
		return principal.Of(&http.Request{Header: req.Extra.Header}, cookies) + " " + id
	}
}

// prometheusSink returns an otelsink.Sink whose metrics the returned
// handler serves in Prometheus's text format, from a registry of their own
// (not the process's default one), and the function that shuts the meter
// provider down.
func prometheusSink() (*otelsink.Sink, http.Handler, func(), error) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("gateway: metrics: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	shutdown := func() { _ = provider.Shutdown(context.Background()) }
	sink, err := otelsink.New(provider)
	if err != nil {
		shutdown()
		return nil, nil, nil, err
	}
	return sink, promhttp.HandlerFor(registry, promhttp.HandlerOpts{}), shutdown, nil
}

// serveGatewayHTTP serves endpoint, the gateway's streamable HTTP handler
// with each session bound to the credential that made it (and behind
// --auth-tokens-env) and ended when idle for --idle-timeout, at /mcp, its health report (the status and
// [gateway.Stats]: counts, no session ID or credential) at /healthz and,
// when metrics is not nil, the Prometheus metrics at /metrics.
func serveGatewayHTTP(ctx context.Context, addr string, endpoint http.Handler, gw *gateway.Gateway, metrics http.Handler, logger *slog.Logger, listening func(string)) error {
	mux := http.NewServeMux()
	// The SDK's errors repeat what it could not read: 1 KiB of that.
	mux.Handle("/mcp", errorbody.Bound(endpoint, 1<<10))
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(healthReport(gw.Stats()))
	})
	return serveHTTP(ctx, addr, mux, logger, "gateway", listening, nil)
}

// healthReport is the JSON of /healthz: the gateway's metrics, times in
// milliseconds.
func healthReport(s gateway.Stats) map[string]any {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return map[string]any{
		"status":    "ok",
		"startupMs": ms(s.Startup),
		"discovery": map[string]any{"count": s.Discoveries, "lastMs": ms(s.DiscoveryLast), "maxMs": ms(s.DiscoveryMax), "meanMs": ms(s.DiscoveryMean)},
		"validation": map[string]any{"successes": s.ValidationSuccesses, "failures": s.ValidationFailures,
			"successRate": s.ValidationRate(), "retries": s.Retries},
		"api": map[string]any{"calls": s.Calls, "errors": s.APIErrors, "peakBufferedBytes": s.PeakBufferedBytes,
			"outputMismatches": s.OutputMismatches},
		"document": map[string]any{"skippedOperations": s.SkippedOperations, "warnings": s.DocumentWarnings},
		"shaping": map[string]any{"shaped": s.Shaped, "reductionMean": s.ReductionMean, "summarized": s.Summarized,
			"summaryReductionMean": s.SummaryReductionMean, "summariesAtLeast70": s.SummariesAtLeast70},
		"cache":    map[string]any{"hits": s.Cache.Hits + s.Cache.Shared, "misses": s.Cache.Misses, "hitRate": s.Cache.HitRate()},
		"sessions": map[string]any{"total": s.Sessions, "current": s.CurrentSessions, "peak": s.PeakSessions},
	}
}

// readCloser and writeCloser adapt standard input and output (or a test's
// buffers) to the SDK's IOTransport.
func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopWriteCloser{w}
}
