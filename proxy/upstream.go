package proxy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// initialize handles the client's initialize: it connects the session's
// upstream and forwards the request; the answer's capabilities are
// merged with ctxfit's on the way back.
func (s *session) initialize(m *jsonrpc.Request) {
	s.mu.Lock()
	if s.up != nil {
		s.mu.Unlock()
		s.replyError(m.ID, jsonrpc.CodeInvalidRequest, "ctxfit proxy: the session is already initialized")
		return
	}
	s.initParams = m.Params
	s.state = StateConnecting
	s.mu.Unlock()
	if s.p.o.SharedUpstream {
		s.joinShared(m)
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.p.o.StartTimeout)
	defer cancel()
	up, err := s.p.dial(ctx, s.onBad)
	if err != nil {
		s.mu.Lock()
		s.state = StateDisconnected
		s.mu.Unlock()
		s.p.logger.Error("proxy: connecting to the upstream failed", "session", s.subject, "err", err)
		s.replyError(m.ID, jsonrpc.CodeInternalError, "ctxfit proxy: the upstream server could not be started: "+err.Error())
		return
	}
	s.mu.Lock()
	if s.ctx.Err() != nil { // the session ended meanwhile
		s.mu.Unlock()
		up.stop()
		return
	}
	s.up = up
	s.conns[up] = true
	s.mu.Unlock()
	go s.readUpstream(up)
	s.forwardInit(m, up)
}

// forwardInit sends the client's initialize to up; the supervisor answers
// it with an error if up does not answer within StartTimeout.
func (s *session) forwardInit(m *jsonrpc.Request, up *upConn) {
	pd := &pending{clientID: m.ID, method: m.Method, params: m.Params, start: s.p.o.Now()}
	upID := mustID(float64(s.p.seq.Add(1)))
	s.mu.Lock()
	key := idKey(upID)
	s.pend[key] = pd
	pd.timer = time.AfterFunc(s.p.o.StartTimeout, func() {
		if pd := s.take(key); pd != nil {
			s.replyError(pd.clientID, jsonrpc.CodeInternalError, "ctxfit proxy: the upstream server did not answer initialize in time")
		}
	})
	s.mu.Unlock()
	if err := up.Write(s.ctx, &jsonrpc.Request{ID: upID, Method: m.Method, Params: m.Params}); err != nil {
		s.upstreamLost(up, err)
	}
}

// supervise reconnects the upstream when it is lost, pings it on an
// interval, and ends an idle HTTP session, until the session ends.
func (s *session) supervise() {
	var tick <-chan time.Time
	every := s.p.o.PingInterval
	if s.p.o.IdleTimeout > 0 && s.down.SessionID() != "" && (every <= 0 || s.p.o.IdleTimeout/2 < every) {
		every = s.p.o.IdleTimeout / 2
	}
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	attempt := 0
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick:
			if s.idle() {
				s.p.logger.Info("proxy: ending an idle session", "session", s.subject)
				s.end()
				return
			}
			if s.p.o.PingInterval > 0 {
				s.ping()
			}
		case <-s.reconnect:
			if s.p.o.SharedUpstream {
				// A shared upstream is not reconnected under its clients:
				// they end, and reconnect themselves.
				s.end()
				return
			}
			s.mu.Lock()
			up := s.up
			since := s.initAt
			s.mu.Unlock()
			if up != nil {
				continue
			}
			if !since.IsZero() && s.p.o.Now().Sub(since) >= s.p.o.HealthyAfter {
				attempt = 0
			}
			if !s.reconnectOnce(attempt) {
				attempt++
				select {
				case s.reconnect <- struct{}{}:
				default:
				}
				continue
			}
			attempt = 0
		}
	}
}

// idle reports whether an HTTP session has been idle past IdleTimeout.
func (s *session) idle() bool {
	if s.p.o.IdleTimeout <= 0 || s.down.SessionID() == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.o.Now().Sub(s.lastSeen) >= s.p.o.IdleTimeout && len(s.pend) == 0 && len(s.local) == 0
}

// ping asks the upstream whether it is there.
func (s *session) ping() {
	s.mu.Lock()
	ready := s.up != nil && s.initResult != nil
	s.mu.Unlock()
	if !ready {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, min(s.p.o.PingInterval, 10*time.Second))
	defer cancel()
	_, err := s.call(ctx, "ping", json.RawMessage(`{}`))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up == nil {
		return
	}
	if err != nil {
		if s.state != StateDegraded {
			s.p.logger.Warn("proxy: the upstream did not answer a ping", "session", s.subject, "err", err)
		}
		s.state = StateDegraded
		return
	}
	s.state, s.lastCheck = StateConnected, s.p.o.Now()
}

// reconnectOnce waits out the backoff of attempt, connects a new upstream
// session and initializes it as the client did; it reports success.
func (s *session) reconnectOnce(attempt int) bool {
	delay := backoff(attempt, s.p.o.BackoffMin, s.p.o.BackoffMax, s.p.o.Rand())
	select {
	case <-s.ctx.Done():
		return true
	case <-time.After(delay):
	}
	s.mu.Lock()
	params, notified := s.initParams, s.notified
	s.state = StateConnecting
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.ctx, s.p.o.StartTimeout)
	defer cancel()
	up, err := s.p.dial(ctx, s.onBad)
	if err != nil {
		s.p.logger.Error("proxy: reconnecting the upstream failed", "session", s.subject, "err", err, "attempt", attempt+1)
		return false
	}
	s.mu.Lock()
	if s.ctx.Err() != nil { // the session ended meanwhile
		s.mu.Unlock()
		up.stop()
		return true
	}
	s.up = up
	s.conns[up] = true
	s.initResult = nil // not ready for the client until initialized
	s.mu.Unlock()
	go s.readUpstream(up)
	if _, err := s.call(ctx, "initialize", params); err != nil {
		s.p.logger.Error("proxy: initializing the reconnected upstream failed", "session", s.subject, "err", err, "attempt", attempt+1)
		s.upstreamLost(up, err)
		return false
	}
	if notified {
		if err := up.Write(s.ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
			s.upstreamLost(up, err)
			return false
		}
	}
	s.mu.Lock()
	s.initResult = json.RawMessage(`{}`)
	s.state = StateConnected
	s.initAt, s.lastCheck = s.p.o.Now(), s.p.o.Now()
	s.mu.Unlock()
	s.p.logger.Info("proxy: the upstream is connected again", "session", s.subject, "attempt", attempt+1)
	// Its tools may differ from the last upstream's.
	s.toClient(&jsonrpc.Request{Method: "notifications/tools/list_changed", Params: json.RawMessage(`{}`)})
	return true
}
