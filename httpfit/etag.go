package httpfit

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"strconv"
	"time"

	"github.com/ctxfit/ctxfit"
)

// etagVersion names how entity tags are derived; it changes when that
// changes, so that no tag of one derivation matches a tag of another.
const etagVersion = "ctxfit etag 1"

// entityTag returns the weak entity tag (RFC 9110 §8.8.3) of a response
// ctxfit made for req: a digest of what the response is cut from and of
// which part of it the response is.
//
// What it is cut from is the snapshot: for a first request, the body the
// handler (or the response cache) produced, by its SHA-256, as the
// snapshot store addresses it; for a continuation, the cursor it carries,
// which is sealed to one snapshot and one position in it. Which part is
// the rest of what the Guard was asked: endpoint, method, path, subject,
// order, filters, cursor, part, limit, fields and line range, and what it
// did (strategy, content type).
//
// The tag is not a digest of the body sent: a shaped body holds cursors,
// and a cursor seals the second it was issued, so two answers to the same
// request a second apart differ in their cursors, in the budget fields
// that count them, and by as much as an item at the end of a page. Each
// is an exact page of the same data whose cursors lead to the rest, so
// they are one resource state; the tag is weak for this reason.
//
// window is the number of the half cursor lifetime the response is made
// in (see [etagWindow]): a tag matches only within one, so that a client
// told 304 Not Modified keeps a body whose cursors have at least about
// half their lifetime left.
func entityTag(req *ctxfit.Request, res *ctxfit.Result, snapshot []byte, window int64) string {
	h := sha256.New()
	put := func(s string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	put(etagVersion)
	put(strconv.FormatInt(window, 10))
	if req.Cursor == "" {
		sum := sha256.Sum256(snapshot)
		put(string(sum[:]))
	} else {
		put("")
	}
	for _, s := range [...]string{
		req.Endpoint, req.Method, req.Path, req.Subject, req.Order, string(req.Filters), req.Cursor,
		strconv.FormatInt(req.Part, 10), strconv.Itoa(req.Limit), req.Fields,
		strconv.Itoa(req.StartLine), strconv.Itoa(req.EndLine), string(res.Strategy), res.ContentType,
	} {
		put(s)
	}
	return weakTag(h)
}

// weakTag writes the first 128 bits of h's sum as a weak entity tag.
func weakTag(h hash.Hash) string {
	var sum [sha256.Size]byte
	b := make([]byte, 0, 3+22+1)
	b = append(b, `W/"`...)
	b = base64.RawURLEncoding.AppendEncode(b, h.Sum(sum[:0])[:16])
	return string(append(b, '"'))
}

// etagWindow returns the number of the half cursor lifetime now falls in:
// entity tags change from one to the next.
func etagWindow(now time.Time, ttl time.Duration) int64 {
	half := max(int64(ttl/time.Second)/2, 1)
	s := now.Unix()
	w := s / half
	if s < 0 && s%half != 0 { // floor, for a clock before 1970
		w--
	}
	return w
}

// noneMatch reports whether the If-None-Match field lines match the
// entity tag tag (RFC 9110 §13.1.2): "*", or a listed tag equal to it by
// the weak comparison (the opaque tags are equal, W/ or not). The lines
// form one comma-separated list; empty elements are allowed. A field that
// is not a valid list matches nothing: the response is sent in full.
func noneMatch(lines []string, tag string) bool {
	opaque := tag
	if len(opaque) > 2 && opaque[:2] == "W/" {
		opaque = opaque[2:]
	}
	matched := false
	for _, line := range lines {
		for i := 0; ; {
			// OWS and empty list elements
			for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == ',') {
				i++
			}
			if i == len(line) {
				break
			}
			var elem string
			switch {
			case line[i] == '*':
				elem = "*"
				i++
			default:
				start := i
				if len(line)-i >= 2 && line[i:i+2] == "W/" {
					start += 2
				}
				j := start
				if j >= len(line) || line[j] != '"' {
					return false
				}
				for j++; j < len(line) && line[j] != '"'; j++ {
					if c := line[j]; c < 0x21 || c == 0x7f {
						return false // not an etagc
					}
				}
				if j == len(line) {
					return false // no closing quote
				}
				elem = line[start : j+1]
				i = j + 1
			}
			for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
				i++
			}
			if i < len(line) && line[i] != ',' {
				return false
			}
			if elem == "*" || elem == opaque {
				matched = true
			}
		}
	}
	return matched
}
