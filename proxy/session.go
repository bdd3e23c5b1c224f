package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/store"
)

// State is the state of a session's upstream connection.
type State string

// States of an upstream connection.
const (
	StateConnecting   State = "connecting"   // starting, or reconnecting after a failure
	StateConnected    State = "connected"    // initialized, and the last ping was answered
	StateDegraded     State = "degraded"     // initialized, but the last ping failed or timed out
	StateDisconnected State = "disconnected" // not connected; the session ended or waits to reconnect
)

// pending is a request sent to the upstream and not yet answered.
type pending struct {
	clientID jsonrpc.ID // the client's ID; invalid for the proxy's own requests
	method   string
	params   json.RawMessage
	tool     string          // tools/call: the tool
	uri      string          // resources/read
	args     json.RawMessage // tasks/result: the arguments of the task's tool call
	start    time.Time
	reply    chan *jsonrpc.Response // the proxy's own requests
	timer    *time.Timer
	done     bool // answered (a timeout answered it, say)
}

// session relays one downstream session to its own upstream session.
type session struct {
	p       *Proxy
	down    mcp.Connection
	subject string // the session ID ("" over stdio), for logs
	owner   string // the principal of its client ("" over stdio)
	// bound is what the session's cursors and links are bound to: the
	// principal of its client and its ID, or subject when the connection
	// has no principal (stdio).
	bound  string
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	up         *upConn
	state      State
	initAt     time.Time // when the upstream last initialized
	lastCheck  time.Time // when the upstream last answered a ping
	lastSeen   time.Time // when the client last sent a message
	initParams json.RawMessage
	initResult json.RawMessage
	notified   bool                // the client sent notifications/initialized
	pend       map[string]*pending // by upstream ID
	byClient   map[string]string   // client ID -> upstream ID
	local      map[string]context.CancelFunc
	lim        *rate.Limiter
	failures   int
	openUntil  time.Time
	reconnect  chan struct{}
	conns      map[*upConn]bool    // every upstream connection made, to stop at the end
	tasks      map[string]*pending // task ID -> the tools/call that created it
	joined     bool                // shares an upstream another session initialized
	cat        *mcpcore.Catalog    // the upstream's whole tool list, once read
	found      []string            // tools the session found, latest first
}

func newSession(p *Proxy, down mcp.Connection, owner string) *session {
	ctx, cancel := context.WithCancel(context.Background())
	// Cursors are bound to the session ID and, over HTTP, to the principal
	// that made the session, so that another credential presenting the
	// session's ID and cursors is refused. A connection without either
	// (stdio: one client per process) binds them to "", as mcpfit does, so
	// that proxies sharing a secret and a store honour each other's cursors.
	bound := down.SessionID()
	if owner != "" {
		bound = owner + " " + bound
	}
	s := &session{p: p, down: down, subject: down.SessionID(), owner: owner, bound: bound, ctx: ctx, cancel: cancel,
		state: StateDisconnected, pend: map[string]*pending{}, byClient: map[string]string{},
		local: map[string]context.CancelFunc{}, conns: map[*upConn]bool{}, tasks: map[string]*pending{}, reconnect: make(chan struct{}, 1), lastSeen: p.o.Now()}
	if p.o.Rate > 0 {
		s.lim = rate.NewLimiter(p.o.Rate, p.o.Burst)
	}
	return s
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// ownPrefix starts the IDs of requests the proxy itself sends upstream.
const ownPrefix = "ctxfit-proxy-"

// end ends the session.
func (s *session) end() { s.cancel() }

// run relays until the client goes away or the session ends.
func (s *session) run(ctx context.Context) error {
	defer s.p.forget(s)
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	readErr := make(chan error, 1)
	go func() {
		for {
			msg, err := s.down.Read(s.ctx)
			if err != nil {
				readErr <- err
				return
			}
			s.fromClient(msg)
		}
	}()
	go s.supervise()
	var err error
	select {
	case err = <-readErr:
	case <-s.ctx.Done():
	}
	s.cancel()
	s.down.Close()
	s.mu.Lock()
	s.up = nil
	s.state = StateDisconnected
	for _, cancel := range s.local {
		cancel()
	}
	conns := s.conns
	s.conns = map[*upConn]bool{}
	s.mu.Unlock()
	// Every upstream this session started is stopped (and a process
	// reaped) before run returns, whoever noticed the end first.
	var wg sync.WaitGroup
	for up := range conns {
		wg.Go(up.stop)
	}
	wg.Wait()
	if errors.Is(err, io.EOF) || err == nil || s.ctx.Err() != nil {
		return nil
	}
	return err
}

// toClient writes msg to the client.
func (s *session) toClient(msg jsonrpc.Message) {
	if err := s.down.Write(s.ctx, msg); err != nil && s.ctx.Err() == nil {
		s.p.logger.Debug("proxy: writing to the client failed", "err", err)
	}
}

func (s *session) replyError(id jsonrpc.ID, code int64, msg string) {
	s.toClient(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}})
}

// fromClient handles one message of the client.
func (s *session) fromClient(msg jsonrpc.Message) {
	s.mu.Lock()
	s.lastSeen = s.p.o.Now()
	s.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		// The answer to a request of the upstream's (sampling, elicitation,
		// roots/list): the upstream's own ID, back as it came.
		s.toUpstream(m)
	case *jsonrpc.Request:
		if !m.IsCall() {
			s.notification(m)
			return
		}
		s.request(m)
	}
}

func (s *session) notification(m *jsonrpc.Request) {
	switch m.Method {
	case "notifications/initialized":
		s.mu.Lock()
		s.notified = true
		joined := s.joined
		s.mu.Unlock()
		if joined {
			return // the shared upstream was initialized by its first client
		}
	case "notifications/cancelled":
		var p struct {
			RequestID any    `json:"requestId"`
			Reason    string `json:"reason,omitempty"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			break
		}
		cid, err := jsonrpc.MakeID(p.RequestID)
		if err != nil {
			break
		}
		s.mu.Lock()
		upID, ok := s.byClient[idKey(cid)]
		cancel := s.local[idKey(cid)]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
			return
		}
		if !ok {
			return // already answered
		}
		params := map[string]any{"requestId": upstreamIDValue(upID)}
		if p.Reason != "" {
			params["reason"] = p.Reason
		}
		s.toUpstream(&jsonrpc.Request{Method: m.Method, Params: marshalUnescaped(params)})
		return
	}
	s.toUpstream(m)
}

// upstreamIDValue is the JSON value of an upstream request ID key.
func upstreamIDValue(key string) any {
	if n, ok := strings.CutPrefix(key, "int64:"); ok {
		v, _ := strconv.ParseInt(n, 10, 64)
		return v
	}
	return strings.TrimPrefix(key, "string:")
}

func (s *session) request(m *jsonrpc.Request) {
	if id, ok := m.ID.Raw().(string); ok && strings.HasPrefix(id, ownPrefix) {
		s.replyError(m.ID, jsonrpc.CodeInvalidRequest, "proxy: request IDs starting with "+ownPrefix+" are the proxy's own")
		return
	}
	s.mu.Lock()
	fresh := s.initParams == nil
	s.mu.Unlock()
	if fresh && m.Method != "initialize" {
		s.beforeInitialize(m)
		return
	}
	switch m.Method {
	case "initialize":
		s.initialize(m)
		return
	case "tools/call":
		s.callTool(m)
		return
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if strings.HasPrefix(p.URI, resourcePrefix) {
			s.localRequest(m, func(ctx context.Context) { s.readOwn(ctx, m, p.URI) })
			return
		}
		s.forward(m, &pending{uri: p.URI})
		return
	case "tasks/result":
		// The result of a task-augmented tools/call is shaped when it is
		// fetched.
		var p struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.mu.Lock()
		call := s.tasks[p.TaskID]
		s.mu.Unlock()
		if call != nil {
			s.forward(m, &pending{tool: call.tool, args: call.args})
			return
		}
	}
	s.forward(m, &pending{})
}

// beforeInitialize answers a request that comes before initialize: ping
// is answered, server/discover (the stateless protocol of SEP-2575, which
// the proxy does not relay: each of its sessions is one upstream session)
// is not found, so that the client falls back to initialize, and anything
// else is refused.
func (s *session) beforeInitialize(m *jsonrpc.Request) {
	switch m.Method {
	case "ping":
		s.toClient(&jsonrpc.Response{ID: m.ID, Result: json.RawMessage(`{}`)})
	case "server/discover":
		s.replyError(m.ID, jsonrpc.CodeMethodNotFound, "ctxfit proxy: server/discover is not supported; initialize a session")
	default:
		s.replyError(m.ID, jsonrpc.CodeInvalidRequest, "ctxfit proxy: the session is not initialized")
	}
}

// forward sends a client request upstream under a new ID.
func (s *session) forward(m *jsonrpc.Request, pd *pending) {
	pd.clientID, pd.method, pd.params, pd.start = m.ID, m.Method, m.Params, s.p.o.Now()
	s.mu.Lock()
	up := s.up
	if up == nil || (s.initResult == nil && !s.initAt.IsZero()) { // none, or reconnecting
		s.mu.Unlock()
		s.unavailable(pd)
		return
	}
	upID := mustID(float64(s.p.seq.Add(1)))
	key := idKey(upID)
	s.pend[key] = pd
	s.byClient[idKey(m.ID)] = key
	if pd.method == "tools/call" {
		pd.timer = time.AfterFunc(s.p.o.CallTimeout, func() { s.timeout(key) })
	}
	s.mu.Unlock()
	if err := up.Write(s.ctx, &jsonrpc.Request{ID: upID, Method: m.Method, Params: m.Params}); err != nil {
		s.upstreamLost(up, err)
	}
}

// toUpstream writes a notification or a response to the upstream; it is
// dropped while there is none.
func (s *session) toUpstream(msg jsonrpc.Message) {
	s.mu.Lock()
	up := s.up
	s.mu.Unlock()
	if up == nil {
		return
	}
	if err := up.Write(s.ctx, msg); err != nil {
		s.upstreamLost(up, err)
	}
}

// take removes and returns the pending request of key.
func (s *session) take(key string) *pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	pd := s.pend[key]
	if pd == nil || pd.done {
		delete(s.pend, key)
		return nil
	}
	pd.done = true
	delete(s.pend, key)
	if pd.clientID.IsValid() {
		delete(s.byClient, idKey(pd.clientID))
	}
	if pd.timer != nil {
		pd.timer.Stop()
	}
	return pd
}

// timeout answers a tools/call the upstream did not answer in time, and
// tells the upstream to cancel it.
func (s *session) timeout(key string) {
	pd := s.take(key)
	if pd == nil {
		return
	}
	s.toUpstream(&jsonrpc.Request{Method: "notifications/cancelled",
		Params: marshalUnescaped(map[string]any{"requestId": upstreamIDValue(key), "reason": "ctxfit proxy: call timeout"})})
	s.failed()
	res := errorResult(StatusTimeout, fmt.Sprintf(
		"The upstream server did not answer the call of %s within %s; retry later, or call it with arguments that ask for less.",
		pd.tool, s.p.o.CallTimeout), 0)
	s.p.logCall(s, pd, StatusTimeout, res, nil)
	s.toClient(&jsonrpc.Response{ID: pd.clientID, Result: res})
}

// unavailable answers a request while no upstream is connected.
func (s *session) unavailable(pd *pending) {
	if pd.method == "tools/call" {
		res := errorResult(StatusRestarting, "The upstream server is restarting; retry in a few seconds.", 3)
		s.p.logCall(s, pd, StatusRestarting, res, nil)
		s.toClient(&jsonrpc.Response{ID: pd.clientID, Result: res})
		return
	}
	s.replyError(pd.clientID, jsonrpc.CodeInternalError, "ctxfit proxy: the upstream server is not connected; retry in a few seconds")
}

// call sends a request of the proxy's own upstream and waits for its
// answer.
func (s *session) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	up := s.up
	if up == nil {
		s.mu.Unlock()
		return nil, errRestarting
	}
	upID := mustID(ownPrefix + strconv.FormatInt(s.p.seq.Add(1), 10))
	key := idKey(upID)
	pd := &pending{method: method, reply: make(chan *jsonrpc.Response, 1), start: s.p.o.Now()}
	s.pend[key] = pd
	s.mu.Unlock()
	raw, ok := params.(json.RawMessage)
	if !ok {
		raw = marshalUnescaped(params)
	}
	if err := up.Write(ctx, &jsonrpc.Request{ID: upID, Method: method, Params: raw}); err != nil {
		s.take(key)
		s.upstreamLost(up, err)
		return nil, err
	}
	select {
	case resp := <-pd.reply:
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-ctx.Done():
		s.take(key)
		s.toUpstream(&jsonrpc.Request{Method: "notifications/cancelled",
			Params: marshalUnescaped(map[string]any{"requestId": upstreamIDValue(key)})})
		return nil, ctx.Err()
	}
}

var errRestarting = errors.New("proxy: the upstream server is not connected")

// fromUpstream handles one message of the upstream.
func (s *session) fromUpstream(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		// Requests (sampling, elicitation, roots/list, ping) and
		// notifications go to the client as they are.
		s.toClient(m)
	case *jsonrpc.Response:
		key := idKey(m.ID)
		pd := s.take(key)
		if pd == nil {
			return // answered already (timed out), or not ours
		}
		if pd.reply != nil {
			pd.reply <- m
			return
		}
		s.answer(pd, m)
	}
}

// answer sends the client the upstream's answer to its request, through
// the interceptions.
func (s *session) answer(pd *pending, m *jsonrpc.Response) {
	out := &jsonrpc.Response{ID: pd.clientID, Result: m.Result, Error: m.Error}
	if m.Error != nil && pd.method == "initialize" && s.p.o.SharedUpstream {
		s.p.shared.initialized(nil)
	}
	if m.Error != nil {
		if pd.method == "tools/call" {
			s.p.logCall(s, pd, StatusError, nil, m.Error)
		}
		if call, ok := s.errorCall(pd); ok {
			// The error goes toward a model too: through the egress gate.
			go func() {
				out.Error = s.gateError(call, m.Error)
				s.toClient(out)
			}()
			return
		}
		s.toClient(out)
		return
	}
	switch pd.method {
	case "initialize":
		if s.p.o.SharedUpstream {
			s.p.shared.initialized(m.Result)
		}
		out.Result = s.p.mergeInitialize(m.Result)
		s.mu.Lock()
		s.initResult = m.Result
		s.initAt, s.lastCheck = s.p.o.Now(), s.p.o.Now()
		s.state = StateConnected
		s.mu.Unlock()
	case "tools/list":
		if cursorOf(pd.params) != "" {
			out.Result = s.p.listTools(pd.params, m.Result)
			break
		}
		// The whole list decides what the first page is; reading the
		// other pages must not hold up the upstream's messages.
		go func() {
			out.Result = s.listFirst(m.Result)
			s.toClient(out)
		}()
		return
	case "tools/call", "resources/read", "prompts/get", "tasks/result", "completion/complete":
		// Shaping takes time: the next messages must not wait for it.
		go func() {
			out.Result, out.Error = s.shape(pd, m.Result)
			s.toClient(out)
		}()
		return
	}
	s.toClient(out)
}

// readUpstream relays what up sends until it fails.
func (s *session) readUpstream(up *upConn) {
	for {
		msg, err := up.Read(s.ctx)
		if err != nil {
			s.upstreamLost(up, err)
			return
		}
		s.fromUpstream(msg)
	}
}

// upstreamLost handles the loss of up: the requests in flight are
// answered with errors, and the supervisor reconnects.
func (s *session) upstreamLost(up *upConn, err error) {
	s.mu.Lock()
	if s.up != up {
		s.mu.Unlock()
		return
	}
	s.up = nil
	s.state = StateDisconnected
	var lost []*pending
	for key, pd := range s.pend {
		if !pd.done {
			pd.done = true
			if pd.timer != nil {
				pd.timer.Stop()
			}
			lost = append(lost, pd)
		}
		delete(s.pend, key)
	}
	clear(s.byClient)
	s.mu.Unlock()
	go func() {
		up.stop()
		s.mu.Lock()
		delete(s.conns, up)
		s.mu.Unlock()
	}()
	if s.ctx.Err() != nil {
		return
	}
	s.p.logger.Warn("proxy: the upstream connection was lost", "session", s.subject, "err", err)
	for _, pd := range lost {
		switch {
		case pd.reply != nil:
			pd.reply <- &jsonrpc.Response{Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "proxy: the upstream connection broke"}}
		case pd.method == "tools/call":
			s.failed()
			res := errorResult(StatusUpstreamFailure, fmt.Sprintf(
				"The upstream server's connection broke during the call of %s; ctxfit is reconnecting; retry in a few seconds.", pd.tool), 3)
			s.p.logCall(s, pd, StatusUpstreamFailure, res, nil)
			s.toClient(&jsonrpc.Response{ID: pd.clientID, Result: res})
		default:
			s.replyError(pd.clientID, jsonrpc.CodeInternalError, "ctxfit proxy: the upstream server's connection broke during the request; retry in a few seconds")
		}
	}
	select {
	case s.reconnect <- struct{}{}:
	default:
	}
}

// onBad handles a message from a stdio upstream that could not be read: a
// request it answers gets an error that says why.
func (s *session) onBad(id jsonrpc.ID, err error) {
	s.p.logger.Error("proxy: a message from the upstream was dropped", "session", s.subject, "err", err)
	if !id.IsValid() {
		return
	}
	s.fromUpstream(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: "ctxfit proxy: the upstream's answer could not be read: " + err.Error()}})
}

// localRequest runs a request the proxy answers itself, cancellable by the
// client.
func (s *session) localRequest(m *jsonrpc.Request, run func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(store.WithSubject(context.WithValue(s.ctx, sessionKey{}, s), s.bound))
	key := idKey(m.ID)
	s.mu.Lock()
	s.local[key] = cancel
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.local, key)
			s.mu.Unlock()
			cancel()
		}()
		run(ctx)
	}()
}

// failed counts a failed tool call towards the breaker.
func (s *session) failed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	if s.failures >= s.p.o.BreakerFailures {
		s.openUntil = s.p.o.Now().Add(s.p.o.BreakerOpen)
		s.failures = 0
		s.p.logger.Warn("proxy: circuit breaker open", "session", s.subject, "for", s.p.o.BreakerOpen.String())
	}
}

// admit decides whether a tools/call may go to the upstream now: the rate
// limit and the breaker; otherwise it returns the error result to answer.
func (s *session) admit() (status string, res json.RawMessage) {
	now := s.p.o.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lim != nil && !s.lim.AllowN(now, 1) {
		r := s.lim.ReserveN(now, 1)
		wait := r.DelayFrom(now)
		r.CancelAt(now)
		secs := max(1, int(math.Ceil(wait.Seconds())))
		return StatusRateLimited, errorResult(StatusRateLimited, fmt.Sprintf(
			"Too many tool calls: this client may make %g per second (bursts of %d); retry in %d seconds.",
			float64(s.p.o.Rate), s.p.o.Burst, secs), secs)
	}
	if now.Before(s.openUntil) {
		wait := max(1, int(math.Ceil(s.openUntil.Sub(now).Seconds())))
		return StatusCircuitOpen, errorResult(StatusCircuitOpen, fmt.Sprintf(
			"The upstream server failed %d times in a row, so ctxfit stopped forwarding calls to it for %s; retry in %d seconds.",
			s.p.o.BreakerFailures, s.p.o.BreakerOpen, wait), wait)
	}
	return "", nil
}

func (s *session) succeeded() {
	s.mu.Lock()
	s.failures = 0
	s.mu.Unlock()
}

// mustID makes a request ID of a float64 or a string.
func mustID(v any) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(v)
	return id
}
