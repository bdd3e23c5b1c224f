package cache

import (
	"context"
	"errors"
	"math"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HTTP is what [Cache.LookupHTTP] reads of an HTTP request besides its
// [Request].
type HTTP struct {
	// Header is the request's header (an http.Header, read only): its
	// credentials, its Cache-Control, and the fields that a response's Vary
	// names.
	Header map[string][]string
	// RawQuery is the query string the handler sees, still escaped, without
	// ctxfit's own parameters (cursor, limit, fields, startLine, endLine):
	// it selects the response, with the Endpoint, Path and Subject of the
	// Request, in place of its Order and Filters.
	RawQuery string
}

// LookupHTTP is [Cache.Lookup] for a fetch that runs an HTTP handler, under
// the rules of RFC 9111 for a shared cache, as far as a cache that replays
// only a body and its content type can follow them:
//
//   - The key is a digest of the Endpoint, Path and Subject of req and of
//     r.RawQuery's parameters, unescaped to their raw bytes and sorted by
//     name: q=%ff and q=%fe are two entries, a=1&b=2 and b=2&a=1 one.
//   - A request with credentials (an Authorization or Cookie header) and no
//     Subject neither reads nor fills the cache (the Lookup is nil): the
//     key would not tell its user from another. Set a Subject
//     (httpfit's Options.Subject) to cache such responses per subject.
//   - A request with Cache-Control: no-store may be served from the cache,
//     but its response is not stored.
//   - A response is stored only if the fetch reports its header with
//     [ResponseHeader] and that header allows it: not when its
//     Cache-Control has no-store, private or no-cache (this cache cannot
//     revalidate), nor when it sets a cookie (Set-Cookie), nor when its
//     freshness lifetime is zero or less. The lifetime is s-maxage, else
//     max-age, else Expires minus Date (now without a Date), less Age; an
//     invalid one counts as zero. A lifetime shorter than the Cache's TTL
//     is the entry's TTL.
//   - A response whose Vary names request fields is stored per variant: the
//     request's values of those fields are part of its key (absent and
//     empty differ; each field's lines are trimmed and joined by commas). A
//     marker under the request's key names the fields, so a lookup costs
//     one more backend read for such responses. Vary: * is not stored.
//
// Otherwise it behaves as Lookup; a nil c returns nil: no caching.
// LookupHTTP only reads req and r.
func (c *Cache) LookupHTTP(req Request, r HTTP) *Lookup {
	if c == nil || req.Subject == "" && hasCredentials(r.Header) {
		return nil
	}
	t := target{key: keyHTTP(req, r.RawQuery), http: true, header: r.Header}
	return &Lookup{c: c, req: req, t: t, noStore: cacheControl(r.Header).noStore}
}

// ResponseHeader tells the [Cache] whose fetch runs with ctx (in the
// [Lookup.Do] of a [Cache.LookupHTTP]) the header of the HTTP response being fetched (an
// http.Header, read at once), so that it applies the rules LookupHTTP lists:
// whether to store the response, for how long, and per which request
// fields. A fetch of such a lookup that does not call it stores nothing; a
// header that forbids storing, like [DontStore], cannot be undone. Outside
// such a fetch it does nothing.
func ResponseHeader(ctx context.Context, header map[string][]string) {
	f := flagsOf(ctx)
	if f == nil {
		return
	}
	ttl, vary, ok := storable(header, f.now())
	f.mu.Lock()
	defer f.mu.Unlock()
	if !ok {
		f.no = true
		return
	}
	f.heard, f.ttl, f.vary = true, ttl, vary
}

// hasCredentials reports whether a request header carries credentials.
func hasCredentials(h map[string][]string) bool {
	for _, name := range [...]string{"Authorization", "Cookie"} {
		for _, v := range h[name] {
			if strings.TrimSpace(v) != "" {
				return true
			}
		}
	}
	return false
}

// storable applies the rules of [Cache.LookupHTTP] to a response header: ok reports
// whether the response may be stored, ttl bounds its TTL when > 0, vary
// lists the request fields it varies on (canonical, sorted).
func storable(h map[string][]string, now time.Time) (ttl time.Duration, vary []string, ok bool) {
	cc := cacheControl(h)
	if cc.noStore || cc.private || cc.noCache || len(h["Set-Cookie"]) > 0 {
		return 0, nil, false
	}
	lifetime, known := cc.lifetime(h, now)
	if known {
		if lifetime <= 0 {
			return 0, nil, false
		}
		ttl = lifetime
	}
	for _, line := range h["Vary"] {
		for name := range strings.SplitSeq(line, ",") {
			name = strings.TrimSpace(name)
			switch name {
			case "":
				continue
			case "*":
				return 0, nil, false
			}
			vary = append(vary, textproto.CanonicalMIMEHeaderKey(name))
		}
	}
	slices.Sort(vary)
	return ttl, slices.Compact(vary), true
}

// directives are the Cache-Control directives the rules read; a max-age of
// -1 is absent.
type directives struct {
	noStore, private, noCache bool
	maxAge, sMaxAge           int64
}

func cacheControl(h map[string][]string) directives {
	d := directives{maxAge: -1, sMaxAge: -1}
	for _, line := range h["Cache-Control"] {
		for dir := range strings.SplitSeq(line, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store":
				d.noStore = true
			case "private":
				d.private = true
			case "no-cache":
				d.noCache = true
			case "max-age":
				d.maxAge = seconds(arg)
			case "s-maxage":
				d.sMaxAge = seconds(arg)
			}
		}
	}
	return d
}

// seconds reads a delta-seconds value: 0 when invalid (stale), and at most
// what a Duration holds.
func seconds(arg string) int64 {
	const most = math.MaxInt64 / int64(time.Second)
	n, err := strconv.ParseUint(strings.Trim(strings.TrimSpace(arg), `"`), 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return most
	case err != nil:
		return 0
	}
	return int64(min(n, uint64(most)))
}

// lifetime returns the response's remaining freshness lifetime, and
// whether the header gives one.
func (d directives) lifetime(h map[string][]string, now time.Time) (time.Duration, bool) {
	var life time.Duration
	switch {
	case d.sMaxAge >= 0:
		life = time.Duration(d.sMaxAge) * time.Second
	case d.maxAge >= 0:
		life = time.Duration(d.maxAge) * time.Second
	case len(h["Expires"]) > 0:
		expires, err := time.Parse(httpTime, h["Expires"][0])
		if err != nil {
			return 0, true // "0" and other invalid dates are in the past
		}
		date := now
		if v := h["Date"]; len(v) > 0 {
			if t, err := time.Parse(httpTime, v[0]); err == nil {
				date = t
			}
		}
		life = expires.Sub(date)
	default:
		return 0, false
	}
	if v := h["Age"]; len(v) > 0 {
		if age := seconds(v[0]); age > 0 {
			life -= time.Duration(age) * time.Second
		}
	}
	return life, true
}

// httpTime is the IMF-fixdate format of HTTP dates (net/http's TimeFormat).
const httpTime = "Mon, 02 Jan 2006 15:04:05 GMT"
