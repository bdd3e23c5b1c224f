package bookingtools

import (
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/store/redisstore"
)

// Endpoints returns the MCP examples' per-tool settings. The booking is about
// 3,200 tokens, under the default threshold of 4,000: a lower one shows the
// summary and its drill-down.
func Endpoints() []ctxfit.Endpoint {
	return []ctxfit.Endpoint{{Match: "get_booking", Threshold: 2000}}
}

// WithEndpoints returns eps followed by the example's endpoints that eps does
// not configure already: an operator's settings win.
func WithEndpoints(eps []ctxfit.Endpoint) []ctxfit.Endpoint {
	out := slices.Clone(eps)
	for _, ex := range Endpoints() {
		if !slices.ContainsFunc(eps, func(ep ctxfit.Endpoint) bool { return ep.Match == ex.Match }) {
			out = append(out, ex)
		}
	}
	return out
}

// Guard returns the guard of the MCP examples: settings from config.Load
// (CTXFIT_* variables and the CTXFIT_CONFIG file) with the example's
// endpoints, and the Redis store when CTXFIT_REDIS_URL is set. The returned
// function closes the guard, then the store.
func Guard(getenv func(string) string, logger *slog.Logger) (*ctxfit.Guard, func() error, error) {
	cfg, err := config.Load("", getenv)
	if err != nil {
		return nil, nil, err
	}
	cfg.Endpoints = WithEndpoints(cfg.Endpoints)
	st, err := redisstore.FromURL(cfg.RedisURL, &redisstore.Options{Timeout: time.Duration(cfg.StoreTimeout)}) // nil unless CTXFIT_REDIS_URL is set
	if err != nil {
		return nil, nil, err
	}
	closeStore := func() error {
		if st == nil {
			return nil
		}
		return st.Close()
	}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Store: st, Logger: logger})
	if err != nil {
		return nil, nil, errors.Join(err, closeStore())
	}
	return g, func() error { return errors.Join(g.Close(), closeStore()) }, nil
}
