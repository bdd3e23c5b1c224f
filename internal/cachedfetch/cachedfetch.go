// Package cachedfetch puts a response cache (package cache) in front of a
// ctxfit.Fetch, for the adapters (httpfit, mcpfit, mcpgofit). It lives
// outside the engine so that the engine does not import the cache
// (layering_test.go holds the rule); a program with its own adapter runs
// [cache.Lookup.Do] itself.
package cachedfetch

import (
	"context"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cache"
)

// Wrap returns a Fetch that serves req's upstream response from c, and
// otherwise runs fetch and stores its response under cache.Key of req's
// Endpoint, Path, Subject, Order and Filters when c's Options.Cacheable
// accepts it and fetch did not call [cache.DontStore]. Errors of fetch are
// returned as they are and never stored. Concurrent misses of the same key
// run fetch once (see [cache.Lookup.Do]).
//
// A nil c means no cache: Wrap returns fetch itself. Adapters can thus
// keep an optional *cache.Cache and wrap every Fetch:
//
//	res, err := g.Handle(ctx, req, cachedfetch.Wrap(c, req, fetch))
//
// Wrap only reads req. The key is computed once, when Wrap is called. A
// response served from the cache has the stored body, which must not be
// modified, and content type; what else fetch would have done (an HTTP
// handler's status and headers) does not happen. The response's CacheHit
// says whether it came from the cache (nil when c is closed). For an HTTP
// handler use [WrapHTTP], which follows HTTP's caching rules.
func Wrap(c *cache.Cache, req ctxfit.Request, fetch ctxfit.Fetch) ctxfit.Fetch {
	return cached(c.Lookup(cacheRequest(req)), fetch)
}

// WrapHTTP is [Wrap] for a Fetch that runs an HTTP handler, under the
// rules of RFC 9111 for a shared cache that [cache.Cache.LookupHTTP] lists:
// r is what it reads of the HTTP request besides req. A request with
// credentials and no Subject neither reads nor fills the cache: WrapHTTP
// then returns fetch itself, as it does for a nil c.
func WrapHTTP(c *cache.Cache, req ctxfit.Request, r cache.HTTP, fetch ctxfit.Fetch) ctxfit.Fetch {
	return cached(c.LookupHTTP(cacheRequest(req), r), fetch)
}

// cacheRequest is what a cache keys on of req.
func cacheRequest(req ctxfit.Request) cache.Request {
	return cache.Request{Endpoint: req.Endpoint, Path: req.Path, Subject: req.Subject, Order: req.Order, Filters: req.Filters}
}

// cached returns the Fetch that runs fetch through l; fetch itself when l
// is nil (no caching).
func cached(l *cache.Lookup, fetch ctxfit.Fetch) ctxfit.Fetch {
	if l == nil {
		return fetch
	}
	return func(ctx context.Context) (ctxfit.Response, error) {
		e, o, err := l.Do(ctx, func(ctx context.Context) (cache.Entry, error) {
			resp, err := fetch(ctx)
			return cache.Entry{Body: resp.Body, ContentType: resp.ContentType}, err
		})
		if err != nil {
			return ctxfit.Response{}, err
		}
		resp := ctxfit.Response{Body: e.Body, ContentType: e.ContentType}
		if o != cache.Bypassed {
			hit := o.Hit()
			resp.CacheHit = &hit
		}
		return resp, nil
	}
}
