package httpfit

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mediatype"
)

// Modes of a bufferWriter.
const (
	modeUndecided = iota // the handler has not written yet
	modeBuffer           // the response is kept for the Guard
	modeStream           // the response goes to the client as written
	modeHijacked         // the handler took the connection
)

// bufferWriter is the ResponseWriter the wrapped handler gets. It keeps the
// handler's status and body until the Guard has seen them, or passes them
// on as they come when the response is one to leave alone. The handler sets
// its headers on the underlying writer's map itself (nothing is sent before
// WriteHeader); the headers that were there before it ran are remembered,
// for a problem document that replaces its response.
type bufferWriter struct {
	rw   http.ResponseWriter
	orig http.Header // rw's headers before the handler ran
	max  int
	mode int
	// status is the handler's status once it wrote one.
	status int
	sniff  bool // no Content-Type yet: decide at the first write
	// explicit: the handler called WriteHeader; if not, the status is left
	// to the underlying writer's first Write, which sniffs a missing
	// Content-Type as it would have without the middleware.
	explicit bool
	// ct is the handler's Content-Type when it wrote its status.
	ct string
	// encoding is the handler's Content-Encoding (gzip or deflate), which
	// the body is decoded from before it is shaped; "" for none.
	encoding string
	// refused, when set, is why the body cannot be held to shape it (over
	// max bytes, an encoding ctxfit cannot read): the handler's writes are
	// discarded, and the client gets a problem instead.
	refused error
	buf     bytes.Buffer
}

// reset readies b for a response to rw, buffering up to max bytes;
// reset(nil, 0) drops the references to the last response.
func (b *bufferWriter) reset(rw http.ResponseWriter, max int) {
	if b.orig == nil {
		b.orig = make(http.Header)
	}
	clear(b.orig)
	if rw != nil {
		for k, vs := range rw.Header() {
			b.orig[k] = vs[:len(vs):len(vs)] // an append by the handler copies
		}
	}
	b.rw, b.max = rw, max
	b.mode, b.status, b.sniff, b.explicit = modeUndecided, 0, false, false
	b.ct, b.encoding, b.refused = "", "", nil
	b.buf.Reset()
}

// restore puts back the headers the underlying writer had before the
// handler ran, when the handler's response is discarded.
func (b *bufferWriter) restore() {
	syncHeader(b.rw.Header(), b.orig)
}

// Header returns the underlying writer's headers.
func (b *bufferWriter) Header() http.Header { return b.rw.Header() }

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
	h := b.rw.Header()
	cts, hasCT := h["Content-Type"]
	if len(cts) > 0 {
		b.ct = cts[0]
	}
	switch {
	case code < 200, code == http.StatusNoContent, code == http.StatusResetContent, code == http.StatusNotModified:
		// No body.
		return false
	}
	if !hasCT {
		b.sniff = true
	} else if !shapeable(b.ct) {
		return false
	}
	if cl := get(h, "Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n > int64(b.max) {
			b.refused = ctxfit.ErrResponseTooLarge
		}
	}
	if ce := strings.ToLower(strings.TrimSpace(strings.Join(h["Content-Encoding"], ","))); ce != "" && ce != "identity" {
		switch ce {
		case "gzip", "x-gzip", "deflate":
			b.encoding, b.sniff = ce, false // a compressed body is not sniffed: it is the declared type, or text
		default:
			b.refused = ctxfit.ErrResponseEncoding
		}
	}
	return true
}

// shapeable reports whether the Guard can shape a body of media type ct:
// JSON and text, but not event streams.
func shapeable(ct string) bool {
	k := mediatype.Of(ct)
	return k == mediatype.JSON || k == mediatype.Text
}

// get is http.Header.Get for a key in canonical form, without
// canonicalizing it again.
func get(h http.Header, key string) string {
	if vs := h[key]; len(vs) > 0 {
		return vs[0]
	}
	return ""
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
	if b.refused != nil {
		return 0, b.refused
	}
	if b.sniff && len(p) > 0 {
		b.sniff = false
		if !shapeable(http.DetectContentType(p)) {
			b.stream()
			return b.rw.Write(p)
		}
	}
	if b.buf.Len()+len(p) > b.max {
		// Sent as it is, it would be over the hard cap; held, over what
		// the server may hold: refused, and the handler told so.
		b.refused = ctxfit.ErrResponseTooLarge
		b.buf = bytes.Buffer{}
		return 0, b.refused
	}
	return b.buf.Write(p)
}

// decoded returns the body the handler wrote, decoded from its
// Content-Encoding, at most max bytes: ErrResponseTooLarge past them,
// ErrResponseEncoding when it does not decode.
func (b *bufferWriter) decoded() ([]byte, error) {
	return b.decode(b.max)
}

// decode is decoded with a bound of max bytes; past it, the error comes
// with the first max+1 bytes.
func (b *bufferWriter) decode(max int) ([]byte, error) {
	if b.encoding == "" {
		return b.buf.Bytes(), nil
	}
	var r io.Reader
	raw := bytes.NewReader(b.buf.Bytes())
	switch b.encoding {
	case "deflate":
		// RFC 9110's deflate is zlib's format; some servers send the raw
		// deflate stream.
		zr, err := zlib.NewReader(raw)
		if err != nil {
			r = flate.NewReader(bytes.NewReader(b.buf.Bytes()))
		} else {
			r = zr
		}
	default:
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return nil, ctxfit.ErrResponseEncoding
		}
		r = zr
	}
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(r, int64(max)+1))
	switch {
	case n > int64(max):
		return out.Bytes(), ctxfit.ErrResponseTooLarge // a bomb costs at most its bound
	case err != nil:
		return nil, ctxfit.ErrResponseEncoding
	}
	return out.Bytes(), nil
}

// compressedMedia reports whether a compressed body without a declared
// Content-Type is media (not JSON or text), by its first decoded bytes.
func (b *bufferWriter) compressedMedia() bool {
	if b.encoding == "" || b.ct != "" {
		return false
	}
	head, _ := b.decode(512) // enough to sniff, or what decodes of it
	return len(head) > 0 && !shapeable(http.DetectContentType(head))
}

// stream sends the headers, the status and what was buffered, and passes
// everything after on.
func (b *bufferWriter) stream() {
	b.mode = modeStream
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
}

// Validators and range support that describe the handler's body, dropped
// when the body sent is another.
var bodyHeaders = []string{"Etag", "Last-Modified", "Content-Md5", "Digest", "Content-Digest", "Repr-Digest", "Accept-Ranges", "Content-Range", "Content-Encoding"}

// send writes the final response: body, with the handler's status and
// headers, adjusted when the body is not the handler's; etag, when set, is
// the body's entity tag.
func (b *bufferWriter) send(body []byte, shaped bool, contentType, strategy, etag string) {
	hdr := b.rw.Header()
	if shaped {
		for _, k := range bodyHeaders {
			delete(hdr, k)
		}
		if b.status == http.StatusPartialContent {
			// The body is no longer the range its Content-Range described.
			b.status = http.StatusOK
		}
		delete(hdr, "Transfer-Encoding")
		hdr["Content-Type"] = []string{contentType}
		hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
		hdr["Ctxfit-Strategy"] = []string{strategy}
	} else {
		// The handler's own body, as it wrote it: net/http frames it as it
		// would have without the middleware.
		if contentType != "" && b.ct == "" {
			hdr["Content-Type"] = []string{contentType}
		}
	}
	if etag != "" {
		hdr["Etag"] = []string{etag}
	}
	b.commitStatus()
	_, _ = b.rw.Write(body)
}

// notModified answers 304 Not Modified in place of a body ctxfit made whose
// entity tag is etag: with the headers a 200 would have had (the
// handler's, ctxfit's Link and strategy, the tag), but none that describe
// a body (RFC 9110 §15.4.5).
func (b *bufferWriter) notModified(etag string, shaped bool, strategy string) {
	hdr := b.rw.Header()
	for _, k := range bodyHeaders {
		delete(hdr, k)
	}
	for _, k := range [...]string{"Transfer-Encoding", "Content-Length", "Content-Type"} {
		delete(hdr, k)
	}
	hdr["Etag"] = []string{etag}
	if shaped {
		hdr["Ctxfit-Strategy"] = []string{strategy}
	}
	b.rw.WriteHeader(http.StatusNotModified)
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
