package principal_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/principal"
)

func request(header ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	return r
}

func TestOf(t *testing.T) {
	withCert := func(raw string) *http.Request {
		r := request()
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{{Raw: []byte(raw)}}}
		return r
	}
	cookies := []string{"session"}
	t.Run("a request without a credential is anonymous", func(t *testing.T) {
		assert.Equal(t, principal.Anonymous, principal.Of(request(), cookies))
		assert.Equal(t, principal.Anonymous, principal.Of(request("Cookie", "other=1"), cookies), "a cookie not named is no credential")
	})
	t.Run("the same credential is the same principal, another is another", func(t *testing.T) {
		alice := principal.Of(request("Authorization", "Bearer alice"), cookies)
		assert.Equal(t, alice, principal.Of(request("Authorization", "Bearer alice"), cookies))
		assert.NotEqual(t, alice, principal.Of(request("Authorization", "Bearer mallory"), cookies))
		assert.NotEqual(t, alice, principal.Anonymous)
		assert.NotEqual(t, principal.Of(request("Cookie", "session=a"), cookies), principal.Of(request("Cookie", "session=b"), cookies))
		assert.NotEqual(t, principal.Of(withCert("a"), nil), principal.Of(withCert("b"), nil))
		assert.NotEqual(t, alice, principal.Of(request("Authorization", "Bearer alice", "Cookie", "session=a"), cookies),
			"every credential presented is part of the principal")
	})
	t.Run("the principal is a digest, never the credential", func(t *testing.T) {
		p := principal.Of(request("Authorization", "Bearer alice-secret-token"), nil)
		assert.True(t, strings.HasPrefix(p, "sha256:"), p)
		assert.NotContains(t, p, "alice")
	})
}

func TestRequireBearer(t *testing.T) {
	h := principal.RequireBearer(principal.Tokens(" alice , ,bob"))(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	cases := []struct {
		name   string
		header []string
		want   int
	}{
		{"a request with one of the tokens goes through", []string{"Authorization", "Bearer bob"}, http.StatusTeapot},
		{"the scheme is case-insensitive", []string{"Authorization", "bearer alice"}, http.StatusTeapot},
		{"a request without a token is refused", nil, http.StatusUnauthorized},
		{"another token is refused", []string{"Authorization", "Bearer mallory"}, http.StatusUnauthorized},
		{"an empty token is refused", []string{"Authorization", "Bearer "}, http.StatusUnauthorized},
		{"another scheme is refused", []string{"Authorization", "Basic alice"}, http.StatusUnauthorized},
		{"two Authorization headers are refused", []string{"Authorization", "Bearer alice", "Authorization", "Bearer bob"}, http.StatusUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, request(c.header...))
			assert.Equal(t, c.want, w.Code)
			if c.want == http.StatusUnauthorized {
				assert.Equal(t, `Bearer realm="ctxfit"`, w.Header().Get("WWW-Authenticate"))
				assert.NotContains(t, w.Body.String(), "alice")
			}
		})
	}
	t.Run("with no tokens every request is refused", func(t *testing.T) {
		w := httptest.NewRecorder()
		principal.RequireBearer(nil)(http.NotFoundHandler()).ServeHTTP(w, request("Authorization", "Bearer "))
		assert.Equal(t, http.StatusUnauthorized, w.Code)
	})
}

// fakeMCP makes a session for a request without one and answers 200 for
// a session it made, 404 for another; DELETE ends a session.
type fakeMCP struct{ live map[string]bool }

func (f *fakeMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(principal.SessionHeader)
	switch {
	case id == "":
		id = "s" + string(rune('0'+len(f.live)))
		f.live[id] = true
		w.Header().Set(principal.SessionHeader, id)
		_, _ = w.Write([]byte("made " + id))
	case !f.live[id]:
		http.Error(w, "session not found", http.StatusNotFound)
	case r.Method == http.MethodDelete:
		delete(f.live, id)
		w.WriteHeader(http.StatusNoContent)
	default:
		_, _ = w.Write([]byte("served " + id))
	}
}

func TestSessions(t *testing.T) {
	serve := func(h http.Handler, method, id string, header ...string) *httptest.ResponseRecorder {
		r := request(header...)
		r.Method = method
		if id != "" {
			r.Header.Set(principal.SessionHeader, id)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	setup := func() (*principal.Sessions, http.Handler, string) {
		s := &principal.Sessions{}
		h := s.Handler(&fakeMCP{live: map[string]bool{}})
		w := serve(h, http.MethodPost, "", "Authorization", "Bearer alice")
		require.Equal(t, http.StatusOK, w.Code)
		return s, h, w.Header().Get(principal.SessionHeader)
	}
	t.Run("the credential that made a session uses it", func(t *testing.T) {
		_, h, id := setup()
		w := serve(h, http.MethodPost, id, "Authorization", "Bearer alice")
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, "served "+id, w.Body.String())
	})
	t.Run("another credential or none gets 404 as for no session", func(t *testing.T) {
		_, h, id := setup()
		for _, header := range [][]string{{"Authorization", "Bearer mallory"}, nil} {
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				w := serve(h, method, id, header...)
				assert.Equal(t, http.StatusNotFound, w.Code, "%s %v", method, header)
				assert.Equal(t, "session not found\n", w.Body.String())
			}
		}
		assert.Equal(t, http.StatusOK, serve(h, http.MethodPost, id, "Authorization", "Bearer alice").Code, "the session lives on")
	})
	t.Run("an anonymous session is refused to a credential", func(t *testing.T) {
		s := &principal.Sessions{}
		h := s.Handler(&fakeMCP{live: map[string]bool{}})
		id := serve(h, http.MethodPost, "").Header().Get(principal.SessionHeader)
		assert.Equal(t, http.StatusNotFound, serve(h, http.MethodPost, id, "Authorization", "Bearer alice").Code)
		assert.Equal(t, http.StatusOK, serve(h, http.MethodPost, id).Code)
	})
	t.Run("a session it did not see made is refused", func(t *testing.T) {
		_, h, _ := setup()
		assert.Equal(t, http.StatusNotFound, serve(h, http.MethodPost, "made-elsewhere", "Authorization", "Bearer alice").Code)
	})
	t.Run("DELETE forgets the binding", func(t *testing.T) {
		s, h, id := setup()
		assert.Equal(t, 1, s.Len())
		assert.Equal(t, http.StatusNoContent, serve(h, http.MethodDelete, id, "Authorization", "Bearer alice").Code)
		assert.Equal(t, 0, s.Len())
	})
}
