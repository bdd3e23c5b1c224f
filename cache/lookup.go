package cache

import "context"

// Lookup is the lookup of one request's upstream response, prepared by
// [Cache.Lookup] or [Cache.LookupHTTP]: the key is computed once, when it
// is prepared. [Lookup.Do] runs it; it may run any number of times, also
// concurrently.
//
// A nil *Lookup means no caching: the request neither reads nor fills the
// cache, and the caller runs its fetch itself. The zero value is not
// usable.
type Lookup struct {
	c       *Cache
	req     Request
	t       target
	noStore bool // never store (a request marked no-store)
}

// Lookup returns the lookup of req's upstream response under [Key](req).
// A nil c returns nil: no caching. Lookup only reads req.
func (c *Cache) Lookup(req Request) *Lookup {
	if c == nil {
		return nil
	}
	return &Lookup{c: c, req: req, t: target{key: Key(req)}}
}

// Do returns the entry stored for the lookup's request, or else runs fetch
// and stores its entry when [Options.Cacheable] accepts it and fetch did
// not call [DontStore] (and, for a [Cache.LookupHTTP], the response's
// header allows it). Errors of fetch are returned as they are and never
// stored. Concurrent misses of the same key run fetch once (see
// [Cache.Do]). The outcome says where the entry came from.
//
// An entry served from the cache has the stored body, which must not be
// modified, and content type; what else fetch would have done (an HTTP
// handler's status and headers) does not happen.
func (l *Lookup) Do(ctx context.Context, fetch func(context.Context) (Entry, error)) (Entry, Outcome, error) {
	c := l.c
	return c.do(ctx, l.t, func(ctx context.Context) (Entry, error) {
		e, err := fetch(ctx)
		if err != nil {
			return Entry{}, err
		}
		if l.noStore || !c.cacheable(l.req, e) {
			DontStore(ctx)
		}
		return e, nil
	})
}
