package proxy

import "net/http"

// maxErrorBody bounds the body of an error response of the proxy's HTTP
// endpoint: the SDK's transport repeats what it could not read (a
// malformed payload, a Host header, a Last-Event-ID), which a client may
// make as large as a request.
const maxErrorBody = 1 << 10

// boundErrors cuts the body of every error response (status 400 and up) of
// h to maxErrorBody bytes.
func boundErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&errorBody{ResponseWriter: w}, r)
	})
}

// errorBody is a ResponseWriter that keeps at most maxErrorBody bytes of
// an error response's body and drops the rest.
type errorBody struct {
	http.ResponseWriter
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
	room := max(0, maxErrorBody-w.written)
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
