// Package errorbody bounds the body of the error responses of an HTTP
// handler: the MCP SDK's transports repeat what they could not read (a
// malformed payload, a Host header, a Last-Event-ID), which a client may
// make as large as a request.
package errorbody

import "net/http"

// Bound returns h with the body of every error response (status 400 and
// up) cut to n bytes; the rest is dropped, not failed. Other responses, an
// event stream among them, pass as they are (the writer unwraps for
// http.ResponseController). It is safe for concurrent use when h is.
func Bound(h http.Handler, n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&errorBody{ResponseWriter: w, limit: n}, r)
	})
}

// errorBody is a ResponseWriter that keeps at most limit bytes of
// an error response's body and drops the rest.
type errorBody struct {
	http.ResponseWriter
	limit   int
	status  int
	written int
}

func (w *errorBody) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
		if status >= 400 {
			w.Header().Del("Content-Length")
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *errorBody) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status < 400 {
		return w.ResponseWriter.Write(b)
	}
	room := max(0, w.limit-w.written)
	if len(b) > room {
		if room > 0 {
			n, err := w.ResponseWriter.Write(b[:room])
			w.written += n
			if err != nil {
				return n, err
			}
		}
		return len(b), nil // the rest is dropped, not failed
	}
	n, err := w.ResponseWriter.Write(b)
	w.written += n
	return n, err
}

// Unwrap gives http.ResponseController the writer underneath (flushing an
// event stream, deadlines).
func (w *errorBody) Unwrap() http.ResponseWriter { return w.ResponseWriter }
