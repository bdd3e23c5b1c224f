package proxy_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/proxy"
)

func uiGet(t *testing.T, h http.Handler, path, token string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestTheUIShowsEachToolCallToItsCredential(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{Threshold: 1000, HardCap: 3000}, proxy.Options{})
	page := f.p.UI(&proxy.UIOptions{Calls: 10, Operators: []string{"operator"}})
	assert.Same(t, page, f.p.UI(nil), "the first call sets the options")
	url := serveHTTP(t, f.p)
	alice := clientAs(t, url, "alice")
	call(t, alice, "big", nil)
	bob := clientAs(t, url, "bob")
	call(t, bob, "count", nil)

	var list struct {
		Calls []struct{ Tool, Strategy, Status string }
	}
	require.NoError(t, json.Unmarshal(uiGet(t, page, "/ui/api/calls", "alice").Body.Bytes(), &list))
	require.Len(t, list.Calls, 1)
	assert.Equal(t, "big", list.Calls[0].Tool)
	assert.NotEqual(t, "passthrough", list.Calls[0].Strategy)
	assert.Equal(t, "success", list.Calls[0].Status)

	t.Run("the shaped call's original is read back from the store", func(t *testing.T) {
		w := uiGet(t, page, "/ui/api/calls/1/original", "alice")
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		assert.NotContains(t, uiGet(t, page, "/ui/api/calls/1", "alice").Body.String(), `"token"`, "no cursor is shown")
	})
	t.Run("bob sees his call only, the operator both", func(t *testing.T) {
		require.NoError(t, json.Unmarshal(uiGet(t, page, "/ui/api/calls", "bob").Body.Bytes(), &list))
		require.Len(t, list.Calls, 1)
		assert.Equal(t, "count", list.Calls[0].Tool)
		require.NoError(t, json.Unmarshal(uiGet(t, page, "/ui/api/calls", "operator").Body.Bytes(), &list))
		assert.Len(t, list.Calls, 2)
	})
	t.Run("the sessions are listed to their credential", func(t *testing.T) {
		var s struct {
			Sessions []struct{ Session, State string }
		}
		require.NoError(t, json.Unmarshal(uiGet(t, page, "/ui/api/sessions", "alice").Body.Bytes(), &s))
		require.Len(t, s.Sessions, 1)
		assert.Equal(t, "connected", s.Sessions[0].State)
	})
}
