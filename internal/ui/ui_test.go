package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/principal"
	"github.com/ctxfit/ctxfit/internal/ui"
	"github.com/ctxfit/ctxfit/internal/ui/uitest"
)

// ownerOf is the principal of a request with this bearer token ("" for
// none).
func ownerOf(token string) string {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return principal.Of(r, nil)
}

// list reads the calls token may see, narrowed by query.
func list(t *testing.T, h http.Handler, query, token string) uitest.Calls {
	t.Helper()
	return uitest.Read[uitest.Calls](t, h, "/ui/api/calls"+query, token)
}

func TestTheListIsFilteredAndTotalled(t *testing.T) {
	u := ui.New(nil)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []ui.Call{
		{Tool: "read_file", Strategy: "chunking", Status: "success", Session: "a", TokensBefore: 9000, TokensAfter: 3000},
		{Tool: "list_directory", Strategy: "passthrough", Status: "success", Session: "a", TokensBefore: 100, TokensAfter: 100},
		{Tool: "read_file", Strategy: "passthrough", Status: "tool_error", Session: "b", TokensBefore: 50, TokensAfter: 50},
	} {
		c.Time, c.Owner = now, ownerOf("")
		u.Add(c)
	}
	sessionA := list(t, u, "", "").Calls[0].Session
	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"no filter lists every call, oldest first", "", []string{"read_file", "list_directory", "read_file"}},
		{"a tool filter matches part of the name, in any case", "?tool=DIRECT", []string{"list_directory"}},
		{"a strategy filter matches it exactly", "?strategy=chunking", []string{"read_file"}},
		{"a status filter matches it exactly", "?status=tool_error", []string{"read_file"}},
		{"a session filter matches the session's tag", "?session=" + sessionA, []string{"read_file", "list_directory"}},
		{"filters combine", "?tool=read&status=success", []string{"read_file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, list(t, u, c.query, "").Tools())
		})
	}
	t.Run("the totals sum the calls listed", func(t *testing.T) {
		l := list(t, u, "", "")
		assert.Equal(t, 3, l.Totals.Calls)
		assert.Equal(t, 1, l.Totals.Shaped)
		assert.Equal(t, 9150, l.Totals.TokensBefore)
		assert.Equal(t, 6000, l.Totals.TokensSaved)
	})
	t.Run("the session is shown as a digest, never its ID", func(t *testing.T) {
		assert.True(t, strings.HasPrefix(sessionA, "s-"))
		assert.NotEqual(t, "a", sessionA)
	})
}

func TestAUserSeesOnlyTheCallsOfTheirCredential(t *testing.T) {
	u := ui.New(&ui.Options{Operators: []string{"op-token"}, Sessions: func() []ui.Session {
		return []ui.Session{{Owner: ownerOf("alice"), ID: "s1", State: "connected"}, {Owner: ownerOf("bob"), ID: "s2", State: "connected"}}
	}})
	u.Add(ui.Call{Tool: "alice_tool", Owner: ownerOf("alice")})
	u.Add(ui.Call{Tool: "bob_tool", Owner: ownerOf("bob")})
	u.Add(ui.Call{Tool: "anon_tool", Owner: ownerOf("")})
	for _, c := range []struct {
		name, token string
		want        []string
	}{
		{"alice sees hers", "alice", []string{"alice_tool"}},
		{"bob sees his", "bob", []string{"bob_tool"}},
		{"a request without a credential sees only the anonymous calls", "", []string{"anon_tool"}},
		{"an unknown token sees nothing", "mallory", nil},
		{"an operator sees every call", "op-token", []string{"alice_tool", "bob_tool", "anon_tool"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, list(t, u, "", c.token).Tools())
		})
	}
	t.Run("another credential's call is not found by its number", func(t *testing.T) {
		assert.Equal(t, http.StatusNotFound, uitest.Get(u, "/ui/api/calls/1", "bob").Code)
		assert.Equal(t, http.StatusOK, uitest.Get(u, "/ui/api/calls/1", "alice").Code)
		assert.Equal(t, http.StatusOK, uitest.Get(u, "/ui/api/calls/1", "op-token").Code)
	})
	t.Run("sessions are shown to their credential only", func(t *testing.T) {
		body := uitest.Get(u, "/ui/api/sessions", "alice").Body.String()
		require.Len(t, uitest.Read[uitest.Sessions](t, u, "/ui/api/sessions", "alice").Sessions, 1)
		assert.NotContains(t, body, `"s1"`, "the session ID itself is never shown")
		assert.Len(t, uitest.Read[uitest.Sessions](t, u, "/ui/api/sessions", "op-token").Sessions, 2)
	})
}

func TestEachSessionCountsItsCallsInTheRing(t *testing.T) {
	u := ui.New(&ui.Options{Size: 3, Sessions: func() []ui.Session {
		return []ui.Session{{Owner: ownerOf(""), ID: "s1", State: "open"}, {Owner: ownerOf(""), ID: "s2", State: "open"}}
	}})
	for _, c := range []ui.Call{
		{Session: "s1", Strategy: "pagination", TokensBefore: 900, TokensAfter: 300}, // leaves the ring
		{Session: "s1", Strategy: "pagination", TokensBefore: 500, TokensAfter: 200},
		{Session: "s1", Strategy: "passthrough", TokensBefore: 40, TokensAfter: 40},
		{Session: "gone", Strategy: "chunking", TokensBefore: 90, TokensAfter: 30},
	} {
		c.Owner = ownerOf("")
		u.Add(c)
	}
	s := uitest.Read[uitest.Sessions](t, u, "/ui/api/sessions", "").Sessions
	require.Len(t, s, 2)
	assert.Equal(t, "open", s[0].State)
	assert.Equal(t, []int{2, 1, 300}, []int{s[0].Calls, s[0].Shaped, s[0].TokensSaved}, "the calls still in the ring")
	assert.Equal(t, []int{0, 0, 0}, []int{s[1].Calls, s[1].Shaped, s[1].TokensSaved})
}

func TestTheRingKeepsOnlyTheLastCalls(t *testing.T) {
	u := ui.New(&ui.Options{Size: 3})
	for _, tool := range []string{"t1", "t2", "t3", "t4", "t5"} {
		u.Add(ui.Call{Tool: tool, Owner: ownerOf(""), Result: json.RawMessage(`{}`)})
	}
	assert.Equal(t, []string{"t3", "t4", "t5"}, list(t, u, "", "").Tools())
	assert.Equal(t, http.StatusNotFound, uitest.Get(u, "/ui/api/calls/2", "").Code, "a call that left the ring is gone")
	assert.Equal(t, http.StatusOK, uitest.Get(u, "/ui/api/calls/5", "").Code)
}

func TestWhatCallsCarryIsEscapedAndThePageIsLockedDown(t *testing.T) {
	u := ui.New(nil)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	u.Add(ui.Call{Tool: evil, Strategy: evil, Status: evil, Owner: ownerOf(""), Result: json.RawMessage(`{"content":[{"type":"text","text":"` + strings.ReplaceAll(evil, `"`, `\"`) + `"}]}`)})
	for _, path := range []string{"/ui/api/calls", "/ui/api/calls/1"} {
		t.Run("the JSON of "+path+" holds no raw markup", func(t *testing.T) {
			w := uitest.Get(u, path, "")
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			assert.NotContains(t, w.Body.String(), "<")
			assert.Contains(t, w.Body.String(), `\u003cscript\u003e`)
		})
	}
	t.Run("every answer carries a strict policy", func(t *testing.T) {
		for _, path := range []string{"/ui", "/ui/static/app.js", "/ui/api/calls", "/ui/api/calls/9"} {
			w := uitest.Get(u, path, "")
			assert.Equal(t, ui.CSP, w.Header().Get("Content-Security-Policy"), path)
			assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"), path)
		}
		assert.Contains(t, ui.CSP, "script-src 'self'")
		assert.NotContains(t, ui.CSP, "unsafe")
	})
	t.Run("the page has no inline script and the script writes no markup", func(t *testing.T) {
		page := uitest.Get(u, "/ui", "").Body.String()
		assert.NotContains(t, page, "<script>")
		assert.NotRegexp(t, `\son[a-z]+=`, page, "no inline event handler")
		js := uitest.Get(u, "/ui/static/app.js", "").Body.String()
		require.Contains(t, js, "textContent")
		for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
			assert.NotContains(t, js, sink)
		}
	})
	t.Run("the UI only reads", func(t *testing.T) {
		w := httptest.NewRecorder()
		u.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/ui/api/calls", nil))
		assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
	})
	t.Run("a bad call number is a clear 400", func(t *testing.T) {
		w := uitest.Get(u, "/ui/api/calls/abc", "")
		assert.Equal(t, http.StatusBadRequest, w.Code)
		assert.Contains(t, w.Body.String(), "number")
	})
}

func TestCursorsAndArgumentsAreHiddenUnlessAsked(t *testing.T) {
	call := ui.Call{
		Tool: "read", Owner: ownerOf(""), Strategy: "chunking",
		Arguments: json.RawMessage(`{"path":"/etc/hosts"}`),
		Result:    json.RawMessage(`{"content":[{"type":"text","text":"part one; next: CURSOR-SECRET-123"}],"_meta":{"dev.ctxfit/nextCursor":"CURSOR-SECRET-123"}}`),
		Cursors:   []ui.Cursor{{Name: "next", Token: "CURSOR-SECRET-123"}},
		Original:  func(context.Context) ([]byte, error) { return []byte(`original with CURSOR-SECRET-123`), nil },
	}
	for _, c := range []struct {
		name string
		show bool
	}{{"hidden by default", false}, {"shown with ShowArguments", true}} {
		t.Run(c.name, func(t *testing.T) {
			u := ui.New(&ui.Options{ShowArguments: c.show})
			u.Add(call)
			detail := uitest.Get(u, "/ui/api/calls/1", "").Body.String()
			original := uitest.Get(u, "/ui/api/calls/1/original", "").Body.String()
			for _, body := range []string{detail, original} {
				assert.Equal(t, c.show, strings.Contains(body, "CURSOR-SECRET-123"), body)
			}
			assert.Equal(t, c.show, strings.Contains(detail, "/etc/hosts"), detail)
			assert.Contains(t, detail, `"name":"next"`, "the cursor is listed by its name either way")
		})
	}
}

func TestTheOriginalIsPagedAndGoneWithItsSnapshot(t *testing.T) {
	data := strings.Repeat("é", ui.PageSize) // 2 bytes a rune: two pages
	gone := false
	u := ui.New(nil)
	u.Add(ui.Call{Tool: "big", Owner: ownerOf(""), Original: func(context.Context) ([]byte, error) {
		if gone {
			return nil, errors.New("snapshot expired")
		}
		return []byte(data), nil
	}})
	u.Add(ui.Call{Tool: "small", Owner: ownerOf("")})
	type page struct {
		Text                string
		Offset, Next, Total int
	}
	read := func(offset string) (page, int) {
		w := uitest.Get(u, "/ui/api/calls/1/original?offset="+offset, "")
		var p page
		_ = json.Unmarshal(w.Body.Bytes(), &p)
		return p, w.Code
	}
	t.Run("pages follow each other and rebuild the original", func(t *testing.T) {
		var got strings.Builder
		offset := "0"
		for range 4 {
			p, code := read(offset)
			require.Equal(t, http.StatusOK, code)
			assert.LessOrEqual(t, len(p.Text), ui.PageSize)
			got.WriteString(p.Text)
			if p.Next < 0 {
				break
			}
			offset = strconv.Itoa(p.Next)
		}
		assert.Equal(t, data, got.String())
	})
	t.Run("an offset inside a rune starts at the rune", func(t *testing.T) {
		p, _ := read("1")
		assert.Equal(t, 0, p.Offset)
	})
	t.Run("a bad offset is a 400", func(t *testing.T) {
		_, code := read("-1")
		assert.Equal(t, http.StatusBadRequest, code)
	})
	t.Run("a pass-through has no original apart from its result", func(t *testing.T) {
		assert.Equal(t, http.StatusNotFound, uitest.Get(u, "/ui/api/calls/2/original", "").Code)
	})
	t.Run("once the snapshot is gone the original is 410 Gone", func(t *testing.T) {
		gone = true
		_, code := read("0")
		assert.Equal(t, http.StatusGone, code)
	})
}

func TestLiveUpdatesReachOnlyTheirCredential(t *testing.T) {
	u := ui.New(nil)
	srv := httptest.NewServer(u)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/ui/api/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	lines := bufio.NewScanner(resp.Body)
	require.True(t, lines.Scan(), "the stream opens with a comment")
	// The stream is subscribed once its first line arrived.
	u.Add(ui.Call{Tool: "bob_tool", Owner: ownerOf("bob")})
	u.Add(ui.Call{Tool: "alice_tool", Owner: ownerOf("alice"), Strategy: "pagination"})
	var event, data string
	for lines.Scan() {
		line := lines.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
			break
		}
	}
	assert.Equal(t, "call", event)
	assert.Contains(t, data, `"tool":"alice_tool"`, "bob's call, sent first, never reached alice's stream")
	assert.Contains(t, data, `"strategy":"pagination"`)
}
