package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/redact"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Defaults of [Options].
const (
	// DefaultTimeout is the time limit of one API call.
	DefaultTimeout = 30 * time.Second
	// DefaultLoadTimeout is the time limit of fetching a document by URL.
	DefaultLoadTimeout = 30 * time.Second
	// DefaultCacheTTL is how long a GET result is served from the cache.
	DefaultCacheTTL = time.Hour
	// DefaultCacheEntries is how many results the cache holds.
	DefaultCacheEntries = 1000
	// DefaultMaxCalls is how many API calls run at once.
	DefaultMaxCalls = 16
	// DefaultMaxResponseBytes bounds one API answer, in bytes.
	DefaultMaxResponseBytes = 16 << 20
	// DefaultMaxBufferedBytes bounds the bytes of the answers the gateway
	// reads at once.
	DefaultMaxBufferedBytes = 128 << 20
	// DefaultMaxSessions is how many sessions the gateway serves at once.
	DefaultMaxSessions = 64
	// maxDocument bounds a document's size, in bytes.
	maxDocument = 32 << 20
)

// Options configure [New]. A nil *Options, like the zero value, means the
// defaults; New copies them.
type Options struct {
	// BaseURL is where the API is. Empty means the document's first server
	// URL (with its variables' defaults), resolved against the document's
	// location when it is relative.
	BaseURL string
	// Include selects the operations that become tools (see
	// [Operations]). Empty means all of them.
	Include []string
	// Exclude leaves out the operations it selects, with the entries of
	// Include's kinds, after Include. Empty means none; an entry that
	// selects nothing is an error.
	Exclude []string
	// Resources serves the GET operations it selects (with the entries
	// of Include's kinds, among those Include and Exclude leave) as MCP
	// resources rather than tools, as FastMCP's route maps do: one
	// without parameters is a resource, one with path parameters a
	// resource template, its URI the API's URL of the operation
	// ("https://api.example.com/items/{id}"). Reading one calls the
	// operation and its answer is shaped as a tool's. An operation with a
	// required query, header or cookie parameter stays a tool. Empty
	// means none; an entry that selects no such operation is an error.
	Resources []string
	// Names renames tools: a key is an operationId, a tool name or
	// "METHOD /path", its value the tool's name (made valid and unique as
	// any other). Nil means the names from the document; a key that names
	// no operation is an error.
	Names map[string]string
	// Header is added to every API call, over the operation's header
	// parameters: credentials go here. The gateway never logs it.
	Header http.Header
	// Client makes the API calls. Nil means a client of its own. Either
	// way the gateway follows a redirect only within the origin (scheme,
	// host and port) of the request: an answer that redirects elsewhere
	// is a tool error, so that Header (credentials) reaches no other
	// host. The gateway uses a copy of Client with its CheckRedirect
	// wrapped; Client's own CheckRedirect still judges the redirects the
	// gateway follows.
	Client *http.Client
	// Timeout limits one API call: waiting for a free call (MaxCalls),
	// the request, and reading the answer. Zero means [DefaultTimeout].
	Timeout time.Duration
	// MaxCalls bounds the API calls in flight at once; a call beyond it
	// waits for one to end, within its Timeout, and is a tool error of
	// code gateway_busy when none does. Zero means [DefaultMaxCalls];
	// negative means no bound.
	MaxCalls int
	// MaxResponseBytes bounds one answer of the API, in bytes once
	// decompressed; a longer answer is a tool error of code
	// answer_too_large, read no further than the bound. Zero (or
	// negative) means [DefaultMaxResponseBytes].
	MaxResponseBytes int64
	// MaxBufferedBytes bounds the memory that the calls in flight take
	// to read their answers, together, in bytes; a call that would go
	// beyond it stops reading and is a tool error of code gateway_busy.
	// Zero means [DefaultMaxBufferedBytes]; negative means no bound.
	MaxBufferedBytes int64
	// MaxSessions bounds the sessions served at once, whatever their
	// transport: the first request of one more session (initialize) is
	// refused with a JSON-RPC error until another session ends. Zero
	// means [DefaultMaxSessions]; negative means no bound. (Idle
	// sessions of streamable HTTP end with the handler's
	// mcp.StreamableHTTPOptions.SessionTimeout.)
	MaxSessions int
	// CacheTTL is how long the result of a GET or HEAD is served from the
	// response cache. Zero means [DefaultCacheTTL]; negative means no
	// cache.
	CacheTTL time.Duration
	// CacheEntries bounds the cache. Zero means [DefaultCacheEntries].
	CacheEntries int
	// Install configures the guard on the tools (mcpfit.Install); its
	// Cache is the gateway's. Nil means mcpfit's defaults.
	Install *mcpfit.Options
	// Implementation names the server. Nil means the document's title and
	// version.
	Implementation *mcp.Implementation
	// Logger receives the gateway's log lines: start-up, discovery, call
	// outcomes (method, path, status, never headers or arguments). Nil
	// means none.
	Logger *slog.Logger
	// Now is the clock of the cache and of the metrics. Nil means
	// time.Now.
	Now func() time.Time
	// Started is when start-up began (the process start, say), for
	// [Stats.Startup]. Zero means when New was called.
	Started time.Time
	// Sink receives the gateway's events as telemetry.GatewayRecord values
	// (start-up, discovery, validations and retries, cache hits and
	// misses, sessions, API calls, shaped results) when it is a
	// telemetry.GatewaySink; the guard's own records go to the guard's
	// Options.Sink, which may be the same sink. The gateway calls it off
	// the request path, through a telemetry.Async that [Gateway.Close]
	// flushes, so a slow or failing sink never delays or fails a call.
	// Nil (or a sink that is not a GatewaySink) means no telemetry.
	Sink telemetry.Sink
}

// Gateway is an MCP server whose tools call the operations of an HTTP API,
// guarded by ctxfit.
//
// A Gateway is safe for concurrent use. Create one with [New]; release it
// with [Gateway.Close].
type Gateway struct {
	impl   *mcp.Implementation // the server's, which the SDK adds to every result's _meta
	server *mcp.Server
	ops    []*Operation
	// skipped and warnings count the operations not served and the
	// document's warnings.
	skipped, warnings int
	byName            map[string]*tool
	cache             *cache.Cache
	logger            *slog.Logger
	now               func() time.Time
	sink              *telemetry.Async // nil: no telemetry
	catalog           *catalog

	slots       chan struct{} // API calls in flight; nil: no bound
	buffered    budget        // bytes of answers being read
	maxResponse int64         // bytes of one answer
	maxSessions int           // <= 0: no bound

	startup                  time.Duration
	valid, invalid, retries  atomic.Int64
	calls, apiErrors         atomic.Int64
	mismatches               atomic.Int64 // answers outside their output schema
	current, peak, connected atomic.Int64

	mu                 sync.Mutex
	connectedAt        map[*mcp.ServerSession]time.Time
	failed             map[retryKey]struct{} // tools of sessions whose last call was invalid
	discovery          []time.Duration
	shaped, summarized reductions
}

// tool is one operation with what a call needs.
type tool struct {
	op *Operation
	// schemas compiles the input and output schemas at the tool's first
	// call, not at start: a large document's thousand schemas would take
	// seconds.
	schemas func() schemas
	base    *url.URL
	header  http.Header
	client  *http.Client
	timeout time.Duration
	g       *Gateway
}

// New builds the gateway's MCP server for doc: one tool per selected
// operation, each guarded by g (mcpfit.Install), GET and HEAD results
// cached. It returns an error when doc has no operation include selects,
// or no base URL can be found.
func New(doc *Document, g *ctxfit.Guard, opts *Options) (*Gateway, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	started := o.Started
	if started.IsZero() {
		started = o.Now()
	}
	if doc == nil || doc.raw == nil {
		return nil, errors.New("gateway: New needs a document")
	}
	if g == nil {
		return nil, errors.New("gateway: New needs a guard")
	}
	var inst mcpfit.Options
	if o.Install != nil {
		inst = *o.Install
	}
	reserved := []string{def(inst.NextTool, "ctxfit_next"), def(inst.DetailsTool, "ctxfit_details"),
		def(inst.SearchTool, "ctxfit_search"), def(inst.QueryTool, "ctxfit_query"), mcpcore.FindTool, mcpcore.CallTool}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	for _, w := range doc.Warnings {
		o.Logger.Warn("gateway: the document", "warning", w)
	}
	all, skips, err := operations(doc, routes{include: o.Include, exclude: o.Exclude, names: o.Names, resources: o.Resources}, reserved)
	if err != nil {
		return nil, err
	}
	var ops, resources []*Operation
	for _, op := range all {
		if op.resource {
			resources = append(resources, op)
		} else {
			ops = append(ops, op)
		}
	}
	for _, sk := range skips {
		o.Logger.Warn("gateway: an operation is not served", "method", sk.Method, "path", sk.Path, "reason", sk.Reason)
	}
	base, err := baseURL(doc, o.BaseURL)
	if err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	o.Client = sameOriginClient(o.Client)
	impl := o.Implementation
	if impl == nil {
		impl = &mcp.Implementation{Name: def(doc.Title, "ctxfit-gateway"), Version: def(doc.Version, "0")}
	}
	gw := &Gateway{ops: ops, skipped: len(skips), warnings: len(doc.Warnings), byName: map[string]*tool{}, logger: o.Logger, now: o.Now,
		connectedAt: map[*mcp.ServerSession]time.Time{}, failed: map[retryKey]struct{}{},
		maxResponse: o.MaxResponseBytes, maxSessions: def(o.MaxSessions, DefaultMaxSessions), impl: impl}
	if gw.maxResponse <= 0 {
		gw.maxResponse = DefaultMaxResponseBytes
	}
	gw.buffered.limit = def(o.MaxBufferedBytes, DefaultMaxBufferedBytes)
	if n := def(o.MaxCalls, DefaultMaxCalls); n > 0 {
		gw.slots = make(chan struct{}, n)
	}
	if _, ok := o.Sink.(telemetry.GatewaySink); ok {
		gw.sink = telemetry.NewAsync(o.Sink, &telemetry.AsyncOptions{OnError: func(err error) {
			o.Logger.Warn("gateway: the telemetry sink failed", "err", err)
		}})
	}
	if o.CacheTTL >= 0 {
		ttl := def(o.CacheTTL, DefaultCacheTTL)
		gw.cache = cache.New(&cache.Options{TTL: ttl, MaxEntries: def(o.CacheEntries, DefaultCacheEntries), Now: o.Now})
		inst.Cache = gw.cache
	} else {
		inst.Cache = nil
	}
	s := mcp.NewServer(impl, nil)
	s.AddReceivingMiddleware(gw.observe)
	header := o.Header.Clone()
	for _, op := range ops {
		t := &tool{op: op, base: base, header: header, client: o.Client, timeout: o.Timeout, g: gw}
		t.schemas = sync.OnceValue(func() schemas { return compile(op, gw.logger) })
		gw.byName[op.Tool.Name] = t
		s.AddTool(op.Tool, t.call)
	}
	for _, op := range resources {
		t := &tool{op: op, base: base, header: header, client: o.Client, timeout: o.Timeout, g: gw}
		t.schemas = sync.OnceValue(func() schemas { return compile(op, gw.logger) })
		t.addResource(s)
	}
	if err := mcpfit.Install(s, g, &inst); err != nil {
		gw.Close()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	s.AddReceivingMiddleware(gw.measure) // outside mcpfit's: sees shaped results
	// Outermost: tools/list over the catalog budget, ctxfit_find_tools and
	// ctxfit_call_tool (which goes on as a call of the tool it names).
	gw.catalog = newCatalog(gw, g, mcpcore.Names{Next: inst.NextTool, Details: inst.DetailsTool,
		Search: inst.SearchTool, Query: inst.QueryTool}.WithDefaults(), inst.Subject)
	s.AddReceivingMiddleware(gw.catalog.middleware)
	gw.server = s
	gw.startup = o.Now().Sub(started)
	o.Logger.Info("gateway: ready", "tools", len(ops), "resources", len(resources), "api", base.Redacted(), "startup", gw.startup.String())
	gw.emit(context.Background(), telemetry.GatewayRecord{Event: telemetry.GatewayStartup, Duration: max(gw.startup, 0), Tools: len(ops)})
	return gw, nil
}

func def[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// baseURL returns the API's base URL: override, or the document's first
// server with its variables' defaults, resolved against its location.
func baseURL(doc *Document, override string) (*url.URL, error) {
	raw := override
	if servers, _ := doc.raw["servers"].([]any); raw == "" && len(servers) > 0 {
		if srv, ok := servers[0].(map[string]any); ok {
			raw = str(srv, "url")
			vars, _ := srv["variables"].(map[string]any)
			for name, v := range vars {
				if v, ok := v.(map[string]any); ok {
					raw = strings.ReplaceAll(raw, "{"+name+"}", fmt.Sprint(v["default"]))
				}
			}
		}
	}
	if raw == "" && doc.Location != nil {
		raw = "/"
	}
	if raw == "" {
		return nil, errors.New("gateway: the document names no server: give the API's base URL (--base-url)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("gateway: base URL %q: %w", raw, err)
	}
	if !u.IsAbs() {
		if doc.Location == nil || override != "" {
			return nil, fmt.Errorf("gateway: base URL %q is relative: give the API's absolute base URL (--base-url)", raw)
		}
		u = doc.Location.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("gateway: base URL %q: want http or https", raw)
	}
	return u, nil
}

// Server returns the MCP server: serve it on any transport.
func (gw *Gateway) Server() *mcp.Server { return gw.server }

// Operations returns the operations that became tools, in the order of
// [Operations]. The slice is the caller's; the Operations are shared.
func (gw *Gateway) Operations() []*Operation { return append([]*Operation(nil), gw.ops...) }

// Close releases the response cache and flushes the telemetry of
// [Options.Sink] (waiting up to 5 seconds). It does not close the sink.
func (gw *Gateway) Close() error {
	var errs []error
	if gw.cache != nil {
		errs = append(errs, gw.cache.Close())
	}
	if gw.sink != nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		errs = append(errs, gw.sink.Close(ctx))
		cancel()
	}
	return errors.Join(errs...)
}

// call is the handler of one tool: validate, call the API, answer.
func (t *tool) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var raw json.RawMessage
	var ss *mcp.ServerSession
	if req != nil {
		ss = req.Session
		if req.Params != nil {
			raw = req.Params.Arguments
		}
	}
	sch := t.schemas()
	if e := validateArgs(sch.input, raw); e != nil {
		t.g.validated(ctx, ss, t.op.Tool.Name, e.Data.Parameter, false)
		// The parameter is the client's (an unknown argument's name): cut.
		t.g.logger.Info("gateway: invalid arguments", "tool", t.op.Tool.Name, "parameter", redact.Bound(e.Data.Parameter, 256))
		return e.result(!t.op.output), nil
	}
	var args map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			t.g.validated(ctx, ss, t.op.Tool.Name, "", false)
			return argumentError("", "", "a JSON object of arguments", err.Error(), "Send the arguments as one JSON object.").result(!t.op.output), nil
		}
	}
	if e := t.op.checkPath(args); e != nil {
		t.g.validated(ctx, ss, t.op.Tool.Name, e.Data.Parameter, false)
		t.g.logger.Info("gateway: a path argument would leave the operation's path", "tool", t.op.Tool.Name, "parameter", e.Data.Parameter)
		return e.result(!t.op.output), nil
	}
	t.g.validated(ctx, ss, t.op.Tool.Name, "", true)
	callCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	hreq, err := t.op.buildRequest(ctx, t.base, args, t.header)
	if err != nil {
		return nil, fmt.Errorf("gateway: %s: %w", t.op.Tool.Name, err)
	}
	if !t.g.acquire(ctx) {
		t.g.logger.Warn("gateway: no free call within the time limit", "tool", t.op.Tool.Name, "maxCalls", cap(t.g.slots),
			"clientGone", callCtx.Err() != nil)
		return t.op.busy(fmt.Sprintf("%d API calls were in flight, the most the gateway makes at once, for the whole time limit of the call (%s)",
			cap(t.g.slots), t.timeout), "Wait a moment, then call again with the same arguments; make fewer calls at once.").result(!t.op.output), nil
	}
	defer t.g.release()
	t.g.calls.Add(1)
	start := t.g.now()
	resp, err := t.client.Do(hreq)
	called := telemetry.GatewayRecord{Event: telemetry.GatewayAPICall, Tool: t.op.Tool.Name, Method: t.op.Method,
		Duration: max(t.g.now().Sub(start), 0)}
	if err != nil {
		t.g.emit(ctx, called)
		t.g.apiErrors.Add(1)
		t.g.logger.Warn("gateway: the API did not answer", "tool", t.op.Tool.Name, "method", t.op.Method, "path", t.op.Path)
		return t.op.unreachable(err), nil
	}
	defer resp.Body.Close()
	body, taken, err := readAnswer(resp.Body, resp.ContentLength, t.g.maxResponse, &t.g.buffered)
	defer t.g.buffered.give(taken)
	res := t.op.answer(resp, body, err, t.g, sch.output)
	called.Status = resp.StatusCode
	if res.IsError && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		called.Status = 0 // its body could not be read: no answer, as the result says
	}
	t.g.emit(ctx, called)
	if res.IsError {
		t.g.apiErrors.Add(1)
	}
	t.g.logger.Debug("gateway: call", "tool", t.op.Tool.Name, "method", t.op.Method, "path", t.op.Path,
		"status", resp.StatusCode, "duration", t.g.now().Sub(start).String())
	return res, nil
}

// acquire waits for a free API call (of [Options.MaxCalls]) until ctx
// ends, and reports whether it got one; [Gateway.release] gives it back.
func (gw *Gateway) acquire(ctx context.Context) bool {
	if gw.slots == nil {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	select {
	case gw.slots <- struct{}{}:
		return true
	default:
	}
	gw.logger.Info("gateway: waiting for a free call", "maxCalls", cap(gw.slots))
	select {
	case gw.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (gw *Gateway) release() {
	if gw.slots != nil {
		<-gw.slots
	}
}
