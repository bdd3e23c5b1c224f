package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/store"
)

// TestSessionsExpireAnHourAfterTheirLastMessage checks the sessions in
// memory by an injected clock; e2e checks those in Redis through the
// running agent (their keys' TTL), and the agent's HTTP behaviour with a
// scripted provider.
func TestSessionsExpireAnHourAfterTheirLastMessage(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	mem := newMemorySessions(sessionTTL, func() time.Time { return now })
	s := &Session{ID: newSessionID(), CreatedAt: now, UpdatedAt: now,
		Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi <there> & you"}}}
	require.NoError(t, mem.Put(ctx, s))
	got, ok, err := mem.Get(ctx, s.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, s.Messages, got.Messages)
	assert.True(t, s.CreatedAt.Equal(got.CreatedAt))
	_, ok, err = mem.Get(ctx, "sess_none")
	require.NoError(t, err)
	assert.False(t, ok)

	// Expiry, by the injected clock.
	require.NoError(t, mem.Put(ctx, &Session{ID: "sess_a"}))
	now = now.Add(sessionTTL - time.Second)
	_, ok, _ = mem.Get(ctx, "sess_a")
	assert.True(t, ok)
	now = now.Add(time.Second)
	_, ok, _ = mem.Get(ctx, "sess_a")
	assert.False(t, ok)
}

func TestSettings(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}[k] }
	s, err := parseSettings([]string{"-mcp", "files=stdio:node server.js /data", "-mcp", "api=http://127.0.0.1:8080/mcp", "-rate-key", "X-Api-Key"}, getenv, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []providerSpec{{name: "openai", url: "http://127.0.0.1:11434/v1"}}, s.providers)
	require.Len(t, s.servers, 2)
	assert.Equal(t, serverSpec{name: "files", command: []string{"node", "server.js", "/data"}}, s.servers[0])
	assert.Equal(t, serverSpec{name: "api", url: "http://127.0.0.1:8080/mcp"}, s.servers[1])
	assert.Equal(t, "X-Api-Key", s.rateKey)
	for _, bad := range [][]string{{"-mcp", "noequals"}, {"-mcp", "x=ftp://h"}, {"-mcp", "x=stdio:"}, {"-context-tokens", "10", "-reply-tokens", "20"}, {"extra"}} {
		_, err := parseSettings(bad, getenv, &bytes.Buffer{})
		assert.Error(t, err, "%v", bad)
	}
}

func TestASessionIsRefusedToEveryCredentialButTheOneThatMadeIt(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	mem := newMemorySessions(sessionTTL, func() time.Time { return now })
	a := &agent{sessions: mem, model: "m", now: func() time.Time { return now }}
	as := func(token string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"what did I say?"}]}`))
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		return r
	}
	alice := &Session{ID: "sess_a1", Owner: principalOf(as("alice")), CreatedAt: now,
		Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "my secret plan"}}}
	require.NoError(t, mem.Put(context.Background(), alice))

	for _, token := range []string{"mallory", ""} {
		t.Run(fmt.Sprintf("%q with Alice's session ID gets 404 as for no session", token), func(t *testing.T) {
			r := as(token)
			r.Header.Set(headerSession, alice.ID)
			w := httptest.NewRecorder()
			a.withSession(http.HandlerFunc(a.chat)).ServeHTTP(w, r)
			assert.Equal(t, http.StatusNotFound, w.Code)
			assert.Contains(t, w.Body.String(), "session_not_found")
			assert.NotContains(t, w.Body.String(), "secret plan")
		})
	}
	t.Run("cursors are bound to the credential as well as the session", func(t *testing.T) {
		var subjects []string
		h := a.withSession(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			subjects = append(subjects, store.SubjectFrom(r.Context()))
		}))
		for _, token := range []string{"alice", "mallory"} {
			r := as(token)
			r.Header.Set(headerSession, alice.ID)
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
		require.Len(t, subjects, 2)
		assert.NotEqual(t, subjects[0], subjects[1])
		assert.NotContains(t, subjects[0], "alice", "a digest, never the credential")
	})
	t.Run("the principal is anonymous without a credential", func(t *testing.T) {
		assert.Equal(t, "anonymous", principalOf(as("")))
		assert.NotEqual(t, principalOf(as("alice")), principalOf(as("mallory")))
	})
}

func TestAuthTokensEnv(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"TOKENS": "tok-one, tok-two", "EMPTY": " , "}[k] }
	s, err := parseSettings([]string{"-auth-tokens-env", "TOKENS"}, getenv, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []string{"tok-one", "tok-two"}, s.tokens)
	_, err = parseSettings([]string{"-auth-tokens-env", "EMPTY"}, getenv, &bytes.Buffer{})
	assert.ErrorContains(t, err, "-auth-tokens-env EMPTY: the environment variable is empty")

	h := requireBearer(s.tokens, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for header, want := range map[string]int{"Bearer tok-one": http.StatusTeapot, "Bearer tok-two": http.StatusTeapot,
		"Bearer tok-three": http.StatusUnauthorized, "Basic tok-one": http.StatusUnauthorized, "": http.StatusUnauthorized} {
		t.Run(fmt.Sprintf("%q is answered %d", header, want), func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
			if header != "" {
				r.Header.Set("Authorization", header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			assert.Equal(t, want, w.Code)
			assert.NotContains(t, w.Body.String(), "tok-")
		})
	}
}

func TestTheHealthReportRedactsAServersURL(t *testing.T) {
	raw := "http://bob:hunter2@127.0.0.1:9/mcp?token=s3cret"
	got := redactURLIn(`connect: Post "http://bob:***@127.0.0.1:9/mcp?token=s3cret": dial tcp: refused`, raw)
	assert.NotContains(t, got, "s3cret")
	assert.NotContains(t, got, "hunter2")
	assert.Equal(t, "plain error", redactURLIn("plain error", ""))
}
