package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/conversation"
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
	assert.Equal(t, "http://127.0.0.1:11434/v1", s.provider)
	require.Len(t, s.servers, 2)
	assert.Equal(t, serverSpec{name: "files", command: []string{"node", "server.js", "/data"}}, s.servers[0])
	assert.Equal(t, serverSpec{name: "api", url: "http://127.0.0.1:8080/mcp"}, s.servers[1])
	assert.Equal(t, "X-Api-Key", s.rateKey)
	for _, bad := range [][]string{{"-mcp", "noequals"}, {"-mcp", "x=ftp://h"}, {"-mcp", "x=stdio:"}, {"-context-tokens", "10", "-reply-tokens", "20"}, {"extra"}} {
		_, err := parseSettings(bad, getenv, &bytes.Buffer{})
		assert.Error(t, err, "%v", bad)
	}
}
