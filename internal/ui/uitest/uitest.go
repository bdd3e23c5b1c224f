// Package uitest holds what the tests of the call viewer (package
// internal/ui and the adapters that serve its page: proxy, httpfit,
// cmd/ctxfit) share: reading its JSON API as a credential, and the shapes
// of its answers.
package uitest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Get serves a GET of path on h with the bearer token ("" for none) and
// returns the answer.
func Get(h http.Handler, path, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Read GETs path on h with the bearer token, fails t unless the answer is
// 200 with JSON, and returns the JSON decoded into a T.
func Read[T any](t testing.TB, h http.Handler, path, token string) T {
	t.Helper()
	w := Get(h, path, token)
	var v T
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, w.Body)
	}
	return v
}

// Calls is the answer of /ui/api/calls.
type Calls struct {
	Calls []struct {
		ID                        uint64
		Time, Session, Tool       string
		Strategy, Status          string
		TokensBefore, TokensAfter int
		LatencyMs                 float64
	}
	Totals struct {
		Calls, Shaped, TokensBefore, TokensAfter, TokensSaved int
	}
	Size int
}

// Tools are the tools of the calls listed, in order.
func (c Calls) Tools() []string {
	var out []string
	for _, x := range c.Calls {
		out = append(out, x.Tool)
	}
	return out
}

// Detail is the answer of /ui/api/calls/N.
type Detail struct {
	Result    string
	Arguments string
	Cursors   []struct{ Name, Token string }
	Parts     []struct {
		Type, Text string
		Bytes      int
	}
	Original bool
}

// Sessions is the answer of /ui/api/sessions (the health left as JSON).
type Sessions struct {
	Sessions []struct {
		Session, State             string
		Calls, Shaped, TokensSaved int
	}
	Health json.RawMessage
}
