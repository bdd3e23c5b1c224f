package proxy_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/ui/uitest"
	"github.com/ctxfit/ctxfit/proxy"
)

func TestTheUIShowsEachToolCallToItsCredential(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{Threshold: 1000, HardCap: 3000}, proxy.Options{})
	page := f.p.UI(&proxy.UIOptions{Calls: 10, Operators: []string{"operator"}})
	assert.Same(t, page, f.p.UI(nil), "the first call sets the options")
	url := serveHTTP(t, f.p)
	alice := clientAs(t, url, "alice")
	call(t, alice, "big", nil)
	bob := clientAs(t, url, "bob")
	call(t, bob, "count", nil)

	list := uitest.Read[uitest.Calls](t, page, "/ui/api/calls", "alice")
	require.Len(t, list.Calls, 1)
	assert.Equal(t, "big", list.Calls[0].Tool)
	assert.NotEqual(t, "passthrough", list.Calls[0].Strategy)
	assert.Equal(t, "success", list.Calls[0].Status)

	t.Run("the shaped call's original is read back from the store", func(t *testing.T) {
		w := uitest.Get(page, "/ui/api/calls/1/original", "alice")
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		for _, c := range uitest.Read[uitest.Detail](t, page, "/ui/api/calls/1", "alice").Cursors {
			assert.Empty(t, c.Token, "no cursor is shown: %s", c.Name)
		}
	})
	t.Run("bob sees his call only, the operator both", func(t *testing.T) {
		assert.Equal(t, []string{"count"}, uitest.Read[uitest.Calls](t, page, "/ui/api/calls", "bob").Tools())
		assert.Equal(t, []string{"big", "count"}, uitest.Read[uitest.Calls](t, page, "/ui/api/calls", "operator").Tools())
	})
	t.Run("the sessions are listed to their credential", func(t *testing.T) {
		s := uitest.Read[uitest.Sessions](t, page, "/ui/api/sessions", "alice")
		require.Len(t, s.Sessions, 1)
		assert.Equal(t, "connected", s.Sessions[0].State)
		assert.Equal(t, 1, s.Sessions[0].Calls)
		assert.Equal(t, 1, s.Sessions[0].Shaped)
	})
}

func TestTheUIShowsAStdioUpstreamByItsProgramsName(t *testing.T) {
	// No session starts it: the program need not exist.
	program := filepath.Join(t.TempDir(), "home", "alice", "bin", "mcp-server-notes")
	f := newFixture(t, proxy.Upstream{Command: &proxy.Command{Path: program}}, ctxfit.Config{}, proxy.Options{})
	var health struct{ Upstream string }
	require.NoError(t, json.Unmarshal(uitest.Read[uitest.Sessions](t, f.p.UI(nil), "/ui/api/sessions", "").Health, &health))
	assert.Equal(t, "stdio: mcp-server-notes", health.Upstream, "no directory")
}
