package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sony/gobreaker/v2"

	"github.com/ctxfit/ctxfit/internal/redact"
	"github.com/ctxfit/ctxfit/internal/schemaloop"
	"github.com/ctxfit/ctxfit/mcpclientfit"
)

// Circuit breaker of an MCP server: 5 consecutive failures open it for
// 30 s.
const (
	breakerFailures = 5
	breakerOpen     = 30 * time.Second
)

// Connection states of an MCP server.
const (
	stateConnecting   = "connecting"
	stateConnected    = "connected"
	stateDegraded     = "degraded"
	stateDisconnected = "disconnected"
)

// serverSpec says how to reach an MCP server: -mcp NAME=stdio:COMMAND ARGS...
// or -mcp NAME=http://HOST/PATH (streamable HTTP).
type serverSpec struct {
	name    string
	command []string // stdio
	url     string   // streamable HTTP
}

func parseServerSpec(s string) (serverSpec, error) {
	name, target, ok := strings.Cut(s, "=")
	if !ok || name == "" || target == "" {
		return serverSpec{}, fmt.Errorf("agent: -mcp %q: want NAME=stdio:COMMAND ARGS... or NAME=http://HOST/PATH", s)
	}
	switch {
	case strings.HasPrefix(target, "stdio:"):
		cmd := strings.Fields(strings.TrimPrefix(target, "stdio:"))
		if len(cmd) == 0 {
			return serverSpec{}, fmt.Errorf("agent: -mcp %q: no command after stdio:", s)
		}
		return serverSpec{name: name, command: cmd}, nil
	case strings.HasPrefix(target, "http://"), strings.HasPrefix(target, "https://"):
		return serverSpec{name: name, url: target}, nil
	}
	return serverSpec{}, fmt.Errorf("agent: -mcp %q: the target must start with stdio:, http:// or https://", s)
}

func (s serverSpec) transport() string {
	if s.url != "" {
		return "http"
	}
	return "stdio"
}

// upstream is one MCP server the agent uses: its session (through the
// client-side guard), its tools, its circuit breaker and its health.
type upstream struct {
	spec        serverSpec
	cg          *mcpclientfit.Guard
	logger      *slog.Logger
	callTimeout time.Duration
	breaker     *gobreaker.CircuitBreaker[*mcp.CallToolResult]

	reconnecting sync.Mutex // one reconnection at a time

	mu         sync.Mutex
	session    *mcp.ClientSession
	proc       *os.Process // the server's process, for stdio
	state      string
	tools      []*mcp.Tool
	schemas    map[string]*jsonschema.Resolved // the tools' input schemas
	rawSchemas map[string]string
	lastHealth time.Time
	lastErr    string
}

func newUpstream(spec serverSpec, cg *mcpclientfit.Guard, callTimeout time.Duration, logger *slog.Logger) *upstream {
	u := &upstream{spec: spec, cg: cg, logger: logger, callTimeout: callTimeout, state: stateConnecting}
	u.breaker = gobreaker.NewCircuitBreaker[*mcp.CallToolResult](gobreaker.Settings{
		Name:        spec.name,
		MaxRequests: 1,
		Timeout:     breakerOpen,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= breakerFailures },
		IsSuccessful: func(err error) bool {
			return err == nil || answered(err) || errors.Is(err, context.Canceled) // the server answered, or the caller left
		},
		OnStateChange: func(name string, from, to gobreaker.State) {
			logger.Warn("agent: circuit breaker", "server", name, "from", from.String(), "to", to.String())
		},
	})
	return u
}

// connect connects to the server (starting it, for stdio) and lists its
// tools. The session's client has the guard's middleware.
func (u *upstream) connect(ctx context.Context) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "ctxfit-agent", Version: "1.0.0"}, nil)
	u.cg.Install(client)
	var t mcp.Transport
	var cmd *exec.Cmd
	if u.spec.url != "" {
		t = &mcp.StreamableClientTransport{Endpoint: u.spec.url, HTTPClient: &http.Client{}}
	} else {
		cmd = exec.Command(u.spec.command[0], u.spec.command[1:]...)
		cmd.Stderr = os.Stderr
		t = &mcp.CommandTransport{Command: cmd}
	}
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		u.setState(stateDisconnected, err)
		return fmt.Errorf("agent: connecting to %s: %w", u.spec.name, err)
	}
	var tools []*mcp.Tool
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			_ = session.Close()
			u.setState(stateDisconnected, err)
			return fmt.Errorf("agent: listing the tools of %s: %w", u.spec.name, err)
		}
		tools = append(tools, tool)
	}
	schemas, raw := resolveSchemas(tools)
	u.mu.Lock()
	old := u.session
	u.session, u.tools, u.state, u.lastHealth, u.lastErr = session, tools, stateConnected, time.Now(), ""
	u.schemas, u.rawSchemas = schemas, raw
	if cmd != nil {
		u.proc = cmd.Process
	}
	u.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	u.logger.Info("agent: connected", "server", u.spec.name, "transport", u.spec.transport(), "tools", len(tools))
	return nil
}

func (u *upstream) setState(state string, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.state = state
	if err != nil {
		u.lastErr = err.Error()
	}
}

// answered reports whether err is a JSON-RPC error the server sent (bad
// arguments, an unknown tool): the server works. The SDK's own codes from
// -32001 to -32005 (a transport that refused the request, a closing
// connection) are failures.
func answered(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && (rpc.Code > -32001 || rpc.Code < -32099)
}

// errUnavailable: the server is not connected.
var errUnavailable = errors.New("the MCP server is not connected")

// call calls a tool through the circuit breaker, within the call timeout.
// A call that fails because the connection died (the server crashed) is
// made once more on a new connection when the tool is read-only or
// idempotent (its annotations say so); any other tool's failure is the
// model's to handle, since the tool may have run.
func (u *upstream) call(ctx context.Context, name string, args []byte) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, u.callTimeout)
	defer cancel()
	return u.breaker.Execute(func() (*mcp.CallToolResult, error) {
		res, err := u.callOnce(ctx, name, args)
		if err == nil || ctx.Err() != nil || !deadConnection(err) || !u.retriesOnDeadConnection(name) {
			return res, err
		}
		u.logger.Warn("agent: a tool call failed on a dead connection; reconnecting and calling again", "server", u.spec.name, "tool", name, "err", err)
		u.setState(stateDegraded, err)
		if cerr := u.reconnect(ctx, u.currentSession()); cerr != nil {
			return nil, errors.Join(err, cerr)
		}
		return u.callOnce(ctx, name, args)
	})
}

// currentSession returns the session of u now.
func (u *upstream) currentSession() *mcp.ClientSession {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.session
}

func (u *upstream) callOnce(ctx context.Context, name string, args []byte) (*mcp.CallToolResult, error) {
	s := u.currentSession()
	if s == nil {
		return nil, errUnavailable
	}
	return s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: rawArgs(args)})
}

// reconnect connects again, unless another call did since the session
// dead was seen dying.
func (u *upstream) reconnect(ctx context.Context, dead *mcp.ClientSession) error {
	u.reconnecting.Lock()
	defer u.reconnecting.Unlock()
	if s := u.currentSession(); s != nil && s != dead {
		return nil
	}
	return u.connect(ctx)
}

// check pings the server; when it does not answer, the server is degraded
// and the agent connects to it again (for stdio: starts it again).
func (u *upstream) check(ctx context.Context) {
	u.mu.Lock()
	s := u.session
	u.mu.Unlock()
	var err error
	if s == nil {
		err = errUnavailable
	} else {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = s.Ping(pctx, nil)
		cancel()
	}
	if err == nil {
		u.mu.Lock()
		u.state, u.lastHealth, u.lastErr = stateConnected, time.Now(), ""
		u.mu.Unlock()
		return
	}
	u.logger.Warn("agent: health check failed", "server", u.spec.name, "err", err)
	u.setState(stateDegraded, err)
	if err := u.reconnect(ctx, s); err != nil {
		u.logger.Warn("agent: reconnecting failed", "server", u.spec.name, "err", err)
	}
}

// watch checks the server every interval until ctx ends.
func (u *upstream) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			u.check(ctx)
		}
	}
}

func (u *upstream) close() {
	u.mu.Lock()
	s := u.session
	u.session, u.state = nil, stateDisconnected
	u.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
}

// serverHealth is what GET /healthz says of a server.
type serverHealth struct {
	Name            string    `json:"name"`
	Transport       string    `json:"transport"`
	State           string    `json:"state"`
	Tools           int       `json:"tools"`
	Breaker         string    `json:"breaker"`
	LastHealthCheck time.Time `json:"last_health_check"`
	Error           string    `json:"error,omitempty"`
}

func (u *upstream) health() serverHealth {
	u.mu.Lock()
	defer u.mu.Unlock()
	return serverHealth{Name: u.spec.name, Transport: u.spec.transport(), State: u.state, Tools: len(u.tools),
		Breaker: u.breaker.State().String(), LastHealthCheck: u.lastHealth, Error: redactURLIn(u.lastErr, u.spec.url)}
}

// redactURLIn returns text with the user, password and query of the URL
// raw replaced by "redacted" wherever they appear: a connection error
// quotes the URL, and any of them may be a credential.
func redactURLIn(text, raw string) string {
	u, err := url.Parse(raw)
	if raw == "" || err != nil {
		return text
	}
	var secrets []string
	if u.User != nil {
		secrets = append(secrets, u.User.String())
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p)
		}
	}
	if u.RawQuery != "" {
		secrets = append(secrets, u.RawQuery)
	}
	for _, s := range secrets {
		text = strings.ReplaceAll(text, s, "redacted")
	}
	return text
}

func (u *upstream) toolList() []*mcp.Tool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tools
}

// invalidArgumentsError: a tool call's arguments do not match the tool's
// input schema (seed 001's INVALID_ARGUMENTS); the call is not made.
type invalidArgumentsError struct {
	tool   string
	reason string
	schema string
}

func (e *invalidArgumentsError) Error() string {
	return fmt.Sprintf("INVALID_ARGUMENTS: the arguments of %s do not match its input schema: %s. Call %s again with arguments that match this schema: %s",
		e.tool, e.reason, e.tool, e.schema)
}

// checkArguments checks args against the input schema of the tool name:
// an *invalidArgumentsError when they do not match it. A tool without a
// schema, or with one the validator cannot read, accepts any arguments
// (the server checks them).
func (u *upstream) checkArguments(name string, args []byte) error {
	u.mu.Lock()
	rs, schema := u.schemas[name], u.rawSchemas[name]
	u.mu.Unlock()
	if rs == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return &invalidArgumentsError{tool: name, reason: "they are not JSON", schema: schema}
	}
	if err := rs.Validate(v); err != nil {
		return &invalidArgumentsError{tool: name, reason: redact.Bound(err.Error(), 300), schema: redact.Bound(schema, 2000)}
	}
	return nil
}

// resolveSchemas returns the input schemas of tools the validator can
// read, resolved, and their JSON.
func resolveSchemas(tools []*mcp.Tool) (map[string]*jsonschema.Resolved, map[string]string) {
	resolved, raw := map[string]*jsonschema.Resolved{}, map[string]string{}
	for _, t := range tools {
		b, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			continue
		}
		var s jsonschema.Schema
		var m map[string]any
		if json.Unmarshal(b, &s) != nil || json.Unmarshal(b, &m) != nil {
			continue
		}
		// A reference that loops without reading a value would make the
		// validator recurse until the stack overflows: such a tool's
		// arguments go unchecked, as an unreadable schema's do.
		if schemaloop.Check(m) != nil {
			continue
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			continue
		}
		resolved[t.Name], raw[t.Name] = rs, string(b)
	}
	return resolved, raw
}

// retriesOnDeadConnection reports whether a call of the tool name may be
// made again after its connection died: the tool says it is read-only or
// idempotent (its annotations), so that running it twice does no harm.
func (u *upstream) retriesOnDeadConnection(name string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, t := range u.tools {
		if t.Name == name {
			return t.Annotations != nil && (t.Annotations.ReadOnlyHint || t.Annotations.IdempotentHint)
		}
	}
	return false
}

// deadConnection reports whether err says the session's connection is
// gone (the server crashed, the stream broke).
func deadConnection(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, errUnavailable) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}
