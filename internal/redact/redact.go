// Package redact keeps secrets and unbounded client input out of logs and
// echoed errors: values under names that look secret, the passwords and
// secret parameters inside URLs and connection strings, cursors (logged as
// a short digest) and values too long to repeat (cut to a bound).
//
// Its functions are pure and safe for concurrent use.
package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Redacted replaces a secret value.
const Redacted = "[redacted]"

// secretParts are the name fragments that make a name secret, whatever
// its case or separators: access_token, refresh-token, client_secret,
// secretKey, X-API-KEY, private_key, passwd, credentials, cookie, auth,
// sessionId, signature ...
var secretParts = []string{"token", "secret", "key", "pass", "auth", "credential", "cookie", "session", "signature", "pwd"}

// SecretName reports whether the values under name are secret: name
// contains, case-insensitively, one of token, secret, key, pass, auth,
// credential, cookie, session, signature or pwd, or is one of extra
// (compared case-insensitively).
func SecretName(name string, extra ...string) bool {
	lower := strings.ToLower(name)
	for _, p := range secretParts {
		if strings.Contains(lower, p) {
			return true
		}
	}
	for _, x := range extra {
		if strings.EqualFold(x, name) {
			return true
		}
	}
	return false
}

// Digest returns a short digest of a cursor (or any value that must be
// recognisable in logs but not usable): "sha256:" and 12 hex digits.
func Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:6])
}

// Bound returns s cut to at most n bytes (on a UTF-8 boundary) followed by
// a note of how long it was; s itself when it is no longer than n.
func Bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}

// connPair is a key=value (or key: value) pair of a connection string or
// a command line: "password=x", "Password=x;", "--api-key x" is not one.
var connPair = regexp.MustCompile(`(?i)([A-Za-z0-9_.\-]*(?:token|secret|key|pass|pwd|auth|credential|cookie|session|signature)[A-Za-z0-9_.\-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s;&,"']+)`)

// userinfo is the user:password@ of a URL-like string (also one that
// net/url does not parse, "postgres://u:p@h/db?x" inside a sentence).
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)([^@\s/]*)@`)

// scheme is the credentials of an Authorization value: "Bearer x",
// "Basic x".
var scheme = regexp.MustCompile(`(?i)\b(bearer|basic|digest|token)(\s+)[A-Za-z0-9\-._~+/]+=*`)

// String returns s with the secrets inside it replaced by [Redacted]: the
// password of a URL's user information, the values of query parameters and
// of key=value pairs (connection strings, "password=x host=y",
// "Server=h;Password=p") and the credentials after Bearer or Basic, whose names are secret by [SecretName] or in
// extra.
func String(s string, extra ...string) string {
	if s == "" {
		return s
	}
	out := userinfo.ReplaceAllString(s, "${1}"+Redacted+"@")
	out = scheme.ReplaceAllString(out, "${1}${2}"+Redacted)
	out = connPair.ReplaceAllStringFunc(out, func(m string) string {
		sub := connPair.FindStringSubmatch(m)
		return sub[1] + sub[2] + Redacted
	})
	if len(extra) > 0 && strings.ContainsAny(out, "=:") {
		for _, name := range extra {
			re, err := regexp.Compile(`(?i)(\b` + regexp.QuoteMeta(name) + `)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s;&,"']+)`)
			if err != nil {
				continue
			}
			out = re.ReplaceAllString(out, "${1}${2}"+Redacted)
		}
	}
	return out
}

// Endpoint returns raw, a URL a report or a log shows (an upstream's or a
// peer's address), with
// its user, password, every query value and its fragment replaced by
// "redacted" (bare: brackets would be escaped in a URL): in an address any
// of them may be a credential, whatever its name. A string that is not a
// URL is "(an unparsable URL)".
func Endpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User("redacted")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"redacted"}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = "redacted", ""
	}
	return u.String()
}

// JSON returns args, a JSON value, for a log: at any depth, the value of a
// member whose name is secret ([SecretName], or one of extra) is
// [Redacted], the value of a member named cursor is its [Digest], and
// every string has the secrets inside it redacted ([String]) and is cut to
// maxString bytes ([Bound]; zero means no cut). Empty args is {}; args
// that are not JSON are "[not JSON]".
func JSON(args json.RawMessage, maxString int, extra ...string) json.RawMessage {
	if len(bytes.TrimSpace(args)) == 0 {
		return json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return json.RawMessage(`"[not JSON]"`)
	}
	str := func(s string) string {
		s = String(s, extra...)
		if maxString > 0 {
			s = Bound(s, maxString)
		}
		return s
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch {
				case SecretName(k, extra...):
					v[k] = Redacted
				case strings.EqualFold(k, "cursor"):
					if s, ok := x.(string); ok {
						v[k] = Digest(s)
					} else {
						v[k] = walk(x)
					}
				default:
					v[k] = walk(x)
				}
			}
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case string:
			return str(v)
		}
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(walk(v)) != nil {
		return json.RawMessage(`"[not JSON]"`)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
