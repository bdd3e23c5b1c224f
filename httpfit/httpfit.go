// Package httpfit is ctxfit's net/http adapter: a middleware that keeps the
// responses of an HTTP API inside a token budget for the LLMs that read them,
// losing nothing, and a health handler over ctxfit's telemetry.
//
// [Middleware] buffers what the wrapped handler writes, hands it to a
// [ctxfit.Guard], and sends what the Guard returns: the response itself when
// it is under the threshold, or a page, summary or chunk with a signed cursor
// that leads to the rest. A request that carries a cursor is answered by the
// Guard (from its snapshot store, without running the handler, in store
// mode). Bad ctxfit parameters are answered with a 400
// application/problem+json document (RFC 9457) that says what to fix; its
// "type" is a URI per error code ([ProblemType]), a section of the
// repository's docs/problems.md.
//
//	g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
//	...
//	defer g.Close()
//	api := http.NewServeMux()
//	api.HandleFunc("GET /api/v1/bookings", listBookings)
//	http.ListenAndServe("127.0.0.1:8080", httpfit.Middleware(g, nil)(api))
//
// # Request parameters
//
// The middleware reads the parameters named by [ctxfit.Config.Params] from
// the query string (defaults: cursor, limit, fields, startLine, endLine,
// part) and removes them from the request the handler sees, which
// therefore always produces its whole response. The remaining query parameters are the query
// a cursor is bound to: "order" and "sort" give [ctxfit.Request.Order], and
// all the others [ctxfit.Request.Filters], so a cursor used with other
// filters or another order is rejected. Values are compared as bytes: q=%ff
// and q=%fe are different queries even though neither is UTF-8.
//
// A ctxfit parameter that is not URL-encoded correctly (cursor=%zz) is
// answered with a 400 problem. The other parameters belong to the handler:
// one that is not URL-encoded correctly (q=%zz) reaches it as written, and
// the response is shaped as any other; cursors are then bound to the
// handler's query string exactly as it was sent.
//
// # Who may follow a cursor
//
// A cursor continues only the request it was issued for: the same route
// pattern, method and concrete path, the same filters and order, and the
// same subject. Anything else is answered with a 400 cursor_mismatch
// problem, and nothing of the data behind the cursor.
//
// The subject is what [Options.Subject] returns. When it is nil, the
// subject is a keyed digest of the credentials the request carried, its
// Authorization header and its cookies ([ctxfit.Guard.CredentialSubject]);
// a request with neither has no subject, and its cursors are refused to a
// request with credentials. So by default a cursor issued to one bearer
// token or session cookie is refused to another, and a rotated token, a
// renewed session or any changed cookie means following the cursors from
// the first page again. To bind cursors to the user instead, have
// Options.Subject return the authenticated user ID, for example from the
// request's context where the authentication middleware in front of
// httpfit put it:
//
//	httpfit.Middleware(g, &httpfit.Options{
//		Subject: func(r *http.Request) string { return "user:" + auth.UserID(r.Context()) },
//	})
//
// # Links, entity tags and problem types
//
// A shaped response to a GET that has a next page, chunk or member page
// carries Link: <URL>; rel="next" (RFC 8288): the request's own URL, as
// the client sent it, with the cursor parameter set and no part parameter
// (see [Middleware]). Scheme and host are the request's as it arrived
// (https when the connection is TLS, and the Host header): X-Forwarded-*
// and Forwarded are not read, since any client can send them; behind a
// proxy, [Options.BaseURL] says what clients see.
//
// A response whose body ctxfit made (a shaped response, or one served from
// the store) gets a weak ETag, and a GET with a matching If-None-Match
// gets 304 Not Modified. The tag is a digest of the response's snapshot
// and of which page of it the response is: for a first request, the
// SHA-256 of the body the handler (or the response cache) produced, the
// content address under which the store keeps it; for a continuation, the
// cursor it carries, which is sealed to one snapshot and one position;
// with, for both, the rest of what the request asks (endpoint, method,
// path, subject, order, filters, part, limit, fields, lines) and the
// strategy. It is not a digest of the body: a cursor seals the second it
// was issued, so the same page asked a second later holds other cursors,
// other budget counts and, at the end of a page, maybe an item fewer or
// more, each an exact page of the same data whose cursors lead to the
// rest; hence a weak tag. It also changes every half cursor lifetime
// (Config.CursorTTL, by [Options.Now]), so that a client told 304 keeps a
// page whose cursors have at least about half their lifetime left. A 304
// carries the Link of a fresh response, whose cursor a cache that updates
// its stored headers then holds. Two cursors to the same page issued at
// different times are two URLs, with two tags.
//
// Problem documents carry an RFC 9457 "type" per error code
// ([ProblemType]): a section of the repository's docs/problems.md that
// says what the code means and what to do about it.
//
// # What is left alone
//
// The middleware passes through, untouched and streaming as written: HEAD,
// OPTIONS, CONNECT and TRACE requests; statuses without a body (1xx, 204,
// 205 and 304; a 3xx, 4xx or 5xx body is shaped like any other, keeping
// its status, and so do its continuations, served from the store; a 206
// body too, but a shaped one goes out as 200 without Content-Range, as it
// is no longer the range); content types other than JSON and text (a compressed body
// without a Content-Type is sniffed decoded), and text/event-stream; and
// responses that the handler flushes or hijacks (from then on).
//
// Every other body passes the gate. A body compressed with gzip or
// deflate is decoded (at most [ctxfit.Config.MaxBufferBytes], so a bomb
// costs no more) and shaped like any other: shaped, it goes out
// uncompressed; under the threshold, as the handler compressed it. The
// handler sees the request's Accept-Encoding without the codings the
// middleware cannot decode (br, zstd, *); a body in one of them anyway is
// answered with a 502 response_encoding problem. A body larger than
// MaxBufferBytes (decoded), which would be far over the hard cap, is not
// sent: the handler's writes past the bound fail, and the client gets a
// 502 response_too_large problem that says to ask for less. Put authentication
// and authorization in front of the middleware, not behind it: in store mode
// a cursor request is served without running the handler.
package httpfit
