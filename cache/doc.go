// Package cache keeps upstream responses (a handler's or a tool's full
// result) for a while, so that asking again for the same thing does not run
// the upstream again.
//
// It sits in front of the upstream, not in front of ctxfit: the [Cache]
// stores the full response a ctxfit.Fetch returns, and the Guard shapes
// it (pages, summaries, chunks) on every request as usual. That is why the
// key holds what selects the upstream response and nothing of ctxfit's own
// parameters (see [Key]).
//
// # Use
//
// Create one [Cache] per process with [New] and give it to an adapter
// (httpfit.Options.Cache, mcpfit.Options.Cache, mcpgofit.Options.Cache),
// which puts it in front of every Fetch:
//
//	c := cache.New(nil) // 1 hour, 1,000 entries, 64 MiB, least recently used goes first
//	defer c.Close()
//
// A nil *Cache is valid there and means no caching.
//
// The package does not import the engine, nor the engine this package: what
// it reads of a request is a [Request], and [Cache.Lookup] and
// [Cache.LookupHTTP] prepare the lookup of one, which [Lookup.Do] runs with
// a fetch of an [Entry]. An adapter of your own runs a Fetch that way: on a
// miss Lookup.Do runs the fetch and stores its Entry.
//
// # Keys
//
// [Key] is a digest of the request's Endpoint, Path, Subject, Order and
// canonical Filters (a JSON value with sorted object keys). Two requests
// that differ only in the order of their parameters share an entry; a
// different endpoint, path, subject, order or filter value does not.
// ctxfit's own parameters (Cursor, Limit, Fields, StartLine, EndLine) and
// the RequestID are not part of the key: the cache holds the full upstream
// response, from which the Guard cuts every page, chunk and drill-down.
// Whatever else changes the upstream response (a header such as
// Accept-Language, the caller's identity) must be folded into the Subject,
// or the cache must not be used for that endpoint.
//
// [Cache.LookupHTTP] keys on the query's raw parameters instead of the Order and
// Filters (their bytes, so that values that are not valid UTF-8 stay
// apart), and on the request's values of the fields a response's Vary
// names; it leaves requests with credentials and no Subject out of the
// cache.
//
// # What is stored
//
// A successful response whose body is not empty ([Options.Cacheable]
// decides; see also [DontStore]). Errors are never stored. Under
// [Cache.LookupHTTP], HTTP's rules for a shared cache (RFC 9111) apply as well: a
// response marked no-store, private or no-cache, one that sets a cookie, one
// that is already stale or varies on every field (Vary: *) is not stored,
// nor any response to a request marked no-store; a fresh one is kept no
// longer than its freshness lifetime. When several
// requests miss the same key at once, one of them runs the upstream and the
// others wait for its response (singleflight); when that response is an
// error or is not to be stored, each waiter runs its own.
//
// # Backends
//
// A [Backend] holds the entries: [Memory] (the default) is an in-process
// LRU bounded by entries and bytes; a shared backend such as Redis lets
// several instances share entries. The Cache fails open: a backend error is
// a miss (counted in [Stats.BackendErrors]), never a failed request.
//
// # Telemetry
//
// [Cache.Stats] counts hits, misses and shared results. The per-response
// telemetry.Record.CacheHit is set by the Guard from what the wrapped
// Fetch reports (the [Outcome] of its [Lookup.Do]).
package cache
