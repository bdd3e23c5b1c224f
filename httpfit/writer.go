package httpfit

import (
	"bufio"
	"bytes"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Modes of a bufferWriter.
const (
	modeUndecided = iota // the handler has not written yet
	modeBuffer           // the response is kept for the Guard
	modeStream           // the response goes to the client as written
	modeHijacked         // the handler took the connection
)

// bufferWriter is the ResponseWriter the wrapped handler gets. It keeps the
// handler's headers, status and body until the Guard has seen them, or
// passes them on as they come when the response is one to leave alone.
type bufferWriter struct {
	rw     http.ResponseWriter
	header http.Header // the handler's headers until they are sent
	max    int
	mode   int
	status int
	sniff  bool // no Content-Type yet: decide at the first write
	// explicit: the handler called WriteHeader; if not, the status is left
	// to the underlying writer's first Write, which sniffs a missing
	// Content-Type as it would have without the middleware.
	explicit bool
	buf      bytes.Buffer
}

// Header returns the headers the handler sets: its own map while they are
// kept, the underlying writer's once they were sent (for trailers).
func (b *bufferWriter) Header() http.Header {
	if b.mode == modeStream {
		return b.rw.Header()
	}
	return b.header
}

func (b *bufferWriter) WriteHeader(code int) {
	b.writeHeader(code, true)
}

func (b *bufferWriter) writeHeader(code int, explicit bool) {
	switch {
	case b.mode == modeStream:
		b.rw.WriteHeader(code) // net/http reports a superfluous call
		return
	case b.mode != modeUndecided:
		return
	case code >= 100 && code < 200:
		// Informational: sent at once, with the headers as they are.
		syncHeader(b.rw.Header(), b.header)
		b.rw.WriteHeader(code)
		return
	}
	b.status, b.explicit = code, explicit
	b.mode = modeBuffer
	if !b.keep(code) {
		b.stream()
	}
}

// keep reports whether a response with status code and the headers set so
// far is one to buffer for the Guard.
func (b *bufferWriter) keep(code int) bool {
	if code < 200 || code > 203 {
		return false
	}
	if ce := b.header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		return false
	}
	if cl := b.header.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n > int64(b.max) {
			return false
		}
	}
	if _, ok := b.header["Content-Type"]; !ok {
		b.sniff = true
		return true
	}
	return shapeable(b.header.Get("Content-Type"))
}

// shapeable reports whether the Guard can shape a body of media type ct:
// JSON and text, but not event streams.
func shapeable(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(ct))
	}
	switch {
	case mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/x-ndjson", mt == "application/jsonl":
		return true
	case mt == "text/event-stream":
		return false
	case strings.HasPrefix(mt, "text/"):
		return true
	}
	return false
}

func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.mode == modeUndecided {
		b.writeHeader(http.StatusOK, false)
	}
	switch b.mode {
	case modeStream:
		return b.rw.Write(p)
	case modeHijacked:
		return 0, http.ErrHijacked
	}
	if b.sniff && len(p) > 0 {
		b.sniff = false
		if !shapeable(http.DetectContentType(p)) {
			b.stream()
			return b.rw.Write(p)
		}
	}
	if b.buf.Len()+len(p) > b.max {
		b.stream()
		return b.rw.Write(p)
	}
	return b.buf.Write(p)
}

// stream sends the headers, the status and what was buffered, and passes
// everything after on.
func (b *bufferWriter) stream() {
	b.mode = modeStream
	syncHeader(b.rw.Header(), b.header)
	b.commitStatus()
	if b.buf.Len() > 0 {
		_, _ = b.rw.Write(b.buf.Bytes())
		b.buf = bytes.Buffer{}
	}
}

// Flush ends buffering and flushes the underlying writer.
func (b *bufferWriter) Flush() { _ = b.FlushError() }

// FlushError is Flush for http.ResponseController: it returns the error of
// the underlying writer's flush.
func (b *bufferWriter) FlushError() error {
	switch b.mode {
	case modeUndecided:
		b.writeHeader(http.StatusOK, false)
		if b.mode == modeBuffer {
			b.stream()
		}
	case modeBuffer:
		b.stream()
	case modeHijacked:
		return http.ErrHijacked
	}
	return http.NewResponseController(b.rw).Flush()
}

// Hijack hands the connection to the handler; what it buffered is sent
// first.
func (b *bufferWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if b.mode == modeBuffer {
		b.stream()
	}
	conn, rw, err := http.NewResponseController(b.rw).Hijack()
	if err == nil {
		b.mode = modeHijacked
	}
	return conn, rw, err
}

// Unwrap returns the underlying ResponseWriter, for http.ResponseController.
func (b *bufferWriter) Unwrap() http.ResponseWriter { return b.rw }

// finish is called when the handler has returned.
func (b *bufferWriter) finish() {
	if b.mode == modeUndecided {
		b.writeHeader(http.StatusOK, false)
	}
	if b.mode == modeStream {
		// Trailers the handler set on the map it got before streaming began.
		dst := b.rw.Header()
		for k, vs := range b.header {
			if strings.HasPrefix(k, http.TrailerPrefix) {
				if _, ok := dst[k]; !ok {
					dst[k] = vs
				}
			}
		}
		for _, t := range b.header.Values("Trailer") {
			for name := range strings.SplitSeq(t, ",") {
				name = http.CanonicalHeaderKey(strings.TrimSpace(name))
				if _, ok := dst[name]; !ok && name != "" {
					if vs, ok := b.header[name]; ok {
						dst[name] = vs
					}
				}
			}
		}
	}
}

// Validators and range support that describe the handler's body, dropped
// when the body sent is another.
var bodyHeaders = []string{"Etag", "Last-Modified", "Content-Md5", "Digest", "Content-Digest", "Repr-Digest", "Accept-Ranges", "Content-Range"}

// send writes the final response: body, with the handler's status and
// headers, adjusted when the body is not the handler's.
func (b *bufferWriter) send(body []byte, shaped bool, contentType, strategy string) {
	hdr := b.header
	if shaped {
		for _, k := range bodyHeaders {
			delete(hdr, k)
		}
		hdr.Set("Content-Type", contentType)
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
		hdr.Set("Ctxfit-Strategy", strategy)
		hdr.Del("Transfer-Encoding")
	} else {
		if contentType != "" && hdr.Get("Content-Type") == "" {
			hdr.Set("Content-Type", contentType)
		}
		if _, ok := hdr["Content-Length"]; !ok {
			hdr.Set("Content-Length", strconv.Itoa(len(body)))
		}
	}
	syncHeader(b.rw.Header(), hdr)
	b.commitStatus()
	_, _ = b.rw.Write(body)
}

// commitStatus sends the status the handler set; an implicit 200 is left to
// the first Write.
func (b *bufferWriter) commitStatus() {
	if b.explicit || b.status != http.StatusOK {
		b.rw.WriteHeader(b.status)
	}
}

// syncHeader makes dst hold the headers of src.
func syncHeader(dst, src http.Header) {
	clear(dst)
	for k, vs := range src {
		dst[k] = vs
	}
}
