package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ctxfit/ctxfit/internal/principal"
)

// defaultUIListen is where --ui serves its page unless --ui-listen says
// otherwise: loopback only.
const defaultUIListen = "127.0.0.1:7077"

// uiHelp is the paragraph of the help on --ui.
const uiHelp = `With --ui, a web page at http://127.0.0.1:7077/ui (--ui-listen) shows the
recent tool calls live: what was shaped, the tokens saved, each result
beside its original. A user sees only the calls of the credential they
present, as for sessions (operators of --ui-operator-tokens-env see all);
arguments and cursors only with --ui-show-arguments.
`

// uiFlags are the flags of the web page of --ui.
type uiFlags struct {
	on           bool
	listen       string
	calls        int
	showArgs     bool
	operatorsEnv string
}

func (u *uiFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&u.on, "ui", false, "in --listen mode, serve a web page of the recent calls (what was shaped, tokens saved, each result beside its original) at http://UI-LISTEN/ui")
	fs.StringVar(&u.listen, "ui-listen", defaultUIListen, "the address of the --ui page (loopback by default)")
	fs.IntVar(&u.calls, "ui-calls", 500, "recent calls the --ui page keeps")
	fs.BoolVar(&u.showArgs, "ui-show-arguments", false, "show each call's arguments (secrets redacted) and its cursors on the --ui page")
	fs.StringVar(&u.operatorsEnv, "ui-operator-tokens-env", "", "environment variable of comma-separated bearer tokens whose holders see every credential's calls on the --ui page (default: each user sees only their own)")
}

// check validates the flags; listen is the MCP --listen address.
func (u *uiFlags) check(fs *flag.FlagSet, listen string) error {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "ui-") {
			set = true
		}
	})
	switch {
	case set && !u.on:
		return usageError{errors.New("--ui-listen, --ui-calls, --ui-show-arguments and --ui-operator-tokens-env configure --ui: add --ui, or leave them out")}
	case u.on && listen == "":
		return usageError{errors.New("--ui shows the calls of --listen sessions: give --listen ADDR as well")}
	case u.on && u.calls < 1:
		return usageError{errors.New("--ui-calls must be >= 1")}
	}
	return nil
}

// handler returns page with its API (/ui/api/) behind the same bearer
// check as the MCP endpoint (--auth-tokens-env, to which the operator
// tokens are added) and, on a
// loopback address, a check of the Host header, so that a web site a
// browser visits cannot read the page through DNS rebinding.
func (u *uiFlags) handler(page http.Handler, auth *listenAuth, operators []string, getenv func(string) string) (http.Handler, error) {
	h := page
	if auth.tokensEnv != "" {
		tokens := principal.Tokens(getenv(auth.tokensEnv))
		if len(tokens) == 0 {
			return nil, fmt.Errorf("--auth-tokens-env %s: the environment variable is empty; set it to the comma-separated bearer tokens clients may send", auth.tokensEnv)
		}
		// The page and its script hold no data: only the API asks for a
		// token, which the page sends once the user gave it.
		guarded := principal.RequireBearer(append(tokens, operators...))(page)
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/ui/api/") {
				guarded.ServeHTTP(w, r)
				return
			}
			page.ServeHTTP(w, r)
		})
	}
	if host, _, err := net.SplitHostPort(u.listen); err == nil && loopback(host) {
		next := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name, _, err := net.SplitHostPort(r.Host)
			if err != nil {
				name = r.Host
			}
			if !loopback(name) {
				http.Error(w, "Misdirected Request: the UI on a loopback address answers only to localhost, 127.0.0.1 or [::1]", http.StatusMisdirectedRequest)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	return h, nil
}

// operators are the tokens of --ui-operator-tokens-env; an error when the
// variable is named and empty. The tokens are never printed.
func (u *uiFlags) operators(getenv func(string) string) ([]string, error) {
	if u.operatorsEnv == "" {
		return nil, nil
	}
	ops := principal.Tokens(getenv(u.operatorsEnv))
	if len(ops) == 0 {
		return nil, fmt.Errorf("--ui-operator-tokens-env %s: the environment variable is empty; set it to the comma-separated operator tokens", u.operatorsEnv)
	}
	return ops, nil
}

// loopback reports whether host names the local machine.
func loopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serve serves h on the --ui-listen address until ctx ends, logging its
// URL as command's.
func (u *uiFlags) serve(ctx context.Context, h http.Handler, logger *slog.Logger, command string) (func(), error) {
	ln, err := net.Listen("tcp", u.listen)
	if err != nil {
		return nil, fmt.Errorf("--ui-listen %s: %w", u.listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui", h)
	mux.Handle("/ui/", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	logger.Info(command+": serving the UI", "url", "http://"+ln.Addr().String()+"/ui")
	stop := context.AfterFunc(ctx, func() { _ = hs.Close() })
	return func() { stop(); _ = hs.Close() }, nil
}
