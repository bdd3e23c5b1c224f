package proxy

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
)

// idConn is a connection with a session ID and nothing else.
type idConn struct {
	mcp.Connection
	id string
}

func (c idConn) SessionID() string { return c.id }

func TestCursorsAreBoundToThePrincipalAndTheSession(t *testing.T) {
	p := &Proxy{o: Options{}.resolved()}
	cases := []struct {
		name, id, owner, want string
	}{
		{"an HTTP session binds them to its principal and its ID", "abc", "sha256:00", "sha256:00 abc"},
		{"an anonymous HTTP session is bound as anonymous", "abc", "anonymous", "anonymous abc"},
		{"a stdio session binds them to nothing, as mcpfit does", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSession(p, idConn{id: c.id}, c.owner)
			defer s.cancel()
			assert.Equal(t, c.want, s.bound)
			assert.Equal(t, c.id, s.subject, "logs name the session, never the principal")
		})
	}
}
