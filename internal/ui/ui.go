// Package ui serves a small web page that shows what the guard did to the
// recent calls: a live list (time, session, tool or route, strategy,
// tokens before and after, latency, status) with filters, totals and a
// chart of tokens saved, one call's result beside its original, and the
// sessions and the upstream's health. Updates travel as server-sent
// events.
//
// The page is made of files embedded in the binary (no CDN, no build
// step). It is served with a strict Content-Security-Policy and its script
// writes every value as text, never as markup: calls carry text an
// attacker may have written.
//
// A user sees only the calls made with their credential (the principal of
// internal/principal, as the sessions of the proxy are bound), unless they
// present an operator token. Arguments and cursors are shown only when
// [Options.ShowArguments] is set. Memory is bounded: a ring of the last
// [Options.Size] calls, and an original is read back from the guard's
// store when asked for, for as long as its snapshot lives there.
package ui

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/internal/principal"
)

//go:embed static
var static embed.FS

// DefaultSize is the number of calls the ring keeps when Options.Size is 0.
const DefaultSize = 500

// PageSize is how many bytes of an original one request returns: the
// browser holds one page at a time.
const PageSize = 32 << 10

// maxResult bounds what is kept of a call's result (what the model
// received is bounded by the hard cap; this bounds the rest).
const maxResult = 256 << 10

// maxArguments bounds what is kept of a call's arguments.
const maxArguments = 4 << 10

// CSP is the Content-Security-Policy of every answer: nothing but the
// page's own script, style and API; no inline script, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Cursor is a cursor a call's result handed the model: Name says which
// ("next", "details", "part", "original"), Token is the cursor itself.
type Cursor struct {
	Name  string
	Token string
}

// Call is one call the guard saw.
type Call struct {
	// Time is when the call arrived.
	Time time.Time
	// Owner is the principal of the credential that made the call
	// (principal.Of); only a UI user with the same one (or an operator)
	// sees the call. It is never shown.
	Owner string
	// Session is the session's ID; it is shown only as a short digest.
	Session string
	// Tool is the tool or route.
	Tool string
	// Strategy is what was done ("passthrough", "pagination", ...).
	Strategy string
	// Status is how the call ended ("success", "tool_error", ...).
	Status string
	// TokensBefore and TokensAfter are the sizes of the original and of
	// what the model received.
	TokensBefore, TokensAfter int
	// Latency is how long the call took.
	Latency time.Duration
	// Arguments are the call's arguments, already redacted by the caller;
	// shown only with Options.ShowArguments.
	Arguments json.RawMessage
	// Result is what the model received.
	Result json.RawMessage
	// Cursors are the cursors inside Result: shown, and left in Result,
	// only with Options.ShowArguments.
	Cursors []Cursor
	// Original reads the whole original back (from the guard's store);
	// nil means there is none to read (a pass-through: Result is it).
	Original func(ctx context.Context) ([]byte, error)
}

// Session is one session being served.
type Session struct {
	// Owner is the principal of the session's credential; never shown.
	Owner string
	// ID is the session's ID; shown only as a short digest.
	ID string
	// State is the state of its upstream connection.
	State string
}

// Options configure a [UI]. The zero value means the defaults.
type Options struct {
	// Size is how many recent calls are kept. Zero means DefaultSize.
	Size int
	// ShowArguments shows the calls' arguments and cursors. False means
	// they are hidden (cursors replaced by "[cursor]" in results).
	ShowArguments bool
	// Operators are bearer tokens whose holders see every call and
	// session. Nil means none: everyone sees only their own.
	Operators []string
	// Cookies are the cookies that are part of a credential (as the
	// proxy's Options.CredentialCookies). Nil means none.
	Cookies []string
	// Principal names who made a request to the page; a user sees the
	// calls whose Owner it returns. Nil means principal.Of with Cookies.
	Principal func(*http.Request) string
	// Sessions lists the sessions served. Nil means none are shown.
	Sessions func() []Session
	// Health reports the upstream's health (a JSON value). Nil means none.
	Health func() any
}

// UI keeps the recent calls and serves the page. It is safe for
// concurrent use. The zero value is not usable; create one with [New].
type UI struct {
	o         Options
	operators [][32]byte

	mu    sync.Mutex
	ring  []*entry
	seq   uint64
	subs  map[chan *entry]string // subscriber -> its principal ("" for an operator)
	files http.Handler
}

type entry struct {
	id uint64
	Call
}

// New returns a UI configured by o (nil means the defaults).
func New(o *Options) *UI {
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.Size = cmp.Or(opts.Size, DefaultSize)
	u := &UI{o: opts, ring: make([]*entry, opts.Size), subs: map[chan *entry]string{}}
	for _, t := range opts.Operators {
		u.operators = append(u.operators, sha256.Sum256([]byte(t)))
	}
	sub, _ := fs.Sub(static, "static")
	u.files = http.StripPrefix("/ui/static/", http.FileServerFS(sub))
	return u
}

// Add records c, dropping the oldest call when the ring is full, and
// sends it to the live streams of the users who may see it. It never
// blocks: a stream that does not keep up misses calls.
func (u *UI) Add(c Call) {
	if len(c.Result) > maxResult {
		c.Result = append(json.RawMessage(nil), c.Result[:maxResult]...)
	}
	if len(c.Arguments) > maxArguments {
		c.Arguments = nil
	}
	u.mu.Lock()
	u.seq++
	e := &entry{id: u.seq, Call: c}
	u.ring[e.id%uint64(len(u.ring))] = e
	for ch, who := range u.subs {
		if who == "" || who == c.Owner {
			select {
			case ch <- e:
			default:
			}
		}
	}
	u.mu.Unlock()
}

// ServeHTTP serves the page at /ui and its API under /ui/api/.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed: the UI only reads", http.StatusMethodNotAllowed)
		return
	}
	who := u.viewer(r)
	path := r.URL.Path
	switch {
	case path == "/ui" || path == "/ui/":
		page, _ := static.ReadFile("static/index.html")
		h.Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	case strings.HasPrefix(path, "/ui/static/"):
		u.files.ServeHTTP(w, r)
	case path == "/ui/api/calls":
		u.list(w, r, who)
	case path == "/ui/api/events":
		u.events(w, r, who)
	case path == "/ui/api/sessions":
		u.sessions(w, who)
	case strings.HasPrefix(path, "/ui/api/calls/"):
		rest := strings.TrimPrefix(path, "/ui/api/calls/")
		idText, original := strings.CutSuffix(rest, "/original")
		id, err := strconv.ParseUint(idText, 10, 64)
		if err != nil {
			http.Error(w, "Bad Request: a call is named by its number, as /ui/api/calls lists it", http.StatusBadRequest)
			return
		}
		e := u.get(id, who)
		if e == nil {
			http.Error(w, "call not found: it left the ring of recent calls, or it is not yours", http.StatusNotFound)
			return
		}
		if original {
			u.original(w, r, e)
			return
		}
		writeJSON(w, u.detail(e))
	default:
		http.NotFound(w, r)
	}
}

// viewer is the principal whose calls r may see: "" for an operator.
func (u *UI) viewer(r *http.Request) string {
	if len(u.operators) > 0 {
		if v := r.Header.Values("Authorization"); len(v) == 1 {
			if scheme, token, ok := strings.Cut(v[0], " "); ok && strings.EqualFold(scheme, "Bearer") {
				d := sha256.Sum256([]byte(strings.TrimSpace(token)))
				match := 0
				for _, op := range u.operators {
					match |= subtle.ConstantTimeCompare(d[:], op[:])
				}
				if match == 1 {
					return ""
				}
			}
		}
	}
	if u.o.Principal != nil {
		return u.o.Principal(r)
	}
	return principal.Of(r, u.o.Cookies)
}

func (u *UI) get(id uint64, who string) *entry {
	u.mu.Lock()
	defer u.mu.Unlock()
	e := u.ring[id%uint64(len(u.ring))]
	if e == nil || e.id != id || (who != "" && e.Owner != who) {
		return nil
	}
	return e
}

// filter is what the list is narrowed to; empty fields match anything.
type filter struct{ tool, strategy, status, session string }

func filterOf(r *http.Request) filter {
	q := r.URL.Query()
	return filter{tool: q.Get("tool"), strategy: q.Get("strategy"), status: q.Get("status"), session: q.Get("session")}
}

func (f filter) match(e *entry) bool {
	return (f.tool == "" || strings.Contains(strings.ToLower(e.Tool), strings.ToLower(f.tool))) &&
		(f.strategy == "" || e.Strategy == f.strategy) &&
		(f.status == "" || e.Status == f.status) &&
		(f.session == "" || sessionTag(e.Session) == f.session)
}

// summary is a call as the list shows it.
type summary struct {
	ID        uint64  `json:"id"`
	Time      string  `json:"time"`
	Session   string  `json:"session"`
	Tool      string  `json:"tool"`
	Strategy  string  `json:"strategy"`
	Status    string  `json:"status"`
	Before    int     `json:"tokensBefore"`
	After     int     `json:"tokensAfter"`
	LatencyMs float64 `json:"latencyMs"`
}

func summarize(e *entry) summary {
	return summary{ID: e.id, Time: e.Time.UTC().Format(time.RFC3339Nano), Session: sessionTag(e.Session), Tool: e.Tool,
		Strategy: e.Strategy, Status: e.Status, Before: e.TokensBefore, After: e.TokensAfter,
		LatencyMs: float64(e.Latency.Microseconds()) / 1000}
}

// sessionTag is what is shown of a session ID: a short digest, which
// names the session without being usable as its ID.
func sessionTag(id string) string {
	if id == "" {
		return ""
	}
	d := sha256.Sum256([]byte(id))
	return "s-" + hex.EncodeToString(d[:4])
}

// Totals are the sums over the calls listed.
type totals struct {
	Calls  int `json:"calls"`
	Shaped int `json:"shaped"`
	Before int `json:"tokensBefore"`
	After  int `json:"tokensAfter"`
	Saved  int `json:"tokensSaved"`
}

func (u *UI) visible(who string, f filter) []*entry {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []*entry
	for _, e := range u.ring {
		if e != nil && (who == "" || e.Owner == who) && f.match(e) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *entry) int { return cmp.Compare(a.id, b.id) })
	return out
}

func (u *UI) list(w http.ResponseWriter, r *http.Request, who string) {
	calls := u.visible(who, filterOf(r))
	out := struct {
		Calls  []summary `json:"calls"`
		Totals totals    `json:"totals"`
		Size   int       `json:"size"`
	}{Calls: []summary{}, Size: len(u.ring)}
	for _, e := range calls {
		out.Calls = append(out.Calls, summarize(e))
		out.Totals.Calls++
		if e.Strategy != "" && e.Strategy != "passthrough" {
			out.Totals.Shaped++
		}
		out.Totals.Before += e.TokensBefore
		out.Totals.After += e.TokensAfter
	}
	out.Totals.Saved = out.Totals.Before - out.Totals.After
	writeJSON(w, out)
}

// events streams the calls the viewer may see as server-sent events
// ("call", a summary as data) until the request ends.
func (u *UI) events(w http.ResponseWriter, r *http.Request, who string) {
	rc := http.NewResponseController(w)
	ch := make(chan *entry, 64)
	u.mu.Lock()
	u.subs[ch] = who
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		delete(u.subs, ch)
		u.mu.Unlock()
	}()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, ": ctxfit calls\n\n")
	_ = rc.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case e := <-ch:
			data, _ := json.Marshal(summarize(e))
			if _, err := fmt.Fprintf(w, "event: call\nid: %d\ndata: %s\n\n", e.id, data); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}

// sessionView is a session as the page shows it: its digest, its state
// and the counts of its calls in the ring.
type sessionView struct {
	Session string `json:"session"`
	State   string `json:"state"`
	Calls   int    `json:"calls"`
	Shaped  int    `json:"shaped"`
	Saved   int    `json:"tokensSaved"`
}

func (u *UI) sessions(w http.ResponseWriter, who string) {
	out := struct {
		Sessions []sessionView `json:"sessions"`
		Health   any           `json:"health,omitempty"`
	}{Sessions: []sessionView{}}
	if u.o.Sessions != nil {
		counts := map[string]*sessionView{}
		for _, s := range u.o.Sessions() {
			if who == "" || s.Owner == who {
				out.Sessions = append(out.Sessions, sessionView{Session: sessionTag(s.ID), State: s.State})
			}
		}
		for i := range out.Sessions {
			counts[out.Sessions[i].Session] = &out.Sessions[i]
		}
		for _, e := range u.visible(who, filter{}) {
			if v := counts[sessionTag(e.Session)]; v != nil && e.Session != "" {
				v.Calls++
				if e.Strategy != "" && e.Strategy != "passthrough" {
					v.Shaped++
				}
				v.Saved += e.TokensBefore - e.TokensAfter
			}
		}
	}
	if u.o.Health != nil {
		out.Health = u.o.Health()
	}
	writeJSON(w, out)
}

// part is one block of a result as the detail shows it.
type part struct {
	Type  string `json:"type"`
	Text  string `json:"text,omitempty"`
	Bytes int    `json:"bytes"`
}

func (u *UI) detail(e *entry) any {
	result := string(e.Result)
	var cursors []map[string]string
	for _, c := range e.Cursors {
		if c.Token == "" {
			continue
		}
		v := map[string]string{"name": c.Name}
		if u.o.ShowArguments {
			v["token"] = c.Token
		} else {
			result = strings.ReplaceAll(result, c.Token, "[cursor]")
		}
		cursors = append(cursors, v)
	}
	var shown any = json.RawMessage(nil)
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(result), "", "  ") == nil {
		shown = buf.String()
	} else {
		shown = result
	}
	var parsed struct {
		Content []map[string]any `json:"content"`
	}
	var parts []part
	if json.Unmarshal([]byte(result), &parsed) == nil {
		for _, b := range parsed.Content {
			p := part{}
			p.Type, _ = b["type"].(string)
			if t, ok := b["text"].(string); ok {
				p.Bytes = len(t)
				p.Text = cut(t, 200)
			} else if uri, ok := b["uri"].(string); ok {
				p.Text = uri
				p.Bytes = len(uri)
			} else if d, ok := b["data"].(string); ok {
				p.Bytes = len(d)
			}
			parts = append(parts, p)
		}
	}
	out := map[string]any{
		"call":     summarize(e),
		"result":   shown,
		"cursors":  cursors,
		"parts":    parts,
		"original": e.Original != nil,
	}
	if u.o.ShowArguments && len(e.Arguments) > 0 {
		out["arguments"] = string(e.Arguments)
	}
	return out
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// original serves one page of a call's original: ?offset=N (bytes, 0 by
// default), PageSize bytes cut on a rune boundary.
func (u *UI) original(w http.ResponseWriter, r *http.Request, e *entry) {
	if e.Original == nil {
		http.Error(w, "this call has no original apart from its result: it was passed through unchanged", http.StatusNotFound)
		return
	}
	offset := 0
	if v := r.URL.Query().Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, "Bad Request: offset is a byte offset, 0 or more", http.StatusBadRequest)
			return
		}
		offset = n
	}
	data, err := e.Original(r.Context())
	if err != nil {
		http.Error(w, "the original is no longer kept (its snapshot left the store)", http.StatusGone)
		return
	}
	if !u.o.ShowArguments {
		for _, c := range e.Cursors {
			if c.Token != "" {
				data = bytes.ReplaceAll(data, []byte(c.Token), []byte("[cursor]"))
			}
		}
	}
	offset = min(offset, len(data))
	for offset > 0 && offset < len(data) && !utf8.RuneStart(data[offset]) {
		offset--
	}
	end := min(offset+PageSize, len(data))
	for end < len(data) && end > offset && !utf8.RuneStart(data[end]) {
		end--
	}
	next := -1
	if end < len(data) {
		next = end
	}
	writeJSON(w, map[string]any{"text": string(data[offset:end]), "offset": offset, "next": next, "total": len(data)})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	_ = enc.Encode(v) // escapes <, > and & as well
}
