// Package principal names who made an HTTP request, so that what a
// request creates (a session, its cursors, links and upstream session) is
// bound to the credential that made it and refused to every other one.
//
// A principal is a digest of the request's credentials, never the
// credentials themselves: nothing here stores or logs a token.
package principal

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
)

// Anonymous is the principal of a request without any credential. It is a
// principal like the others: what an anonymous request made is refused to
// a request with a credential, and the other way round.
const Anonymous = "anonymous"

// Of returns the principal of r: "anonymous" when r carries no credential,
// else "sha256:" and the hex SHA-256 of its credentials together: the
// Authorization header, the cookies named in cookies (their values, in the
// order named) and the SHA-256 fingerprint of its TLS client certificate.
// Two requests have the same principal exactly when they present the same
// credentials.
func Of(r *http.Request, cookies []string) string {
	h := sha256.New()
	found := false
	add := func(kind, value string) {
		found = true
		h.Write([]byte(kind))
		h.Write([]byte{0})
		h.Write([]byte(value))
		h.Write([]byte{0})
	}
	for _, v := range r.Header.Values("Authorization") {
		add("authorization", v)
	}
	for _, name := range cookies {
		if c, err := r.Cookie(name); err == nil {
			add("cookie "+name, c.Value)
		}
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		fp := sha256.Sum256(r.TLS.PeerCertificates[0].Raw)
		add("certificate", string(fp[:]))
	}
	if !found {
		return Anonymous
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Tokens parses a comma-separated list of bearer tokens (spaces around
// each ignored, empty ones dropped).
func Tokens(list string) []string {
	var out []string
	for _, t := range strings.Split(list, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// RequireBearer returns a middleware that lets through only the requests
// whose Authorization header is "Bearer " and one of tokens (compared in
// constant time); any other request is answered 401 with
// WWW-Authenticate: Bearer and a body that says what to send, and never
// reaches next. It fails closed: with no tokens, every request is refused.
// It reads only the Authorization header and adds nothing to a request
// it lets through.
func RequireBearer(tokens []string) func(http.Handler) http.Handler {
	digests := make([][32]byte, len(tokens))
	for i, t := range tokens {
		digests[i] = sha256.Sum256([]byte(t))
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !allowed(r, digests) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="ctxfit"`)
				http.Error(w, "Unauthorized: send Authorization: Bearer TOKEN with one of the tokens this server was started with", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func allowed(r *http.Request, digests [][32]byte) bool {
	values := r.Header.Values("Authorization")
	if len(values) != 1 {
		return false
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	d := sha256.Sum256([]byte(strings.TrimSpace(token)))
	match := 0
	for _, want := range digests {
		match |= subtle.ConstantTimeCompare(d[:], want[:])
	}
	return match == 1
}

// SessionHeader is the header of a streamable HTTP MCP session's ID.
const SessionHeader = "Mcp-Session-Id"

// Sessions binds the sessions an MCP streamable HTTP handler makes to the
// principal of the request that made them (see [Sessions.Handler]).
//
// The zero value binds sessions by the Authorization header and the client
// certificate; it is safe for concurrent use and must not be copied after
// first use.
type Sessions struct {
	// Cookies are the names of the cookies that are part of a request's
	// credential ([Of]); nil means none.
	Cookies []string

	mu     sync.Mutex
	owners map[string]string // session ID -> principal
}

// Handler returns next behind the binding. A request without an
// Mcp-Session-Id goes to next; when next answers it with an Mcp-Session-Id
// (a new session), that session is bound to the request's principal
// before the answer leaves. A request with an Mcp-Session-Id reaches next
// only when the session is bound to its own principal; otherwise it is
// answered 404 "session not found", as for a session that does not exist,
// so another credential learns nothing of it. The binding is forgotten
// when next answers the session's DELETE with a success, or any of its
// requests with 404. It fails closed: a session it did not see made is
// refused.
func (s *Sessions) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := Of(r, s.Cookies)
		id := r.Header.Get(SessionHeader)
		if id == "" {
			next.ServeHTTP(&recorder{ResponseWriter: w, onHeader: func(status int) {
				if id := w.Header().Get(SessionHeader); id != "" && status < 300 {
					s.bind(id, who)
				}
			}}, r)
			return
		}
		s.mu.Lock()
		owner, ok := s.owners[id]
		s.mu.Unlock()
		if !ok || owner != who {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		next.ServeHTTP(&recorder{ResponseWriter: w, onHeader: func(status int) {
			if status == http.StatusNotFound || (r.Method == http.MethodDelete && status < 300) {
				s.mu.Lock()
				delete(s.owners, id)
				s.mu.Unlock()
			}
		}}, r)
	})
}

func (s *Sessions) bind(id, who string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners == nil {
		s.owners = map[string]string{}
	}
	if _, taken := s.owners[id]; !taken {
		s.owners[id] = who
	}
}

// Owner returns the principal session id is bound to, and whether it is
// bound.
func (s *Sessions) Owner(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	who, ok := s.owners[id]
	return who, ok
}

// Len returns how many sessions are bound.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owners)
}

// recorder calls onHeader with the status once, just before the header of
// the answer is written.
type recorder struct {
	http.ResponseWriter
	onHeader func(status int)
	wrote    bool
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote && status >= 200 {
		r.wrote = true
		r.onHeader(status)
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap returns the ResponseWriter it wraps, for
// [http.ResponseController].
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush writes the header first if it was not, then flushes.
func (r *recorder) Flush() {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}
