package proxy

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sharedUpstream is the one upstream session of every session with
// [Options.SharedUpstream].
type sharedUpstream struct {
	p *Proxy

	mu         sync.Mutex
	up         *upConn
	initResult json.RawMessage // the upstream's answer to the first initialize
	ready      chan struct{}   // closed when that answer came (or failed)

	qmu    sync.Mutex
	queues map[*session]chan jsonrpc.Message // each session's messages, delivered by its own goroutine

	writeDeadline time.Duration // sharedWriteDeadline, read when the proxy is made
}

// sharedQueue bounds the messages of the shared upstream waiting for one
// client: a client that falls this far behind (it does not read its event
// stream, say) loses its session rather than hold up everyone else's.
const sharedQueue = 1024

// joinShared initializes the session on the shared upstream: the first
// session's initialize goes up; later ones get the answer it got.
func (s *session) joinShared(m *jsonrpc.Request) {
	h := s.p.shared
	h.mu.Lock()
	if h.up == nil {
		ctx, cancel := context.WithTimeout(s.ctx, s.p.o.StartTimeout)
		defer cancel()
		up, err := s.p.dial(ctx, h.onBad)
		if err != nil {
			h.mu.Unlock()
			s.mu.Lock()
			s.state = StateDisconnected
			s.mu.Unlock()
			s.replyError(m.ID, jsonrpc.CodeInternalError, "ctxfit proxy: the upstream server could not be started: "+err.Error())
			return
		}
		h.up, h.initResult, h.ready = up, nil, make(chan struct{})
		h.mu.Unlock()
		s.mu.Lock()
		s.up = up
		s.mu.Unlock()
		go h.read(up)
		s.forwardInit(m, up)
		return
	}
	up, ready := h.up, h.ready
	h.mu.Unlock()
	select {
	case <-ready:
	case <-s.ctx.Done():
		return
	}
	h.mu.Lock()
	res := h.initResult
	h.mu.Unlock()
	if res == nil {
		s.replyError(m.ID, jsonrpc.CodeInternalError, "ctxfit proxy: the shared upstream server did not initialize")
		return
	}
	now := s.p.o.Now()
	s.mu.Lock()
	s.up, s.joined, s.initResult = up, true, res
	s.initAt, s.lastCheck, s.state = now, now, StateConnected
	s.mu.Unlock()
	s.toClient(&jsonrpc.Response{ID: m.ID, Result: s.p.mergeInitialize(res)})
}

// initialized records the answer to the first initialize (nil: it failed).
func (h *sharedUpstream) initialized(res json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ready == nil {
		return
	}
	select {
	case <-h.ready:
		return
	default:
	}
	h.initResult = res
	close(h.ready)
	if res == nil && h.up != nil {
		go h.up.stop()
		h.up = nil
	}
}

// sessions returns the sessions on the shared upstream.
func (h *sharedUpstream) sessions() []*session {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	out := make([]*session, 0, len(h.p.sessions))
	for s := range h.p.sessions {
		out = append(out, s)
	}
	return out
}

// read dispatches what the shared upstream sends until it fails; then
// every session on it ends.
func (h *sharedUpstream) read(up *upConn) {
	for {
		msg, err := up.Read(context.Background())
		if err != nil {
			h.mu.Lock()
			if h.up == up {
				h.up = nil
			}
			h.mu.Unlock()
			for _, s := range h.sessions() {
				s.upstreamLost(up, err)
			}
			up.stop()
			return
		}
		h.dispatch(msg)
	}
}

// dispatch sends one message of the shared upstream to the session it is
// for: a response to the session that asked, progress to the session
// whose request carries its token, a request to the session with the
// latest request in flight, any other notification to every session.
func (h *sharedUpstream) dispatch(msg jsonrpc.Message) {
	all := h.sessions()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		key := idKey(m.ID)
		for _, s := range all {
			s.mu.Lock()
			_, ok := s.pend[key]
			s.mu.Unlock()
			if ok {
				h.send(s, m)
				return
			}
		}
	case *jsonrpc.Request:
		if m.IsCall() {
			if s := latest(all); s != nil {
				h.send(s, m)
			}
			return
		}
		if m.Method == "notifications/progress" {
			var p struct {
				Token json.RawMessage `json:"progressToken"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if s := withToken(all, p.Token); s != nil {
				h.send(s, m)
			}
			return
		}
		for _, s := range all {
			h.send(s, m)
		}
	}
}

// send queues msg for s. The shared upstream's reader never writes to a
// client itself: a client that does not read would block it, and with it
// every other session's answers. A session whose queue is full ends.
func (h *sharedUpstream) send(s *session, msg jsonrpc.Message) {
	if s.ctx.Err() != nil {
		return
	}
	h.qmu.Lock()
	q := h.queues[s]
	if q == nil {
		if h.queues == nil {
			h.queues = map[*session]chan jsonrpc.Message{}
		}
		q = make(chan jsonrpc.Message, sharedQueue)
		h.queues[s] = q
		go h.deliver(s, q)
	}
	h.qmu.Unlock()
	select {
	case q <- msg:
	default:
		h.p.logger.Warn("proxy: a client that does not read its messages was disconnected", "session", s.subject, "queued", sharedQueue)
		s.end()
	}
}

// sharedWriteDeadline bounds how long deliver waits for one message to
// reach its client: a client whose connection takes nothing for that long
// is disconnected, so that its delivery holds no goroutine, queue or
// session until its TCP connection closes.
var sharedWriteDeadline = 30 * time.Second

// deliver hands s the messages of q, in order, until s ends, or until a
// message is not taken within sharedWriteDeadline: s then ends.
func (h *sharedUpstream) deliver(s *session, q chan jsonrpc.Message) {
	defer func() {
		h.qmu.Lock()
		if h.queues[s] == q {
			delete(h.queues, s)
		}
		h.qmu.Unlock()
	}()
	for {
		select {
		case msg := <-q:
			stuck := time.AfterFunc(h.writeDeadline, func() {
				h.p.logger.Warn("proxy: a client that took no message within the write deadline was disconnected",
					"session", s.subject, "deadline", h.writeDeadline.String())
				s.end()
			})
			s.fromUpstream(msg)
			stuck.Stop()
		case <-s.ctx.Done():
			return
		}
	}
}

// latest returns the session with the most recent client request in
// flight, else any session.
func latest(all []*session) *session {
	var best *session
	var bestPD *pending
	for _, s := range all {
		s.mu.Lock()
		for _, pd := range s.pend {
			if pd.clientID.IsValid() && (bestPD == nil || pd.start.After(bestPD.start)) {
				best, bestPD = s, pd
			}
		}
		s.mu.Unlock()
	}
	if best == nil && len(all) > 0 {
		best = all[0]
	}
	return best
}

// withToken returns the session with a request in flight whose
// _meta.progressToken is token.
func withToken(all []*session, token json.RawMessage) *session {
	for _, s := range all {
		s.mu.Lock()
		for _, pd := range s.pend {
			var p struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			if json.Unmarshal(pd.params, &p) == nil && len(p.Meta.Token) > 0 && string(p.Meta.Token) == string(token) {
				s.mu.Unlock()
				return s
			}
		}
		s.mu.Unlock()
	}
	return nil
}

// onBad answers the request a message that could not be read answered.
func (h *sharedUpstream) onBad(id jsonrpc.ID, err error) {
	h.p.logger.Error("proxy: a message from the upstream was dropped", "err", err)
	if id.IsValid() {
		h.dispatch(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "ctxfit proxy: the upstream's answer could not be read: " + err.Error()}})
	}
}

// stop stops the shared upstream, if any.
func (h *sharedUpstream) stop() {
	h.mu.Lock()
	up := h.up
	h.up = nil
	h.mu.Unlock()
	if up != nil {
		up.stop()
	}
}
