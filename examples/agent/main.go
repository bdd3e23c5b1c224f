// Command agent is an OpenAI-compatible chat endpoint backed by MCP servers,
// with ctxfit on the agent's side: every tool result it receives is shaped
// to the token budget by the client-side guard (mcpclientfit), the
// conversation it sends the model is fitted to the model's context window
// (old tool results cleared behind placeholders that lead back to them,
// then old turns dropped), and nothing is lost: the model reads any cleared
// result or any further page with ctxfit_next, served by the agent itself.
//
// It serves:
//
//   - POST /v1/chat/completions: the request's new messages are added to
//     its session (X-Session-ID; a new one when absent, returned in the
//     same header; a history the client sends again is not added twice,
//     see history.go), and the agent loop runs: the conversation and the
//     tools go to a provider (-provider NAME=URL, repeated: the one the
//     request names in X-Provider or "provider", else its session's, else
//     the default; 5xx, 429 and time-outs retried with backoff and jitter
//     within -request-timeout, then the next provider); the tool calls the
//     model asks for, their arguments checked against the tool's input
//     schema, run on the MCP servers through the client guard; until the
//     model answers. With "stream": true the turns come as server-sent
//     events, streamed from the provider: content and tool-call deltas
//     reach the client as the provider sends them; retries and fallback
//     hold until a turn's first delta, and a failure after it ends the
//     stream with an error event. The answer has provider_used,
//     duration_ms and a record of each tool call (tool_calls). Each client
//     (its IP, or the header -rate-key) has a token bucket of 10 requests
//     refilled at -rate a second: over it, 429 with Retry-After; a provider's 429 that is not
//     retried is passed on as 429 with its Retry-After. The request's own
//     messages are fitted to the window before the agent reads them
//     (openaifit).
//   - Sessions keep at most 20 messages for one hour after their last
//     message, in memory or in Redis (-redis).
//   - MCP servers over stdio or streamable HTTP (-mcp, repeated), each
//     with a circuit breaker (5 consecutive failures open it for 30 s) and
//     a health check every -health-interval that reconnects (restarts, for
//     stdio) a server that stops answering; a read-only or idempotent
//     tool call that fails on a dead connection reconnects and runs once
//     more.
//   - One JSON log line per tool invocation on standard error: request_id,
//     session_id, tool_call_id, tool, server, started_at, duration_ms,
//     status (success, failure, timeout), tokens_before and tokens_after,
//     and with -log-arguments the arguments, secrets redacted.
//   - GET /healthz: the servers' states and breakers; GET /v1/models: the
//     model and the providers.
//   - A session belongs to the credential that made it (the Authorization
//     header and the TLS client certificate, or none): a request with
//     another credential and its X-Session-ID is answered 404 as for a
//     session that does not exist, and ctxfit's cursors are bound to both.
//     -auth-tokens-env NAME refuses chat requests without Authorization:
//     Bearer and one of the comma-separated tokens of $NAME.
//
// Usage:
//
//	OPENAI_API_KEY=... HUAWEI_MAAS_API_KEY=... agent -listen 127.0.0.1:8090 \
//	    -provider openai=https://api.openai.com/v1 -provider huawei_maas=https://maas.example/v1 \
//	    -model gpt-4o-mini \
//	    -mcp 'files=stdio:npx -y @modelcontextprotocol/server-filesystem /srv/data' \
//	    -mcp 'bookings=http://127.0.0.1:8080/mcp'
//
// ctxfit's settings come from CTXFIT_* variables or the CTXFIT_CONFIG file
// (package config); CTXFIT_REDIS_URL keeps its snapshots in Redis. Unless
// CTXFIT_CURSOR_TTL is set, cursors live as long as a session, so that a
// cleared result stays reachable while its session lives.
//
// The example uses only ctxfit's public API, and internal/redact for its
// logs (as the proxy's --log-arguments).
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
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/internal/redact"
	"github.com/ctxfit/ctxfit/mcpclientfit"
	"github.com/ctxfit/ctxfit/openaifit"
	"github.com/ctxfit/ctxfit/store/redisstore"
)

// settings are the command line's.
type settings struct {
	listen         string
	providers      []providerSpec
	defProvider    string
	retry          retryPolicy
	providerTime   time.Duration // of one attempt
	requestTimeout time.Duration
	model          string
	servers        []serverSpec
	contextTokens  int
	replyTokens    int
	maxSteps       int
	rate           float64
	rateKey        string
	redis          string
	callTimeout    time.Duration
	healthInterval time.Duration
	logArguments   bool
	tokens         []string // from -auth-tokens-env; nil means no check
}

func parseSettings(args []string, getenv func(string) string, stderr io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.listen, "listen", "127.0.0.1:8090", "address of the chat endpoint")
	fs.Func("provider", "an OpenAI-compatible provider, [NAME=]BASE_URL (repeat for several, tried in order on failure); its key is $NAME_API_KEY, NAME upper-cased (default: openai=$OPENAI_BASE_URL or https://api.openai.com/v1, key $OPENAI_API_KEY)", func(v string) error {
		spec, err := parseProviderSpec(v)
		if err == nil {
			s.providers = append(s.providers, spec)
		}
		return err
	})
	fs.StringVar(&s.defProvider, "default-provider", "", "the provider requests go to first unless they or their session prefer another; empty means the first -provider")
	fs.IntVar(&s.retry.retries, "retries", 2, "retries of a provider request that failed with a 5xx, a 429 or a time-out, before the next provider")
	fs.DurationVar(&s.retry.base, "retry-base", 500*time.Millisecond, "delay before the first retry, doubled at each (with jitter); a 429's Retry-After, when longer, is the delay")
	fs.DurationVar(&s.retry.max, "retry-max", 20*time.Second, "longest delay between retries")
	fs.DurationVar(&s.providerTime, "provider-timeout", 2*time.Minute, "time one provider request may take before it is retried; for a streamed one, the wait for its answer and then for each line of its stream")
	fs.DurationVar(&s.requestTimeout, "request-timeout", 5*time.Minute, "time a chat request may take, retries and tool calls included; a retry that would end later is not made")
	fs.StringVar(&s.model, "model", "", "model to ask; empty means the request's")
	fs.Func("mcp", "an MCP server, NAME=stdio:COMMAND ARGS... or NAME=http://HOST/PATH (repeat for several)", func(v string) error {
		spec, err := parseServerSpec(v)
		if err == nil {
			s.servers = append(s.servers, spec)
		}
		return err
	})
	fs.IntVar(&s.contextTokens, "context-tokens", openaifit.DefaultContextTokens, "the model's context window, in tokens")
	fs.IntVar(&s.replyTokens, "reply-tokens", openaifit.DefaultReplyTokens, "tokens kept for the model's reply")
	fs.IntVar(&s.maxSteps, "max-steps", 20, "rounds of tool calls before the agent stops a turn")
	fs.Float64Var(&s.rate, "rate", 1, "requests a second that refill a client's bucket of 10")
	fs.StringVar(&s.rateKey, "rate-key", "", "header whose value keys the rate limit (an API key, a user id); empty means the client's IP")
	fs.StringVar(&s.redis, "redis", getenv("AGENT_REDIS_URL"), "redis://host:port/db keeping the sessions (default $AGENT_REDIS_URL); empty means in memory")
	fs.DurationVar(&s.callTimeout, "call-timeout", 60*time.Second, "time a tool call may take")
	fs.DurationVar(&s.healthInterval, "health-interval", 30*time.Second, "time between health checks of the MCP servers")
	fs.BoolVar(&s.logArguments, "log-arguments", false, "log the arguments of each tool call")
	tokensEnv := fs.String("auth-tokens-env", "", "refuse chat requests (401) without Authorization: Bearer and one of the comma-separated tokens of this environment variable (default: no check; put an authenticating server in front)")
	if err := fs.Parse(args); err != nil {
		return settings{}, err
	}
	if *tokensEnv != "" {
		for _, t := range strings.Split(getenv(*tokensEnv), ",") {
			if t = strings.TrimSpace(t); t != "" {
				s.tokens = append(s.tokens, t)
			}
		}
		if len(s.tokens) == 0 {
			return settings{}, fmt.Errorf("agent: -auth-tokens-env %s: the environment variable is empty; set it to the comma-separated bearer tokens clients may send", *tokensEnv)
		}
	}
	if fs.NArg() > 0 {
		return settings{}, fmt.Errorf("agent: unexpected arguments %q", fs.Args())
	}
	if s.contextTokens <= s.replyTokens {
		return settings{}, fmt.Errorf("agent: -context-tokens %d must be more than -reply-tokens %d", s.contextTokens, s.replyTokens)
	}
	if s.rate <= 0 || s.maxSteps < 1 {
		return settings{}, errors.New("agent: -rate and -max-steps must be positive")
	}
	if s.retry.retries < 0 || s.retry.base <= 0 || s.retry.max < s.retry.base || s.providerTime <= 0 || s.requestTimeout < 0 {
		return settings{}, errors.New("agent: -retries must be >= 0, -retry-base and -provider-timeout positive, -retry-max at least -retry-base, -request-timeout >= 0")
	}
	if len(s.providers) == 0 {
		s.providers = []providerSpec{{name: "openai", url: cmpOr(getenv("OPENAI_BASE_URL"), "https://api.openai.com/v1")}}
	}
	seen := map[string]bool{}
	for _, p := range s.providers {
		if seen[p.name] {
			return settings{}, fmt.Errorf("agent: two providers are named %q: name them, -provider NAME=URL", p.name)
		}
		seen[p.name] = true
	}
	if s.defProvider == "" {
		s.defProvider = s.providers[0].name
	} else if !seen[s.defProvider] {
		return settings{}, fmt.Errorf("agent: -default-provider %q is not among the -provider names", s.defProvider)
	}
	return s, nil
}

// providerSpec is a -provider: its name and base URL.
type providerSpec struct {
	name, url string
}

// parseProviderSpec reads -provider [NAME=]URL; a URL alone is named
// openai.
func parseProviderSpec(v string) (providerSpec, error) {
	name, url := "openai", v
	if n, u, ok := strings.Cut(v, "="); ok && !strings.Contains(n, "://") {
		name, url = n, u
	}
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return providerSpec{}, fmt.Errorf("agent: -provider %q: want [NAME=]http(s)://HOST/v1", v)
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return providerSpec{}, fmt.Errorf("agent: -provider %q: a name has only letters, digits, '_' and '-'", v)
		}
	}
	if name == "" {
		return providerSpec{}, fmt.Errorf("agent: -provider %q: the name is empty", v)
	}
	return providerSpec{name: name, url: url}, nil
}

// keyEnv is the environment variable of a provider's key: NAME_API_KEY,
// NAME upper-cased with '-' as '_'.
func keyEnv(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_API_KEY"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	s, err := parseSettings(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, s, os.Getenv, logger); err != nil {
		logger.Error("agent", "err", err)
		os.Exit(1)
	}
}

// newGuard returns ctxfit's guard with the settings of the CTXFIT_*
// variables and CTXFIT_CONFIG, cursors living as long as a session unless
// CTXFIT_CURSOR_TTL says otherwise, and a function that releases it.
func newGuard(getenv func(string) string, logger *slog.Logger) (*ctxfit.Guard, func() error, error) {
	cfg, err := config.Load("", getenv)
	if err != nil {
		return nil, nil, err
	}
	if getenv("CTXFIT_CURSOR_TTL") == "" && time.Duration(cfg.CursorTTL) < sessionTTL {
		cfg.CursorTTL = ctxfit.Duration(sessionTTL)
	}
	st, err := redisstore.FromURL(cfg.RedisURL, &redisstore.Options{Timeout: time.Duration(cfg.StoreTimeout)}) // nil without CTXFIT_REDIS_URL
	if err != nil {
		return nil, nil, err
	}
	closeStore := func() error {
		if st == nil {
			return nil
		}
		return st.Close()
	}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Store: st, Logger: logger})
	if err != nil {
		return nil, nil, errors.Join(err, closeStore())
	}
	return g, func() error { return errors.Join(g.Close(), closeStore()) }, nil
}

// newAgent wires the agent: the guard, the MCP servers (connected), the
// provider, the sessions. The returned function releases them.
func newAgent(ctx context.Context, s settings, getenv func(string) string, logger *slog.Logger) (*agent, func(), error) {
	g, closeGuard, err := newGuard(getenv, logger)
	if err != nil {
		return nil, nil, err
	}
	var closers []func()
	release := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		_ = closeGuard()
	}
	cg, err := mcpclientfit.New(g, nil)
	if err != nil {
		release()
		return nil, nil, err
	}
	counter, err := budget.Exact(g.Config().Encoding)
	if err != nil {
		release()
		return nil, nil, err
	}
	var sessions SessionStore = newMemorySessions(sessionTTL, time.Now)
	if s.redis != "" {
		rs, err := newRedisSessions(s.redis, sessionTTL)
		if err != nil {
			release()
			return nil, nil, err
		}
		closers = append(closers, func() { _ = rs.Close() })
		sessions = rs
	}
	ps := &providers{def: s.defProvider}
	for _, spec := range s.providers {
		ps.list = append(ps.list, newProvider(spec.name, spec.url, getenv(keyEnv(spec.name)), s.providerTime, s.retry))
	}
	a := &agent{cg: cg, providers: ps, requestTimeout: s.requestTimeout, sessions: sessions,
		logger: logger, counter: counter, model: s.model, contextTokens: s.contextTokens, replyTokens: s.replyTokens,
		maxSteps: s.maxSteps, logArguments: s.logArguments, rate: rate.Limit(s.rate), rateKey: s.rateKey, now: time.Now,
		tokens: s.tokens}
	for _, spec := range s.servers {
		u := newUpstream(spec, cg, s.callTimeout, logger)
		if err := u.connect(ctx); err != nil {
			// A server that is down at start is retried by its health
			// check; the agent serves with the others meanwhile.
			logger.Warn("agent: an MCP server is not available yet", "server", spec.name, "err", err)
		}
		a.servers = append(a.servers, u)
		closers = append(closers, u.close)
	}
	return a, release, nil
}

func run(ctx context.Context, s settings, getenv func(string) string, logger *slog.Logger) error {
	a, release, err := newAgent(ctx, s, getenv, logger)
	if err != nil {
		return err
	}
	defer release()
	for _, u := range a.servers {
		go u.watch(ctx, s.healthInterval)
	}
	ln, err := net.Listen("tcp", s.listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: a.routes(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	names := make([]string, len(s.servers))
	for i, spec := range s.servers {
		names[i] = spec.name
	}
	urls := make([]string, len(s.providers))
	for i, p := range s.providers {
		urls[i] = p.name + "=" + redact.Endpoint(p.url)
	}
	logger.Info("agent: serving", "url", "http://"+ln.Addr().String()+"/v1", "providers", strings.Join(urls, ","), "default_provider", s.defProvider, "servers", strings.Join(names, ","))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
