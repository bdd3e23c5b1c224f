package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit/internal/errorbody"
	"github.com/ctxfit/ctxfit/internal/principal"
	"github.com/ctxfit/ctxfit/internal/redact"
)

// Handler returns the streamable HTTP endpoint of the Proxy: each session
// (Mcp-Session-Id, made by a POST without one) is a downstream session
// with its own upstream session ([Proxy.Serve]); DELETE ends it, and so do
// [Options.IdleTimeout] and [Proxy.Close]. Beyond [Options.MaxSessions]
// a new session is refused with 503 and Retry-After. Server-initiated
// messages (notifications, and the upstream's requests of the client)
// travel on the session's GET stream; those sent before the client opens
// it are kept until it does.
//
// A session belongs to the credential of the request that made it: its
// Authorization header, the cookies named in [Options.CredentialCookies]
// and its TLS client certificate, or none. A request that names the
// session with another credential (or none, for a session made with one)
// is answered 404 as for a session that does not exist, and the session's
// cursors and ctxfit:// links are bound to its credential as well as to
// its ID. The Handler authenticates no one: put an authenticating server
// in front of it, or refuse requests without a known token (ctxfit proxy
// --auth-tokens-env).
func (p *Proxy) Handler() http.Handler {
	// The SDK's transport repeats what it could not read in its errors:
	// 1 KiB of that is enough.
	return errorbody.Bound(&handler{p: p, sessions: map[string]httpSession{}}, 1<<10)
}

type handler struct {
	p        *Proxy
	mu       sync.Mutex
	sessions map[string]httpSession
}

// httpSession is a streamable HTTP session and the principal it belongs
// to.
type httpSession struct {
	t     *mcp.StreamableServerTransport
	owner string
}

const sessionHeader = "Mcp-Session-Id"

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(sessionHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			http.Error(w, "Bad Request: "+r.Method+" requires an Mcp-Session-Id header", http.StatusBadRequest)
			return
		}
		h.start(w, r)
		return
	}
	who := principal.Of(r, h.p.o.CredentialCookies)
	h.mu.Lock()
	hs, ok := h.sessions[id]
	h.mu.Unlock()
	if !ok || hs.owner != who {
		// The same answer for another principal's session as for none:
		// the caller learns nothing of it.
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	t := hs.t
	switch r.Method {
	case http.MethodGet:
		t.ServeHTTP(w, r)
	case http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageSize+1))
		if err != nil || len(body) > MaxMessageSize {
			http.Error(w, "Bad Request: unreadable or too large", http.StatusRequestEntityTooLarge)
			return
		}
		body = tunnelBody(body)
		r2 := r.Clone(r.Context())
		r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		t.ServeHTTP(w, r2)
	case http.MethodDelete:
		h.p.mu.Lock()
		for s := range h.p.sessions {
			if s.subject == id {
				s.end()
			}
		}
		h.p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// start makes a new session for a POST of initialize without a session
// ID; any other message without one is answered without a session
// (server/discover: method not found, so that clients fall back to
// initialize).
func (h *handler) start(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageSize+1))
	if err != nil || len(body) > MaxMessageSize {
		http.Error(w, "Bad Request: unreadable or too large", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		writeRPCError(w, jsonrpc.ID{}, jsonrpc.CodeParseError, "ctxfit proxy: "+redact.Bound(err.Error(), maxEcho))
		return
	}
	if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "initialize" {
		var id jsonrpc.ID
		code, text := int64(jsonrpc.CodeInvalidRequest), "ctxfit proxy: a session begins with initialize"
		if ok {
			id = req.ID
			if req.Method == "server/discover" {
				code, text = jsonrpc.CodeMethodNotFound, "ctxfit proxy: server/discover is not supported; initialize a session"
			}
		}
		if !id.IsValid() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		writeRPCError(w, id, code, text)
		return
	}
	id := rand.Text()
	t := &mcp.StreamableServerTransport{SessionID: id, EventStore: mcp.NewMemoryEventStore(nil)}
	conn, err := t.Connect(context.WithoutCancel(r.Context()))
	if err != nil {
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	who := principal.Of(r, h.p.o.CredentialCookies)
	s, err := h.p.newSession(tunnelConn{conn}, who)
	if err != nil {
		conn.Close()
		if errors.Is(err, ErrTooManySessions) {
			w.Header().Set("Retry-After", "30")
			http.Error(w, "ctxfit proxy: too many sessions; retry later", http.StatusServiceUnavailable)
			return
		}
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	h.mu.Lock()
	h.sessions[id] = httpSession{t: t, owner: who}
	h.mu.Unlock()
	go func() {
		defer h.p.wg.Done()
		_ = s.run(context.Background())
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
	}()
	t.ServeHTTP(w, r)
}

func writeRPCError(w http.ResponseWriter, id jsonrpc.ID, code int64, text string) {
	data, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: text}})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// Health is what [Proxy.Health] reports: counts and states, never a
// session's ID or a credential.
type Health struct {
	// Status is "ok" when every session's upstream is connected (or there
	// are none), else "degraded".
	Status string `json:"status"`
	// Upstream names the upstream: the program of a stdio upstream
	// (without its arguments), or the URL of an HTTP one with its user,
	// password and query values replaced by "redacted" (and never its
	// headers).
	Upstream string `json:"upstream"`
	// Sessions is how many sessions are served.
	Sessions int `json:"sessions"`
	// States counts the sessions by the state of their upstream
	// connection; a state no session is in is left out.
	States map[State]int `json:"states"`
}

// Health reports how many sessions are served and the states of their
// upstream connections.
func (p *Proxy) Health() Health {
	p.mu.Lock()
	all := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		all = append(all, s)
	}
	p.mu.Unlock()
	h := Health{Status: "ok", Upstream: p.describe(), Sessions: len(all), States: map[State]int{}}
	for _, s := range all {
		s.mu.Lock()
		state := s.state
		s.mu.Unlock()
		if state != StateConnected {
			h.Status = "degraded"
		}
		h.States[state]++
	}
	return h
}

// describe names the upstream for the health report, without headers,
// arguments or credentials.
func (p *Proxy) describe() string {
	switch {
	case p.up.Command != nil:
		return "stdio: " + p.up.Command.Path
	case p.up.URL != "" && p.up.SSE:
		return "sse: " + redact.Endpoint(p.up.URL)
	case p.up.URL != "":
		return "streamable-http: " + redact.Endpoint(p.up.URL)
	}
	return "custom"
}

// HealthHandler serves [Proxy.Health] as JSON, always with status 200 (it
// is a report; the proxy itself is alive).
func (p *Proxy) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(p.Health())
	})
}
