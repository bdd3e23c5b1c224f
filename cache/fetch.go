package cache

import (
	"context"

	"github.com/ctxfit/ctxfit"
)

// Wrap returns a Fetch that serves req's upstream response from c, and
// otherwise runs fetch and stores its response under [Key](req) when
// [Options.Cacheable] accepts it and fetch did not call [DontStore].
// Errors of fetch are returned as they are and never stored. Concurrent
// misses of the same key run fetch once (see [Cache.Do]).
//
// A nil c means no cache: Wrap returns fetch itself. Adapters can thus keep
// an optional *Cache and wrap every Fetch:
//
//	res, err := g.Handle(ctx, req, cache.Wrap(c, req, fetch))
//
// Wrap only reads req. The key is computed once, when Wrap is called. A
// response served from the cache has the stored body, which must not be
// modified, and content type; what else fetch would have done (an HTTP
// handler's status and headers) does not happen. For an HTTP handler use
// [WrapHTTP], which follows HTTP's caching rules.
func Wrap(c *Cache, req ctxfit.Request, fetch ctxfit.Fetch) ctxfit.Fetch {
	if c == nil {
		return fetch
	}
	return c.wrap(req, target{key: Key(req)}, false, fetch)
}

// wrap returns the Fetch of [Wrap] and [WrapHTTP] for a lookup of t;
// noStore: never store.
func (c *Cache) wrap(req ctxfit.Request, t target, noStore bool, fetch ctxfit.Fetch) ctxfit.Fetch {
	return func(ctx context.Context) (ctxfit.Response, error) {
		e, o, err := c.do(ctx, t, func(ctx context.Context) (Entry, error) {
			resp, err := fetch(ctx)
			if err != nil {
				return Entry{}, err
			}
			if noStore || !c.cacheable(req, resp) {
				DontStore(ctx)
			}
			return Entry{Body: resp.Body, ContentType: resp.ContentType}, nil
		})
		if err != nil {
			return ctxfit.Response{}, err
		}
		resp := ctxfit.Response{Body: e.Body, ContentType: e.ContentType}
		if o != outcomeBypass {
			hit := o == outcomeHit || o == outcomeShared
			resp.CacheHit = &hit
		}
		return resp, nil
	}
}
