package httpfit_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
)

func ordersAPI() http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("GET /orders", func(w http.ResponseWriter, r *http.Request) {
		orders := make([]map[string]any, 1000)
		for i := range orders {
			orders[i] = map[string]any{"id": i + 1, "note": strings.Repeat("lorem ipsum ", 5)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(orders)
	})
	api.HandleFunc("GET /small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	return api
}

func serveAs(h http.Handler, path, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestUIShowsEachCredentialTheRequestsItMade(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "a ui test secret of 32 bytes or more"}})
	require.NoError(t, err)
	defer g.Close()
	h := httpfit.Middleware(g, nil)(ordersAPI())
	page := httpfit.UI(g)
	assert.Same(t, page, httpfit.UI(g), "one page per guard")

	require.Equal(t, http.StatusOK, serveAs(h, "/orders", "alice").Code)
	require.Equal(t, http.StatusOK, serveAs(h, "/small", "bob").Code)

	var list struct {
		Calls []struct{ Tool, Strategy, Status string }
	}
	require.NoError(t, json.Unmarshal(serveAs(page, "/ui/api/calls", "alice").Body.Bytes(), &list))
	require.Len(t, list.Calls, 1)
	assert.Equal(t, "GET /orders", list.Calls[0].Tool)
	assert.Equal(t, "pagination", list.Calls[0].Strategy)
	assert.Equal(t, "200", list.Calls[0].Status)

	t.Run("the shaped response opens beside its original, its cursors hidden", func(t *testing.T) {
		detail := serveAs(page, "/ui/api/calls/1", "alice")
		require.Equal(t, http.StatusOK, detail.Code)
		assert.Contains(t, detail.Body.String(), "[cursor]")
		original := serveAs(page, "/ui/api/calls/1/original", "alice")
		require.Equal(t, http.StatusOK, original.Code, original.Body.String())
		assert.Contains(t, original.Body.String(), `\"id\":1,`)
	})
	t.Run("another credential sees only its own", func(t *testing.T) {
		require.NoError(t, json.Unmarshal(serveAs(page, "/ui/api/calls", "bob").Body.Bytes(), &list))
		require.Len(t, list.Calls, 1)
		assert.Equal(t, "GET /small", list.Calls[0].Tool)
		assert.Equal(t, http.StatusNotFound, serveAs(page, "/ui/api/calls/1", "bob").Code)
	})
}

func ExampleUI() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of 32 bytes or more"}})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	page := httpfit.UI(g) // before the requests it is to show

	mux := http.NewServeMux()
	mux.Handle("/orders", httpfit.Middleware(g, nil)(ordersAPI()))
	mux.Handle("/ui", page) // mount it on a loopback address only
	mux.Handle("/ui/", page)

	_ = serveAs(mux, "/orders", "")
	list := serveAs(mux, "/ui/api/calls", "")
	var out struct {
		Calls []struct{ Tool, Strategy string }
	}
	_ = json.Unmarshal(list.Body.Bytes(), &out)
	fmt.Println(len(out.Calls), out.Calls[0].Strategy)
	// Output: 1 pagination
}
