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
	"github.com/ctxfit/ctxfit/internal/ui/uitest"
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
	page := httpfit.UI(g, nil)
	assert.Same(t, page, httpfit.UI(g, &httpfit.UIOptions{Calls: 1}), "one page per guard, the first call's")

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

func TestUIOptionsSetTheRingTheArgumentsAndTheOperators(t *testing.T) {
	newPage := func(t *testing.T, o *httpfit.UIOptions) (api, page http.Handler) {
		g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "a ui test secret of 32 bytes or more"}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		page = httpfit.UI(g, o)
		return httpfit.Middleware(g, nil)(ordersAPI()), page
	}
	open := func(t *testing.T, page http.Handler, token string) uitest.Detail {
		return uitest.Read[uitest.Detail](t, page, "/ui/api/calls/1", token)
	}
	const path = "/orders?status=open&api_key=sk-live-0123456789abcdef"

	t.Run("the defaults keep 500 calls and show no argument or cursor", func(t *testing.T) {
		api, page := newPage(t, nil)
		require.Equal(t, http.StatusOK, serveAs(api, path, "alice").Code)
		assert.Equal(t, 500, uitest.Read[uitest.Calls](t, page, "/ui/api/calls", "alice").Size)
		d := open(t, page, "alice")
		assert.Empty(t, d.Arguments)
		require.NotEmpty(t, d.Cursors)
		for _, c := range d.Cursors {
			assert.Empty(t, c.Token, c.Name)
		}
		assert.Contains(t, d.Result, "[cursor]")
	})
	t.Run("Calls sets the ring: the oldest request leaves first", func(t *testing.T) {
		api, page := newPage(t, &httpfit.UIOptions{Calls: 2})
		for range 3 {
			require.Equal(t, http.StatusOK, serveAs(api, "/small", "alice").Code)
		}
		list := uitest.Read[uitest.Calls](t, page, "/ui/api/calls", "alice")
		assert.Equal(t, 2, list.Size)
		require.Len(t, list.Calls, 2)
		assert.Equal(t, uint64(2), list.Calls[0].ID)
		assert.Equal(t, http.StatusNotFound, serveAs(page, "/ui/api/calls/1", "alice").Code)
	})
	t.Run("ShowArguments shows the query, its secrets redacted, and the cursors", func(t *testing.T) {
		api, page := newPage(t, &httpfit.UIOptions{ShowArguments: true})
		require.Equal(t, http.StatusOK, serveAs(api, path, "alice").Code)
		d := open(t, page, "alice")
		assert.Contains(t, d.Arguments, `"status":"open"`)
		assert.NotContains(t, d.Arguments, "sk-live-0123456789abcdef")
		require.NotEmpty(t, d.Cursors)
		assert.NotEmpty(t, d.Cursors[0].Token)
		assert.Contains(t, d.Result, d.Cursors[0].Token)
	})
	t.Run("an operator sees every credential's requests", func(t *testing.T) {
		api, page := newPage(t, &httpfit.UIOptions{Operators: []string{"op-token"}})
		require.Equal(t, http.StatusOK, serveAs(api, "/small", "alice").Code)
		require.Equal(t, http.StatusOK, serveAs(api, "/small", "bob").Code)
		assert.Len(t, uitest.Read[uitest.Calls](t, page, "/ui/api/calls", "op-token").Calls, 2)
		assert.Len(t, uitest.Read[uitest.Calls](t, page, "/ui/api/calls", "alice").Calls, 1)
	})
}

func ExampleUI() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of 32 bytes or more"}})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	page := httpfit.UI(g, nil) // before the requests it is to show

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

// A page that keeps the last 100 requests and shows their query parameters
// (secrets redacted) and cursors, to the holder of an operator token all
// of them.
func ExampleUI_options() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of 32 bytes or more"}})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	page := httpfit.UI(g, &httpfit.UIOptions{Calls: 100, ShowArguments: true, Operators: []string{"operator-token"}})

	mux := http.NewServeMux()
	mux.Handle("/orders", httpfit.Middleware(g, nil)(ordersAPI()))
	mux.Handle("/ui", page)
	mux.Handle("/ui/", page)

	_ = serveAs(mux, "/orders?status=open", "alice")
	var list struct{ Size int }
	_ = json.Unmarshal(serveAs(mux, "/ui/api/calls", "operator-token").Body.Bytes(), &list)
	var call struct{ Arguments string }
	_ = json.Unmarshal(serveAs(mux, "/ui/api/calls/1", "operator-token").Body.Bytes(), &call)
	fmt.Println(list.Size, call.Arguments)
	// Output: 100 {"status":"open"}
}
