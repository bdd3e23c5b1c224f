package mcpcore

import (
	"bytes"
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"

	"github.com/ctxfit/ctxfit"
)

// A readRange is the part of a held-back original a resources/read asks
// for with ?lines=A-B (1-based, inclusive) or ?bytes=A-B (0-based,
// inclusive, as in an HTTP Range); the zero value is the whole.
type readRange struct {
	lines      bool
	start, end int // end < 0: to the end
	set        bool
}

// parseRange reads the query of a ctxfit:// URI.
func parseRange(query string) (readRange, error) {
	if query == "" {
		return readRange{}, nil
	}
	v, err := url.ParseQuery(query)
	if err != nil {
		return readRange{}, rangeError("the part after ? is not a query: use ?lines=A-B or ?bytes=A-B")
	}
	lines, bytesAsked := v.Get("lines"), v.Get("bytes")
	for k := range v {
		if k != "lines" && k != "bytes" {
			return readRange{}, rangeError(fmt.Sprintf("unknown parameter %q: use ?lines=A-B or ?bytes=A-B", shorten(k)))
		}
	}
	switch {
	case lines != "" && bytesAsked != "":
		return readRange{}, rangeError("ask for lines or bytes, not both")
	case lines != "":
		r, err := span(lines, 1)
		r.lines = true
		return r, err
	case bytesAsked != "":
		return span(bytesAsked, 0)
	}
	return readRange{}, nil
}

// span parses "A-B" or "A-" with A at least low.
func span(s string, low int) (readRange, error) {
	a, b, ok := strings.Cut(s, "-")
	start, err := strconv.Atoi(a)
	if !ok || err != nil || start < low {
		return readRange{}, rangeError(fmt.Sprintf("%q is not a range: write A-B or A- with A at least %d", shorten(s), low))
	}
	r := readRange{start: start, end: -1, set: true}
	if b != "" {
		if r.end, err = strconv.Atoi(b); err != nil || r.end < start {
			return readRange{}, rangeError(fmt.Sprintf("%q is not a range: B must be a number at least A", shorten(s)))
		}
	}
	return r, nil
}

// of returns the part of data r names (lines keep their line breaks), or
// an error when it starts past the end.
func (r readRange) of(data []byte) ([]byte, error) {
	if !r.set {
		return data, nil
	}
	if !r.lines {
		if r.start >= len(data) {
			return nil, rangeError(fmt.Sprintf("byte %d is past the end: the original has %d bytes", r.start, len(data)))
		}
		end := len(data)
		if r.end >= 0 && r.end+1 < end {
			end = r.end + 1
		}
		return data[r.start:end], nil
	}
	line, from := 1, 0
	for line < r.start {
		i := bytes.IndexByte(data[from:], '\n')
		if i < 0 {
			return nil, rangeError(fmt.Sprintf("line %d is past the end: the original has %d lines", r.start, line))
		}
		from += i + 1
		line++
	}
	if from == len(data) && len(data) > 0 {
		return nil, rangeError(fmt.Sprintf("line %d is past the end: the original has %d lines", r.start, line-1))
	}
	to := len(data)
	if r.end >= 0 {
		at := from
		for ; line <= r.end; line++ {
			i := bytes.IndexByte(data[at:], '\n')
			if i < 0 {
				at = len(data)
				break
			}
			at += i + 1
		}
		to = at
	}
	return data[from:to], nil
}

func rangeError(msg string) error {
	return fmt.Errorf("%w: %s", ctxfit.ErrBadRequest, msg)
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// isText reports whether a held-back original of type mt is sent as text:
// text, JSON and XML.
func isText(mt string) bool {
	base, _, err := mime.ParseMediaType(mt)
	if err != nil {
		return false
	}
	return strings.HasPrefix(base, "text/") || base == "application/json" || strings.HasSuffix(base, "+json") ||
		base == "application/xml" || strings.HasSuffix(base, "+xml")
}
