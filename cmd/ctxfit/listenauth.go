package main

import (
	"flag"
	"fmt"
	"net/http"

	"github.com/ctxfit/ctxfit/internal/principal"
)

// listenAuth are the flags that guard the MCP endpoint of --listen:
// built-in bearer tokens read from the environment, and the cookies that
// are part of a client's credential. Every session is bound to the
// credential that made it whatever they say.
type listenAuth struct {
	tokensEnv string
	cookies   string
}

// register defines --auth-tokens-env and --credential-cookies on fs.
func (a *listenAuth) register(fs *flag.FlagSet) {
	fs.StringVar(&a.tokensEnv, "auth-tokens-env", "", "in --listen mode, refuse MCP requests (401) without Authorization: Bearer and one of the comma-separated tokens of this environment variable (default: no check; put an authenticating server in front)")
	fs.StringVar(&a.cookies, "credential-cookies", "", "in --listen mode, comma-separated cookie names that are part of a client's credential beside Authorization and the client certificate (default none)")
}

// set reports whether a flag of a was given.
func (a *listenAuth) set() bool { return a.tokensEnv != "" || a.cookies != "" }

// cookieNames are the names of --credential-cookies.
func (a *listenAuth) cookieNames() []string { return principal.Tokens(a.cookies) }

// guard returns mcp behind the bearer check of --auth-tokens-env (mcp as
// it is without one); an error when the variable holds no token. The
// tokens are never printed.
func (a *listenAuth) guard(mcp http.Handler, getenv func(string) string) (http.Handler, error) {
	if a.tokensEnv == "" {
		return mcp, nil
	}
	tokens := principal.Tokens(getenv(a.tokensEnv))
	if len(tokens) == 0 {
		return nil, fmt.Errorf("--auth-tokens-env %s: the environment variable is empty; set it to the comma-separated bearer tokens clients may send", a.tokensEnv)
	}
	return principal.RequireBearer(tokens)(mcp), nil
}
