// Package follow rebuilds the original of a shaped response by following
// every cursor and opening every part, as a client that wants everything
// would. It is how the tests hold the guard to its promise that nothing is
// lost, byte for byte, through every adapter: each adapter's test passes a
// Caller that makes a real request.
package follow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/ctxfit/ctxfit/internal/rawjson"
)

// Caller makes one continuation request: with cursor and part (0 for
// none), it returns the body of the shaped response.
type Caller func(cursor string, part int64) ([]byte, error)

// Stats describe what following took.
type Stats struct {
	Responses int      // responses read, the first one included
	Bodies    [][]byte // every response body read, in order
}

// maxResponses bounds one Rebuild, so that a cursor loop fails the test
// instead of hanging it.
const maxResponses = 200000

// Rebuild returns the original bytes of the response whose first shaped
// body is first, following with call.
func Rebuild(first []byte, call Caller) ([]byte, Stats, error) {
	f := follower{call: call}
	f.note(first)
	out, err := f.response(first)
	return out, f.stats, err
}

type follower struct {
	call  Caller
	stats Stats
}

func (f *follower) note(body []byte) {
	f.stats.Responses++
	f.stats.Bodies = append(f.stats.Bodies, body)
}

func (f *follower) fetch(cursor string, part int64) ([]byte, error) {
	if f.stats.Responses >= maxResponses {
		return nil, errors.New("follow: too many responses")
	}
	b, err := f.call(cursor, part)
	if err != nil {
		return nil, fmt.Errorf("follow: cursor %.20s… part %d: %w", cursor, part, err)
	}
	f.note(b)
	return b, nil
}

// envelope is a shaped response, its values as they are in the body.
type envelope struct {
	Outline    json.RawMessage `json:"outline"`
	Items      json.RawMessage `json:"items"`
	Members    json.RawMessage `json:"members"`
	Content    json.RawMessage `json:"content"`
	NextCursor *string         `json:"nextCursor"`
	PartCursor *string         `json:"partCursor"`
	Summary    json.RawMessage `json:"summary"`
	Meta       meta            `json:"meta"`
	Metadata   meta            `json:"metadata"`
}

type meta struct {
	Lead     *string `json:"lead"`
	Tail     *string `json:"tail"`
	Part     *int64  `json:"part"`
	Form     string  `json:"form"`
	Encoding string  `json:"encoding"`
}

// response rebuilds the value a first response (of a value, or of a part)
// stands for.
func (f *follower) response(body []byte) ([]byte, error) {
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("follow: a shaped body is not JSON: %w", err)
	}
	var whole []byte
	var err error
	switch {
	case e.Items != nil || e.Members != nil:
		whole, err = f.sequence(e)
	case e.Content != nil:
		whole, err = f.text(e)
	case e.Summary != nil:
		return nil, errors.New("follow: a summary: drill down with fields=all to get the whole")
	default:
		return nil, fmt.Errorf("follow: not a shaped response: %.200s", body)
	}
	if err != nil || e.Outline == nil {
		return whole, err
	}
	own := e.Meta.Part
	if own == nil {
		own = e.Metadata.Part
	}
	if own == nil {
		return nil, errors.New("follow: an outline without meta.part")
	}
	return f.substitute(e.Outline, cursorOf(e), map[int64][]byte{*own: whole})
}

func cursorOf(e envelope) string {
	if e.NextCursor != nil && *e.NextCursor != "" {
		return *e.NextCursor
	}
	if e.PartCursor != nil {
		return *e.PartCursor
	}
	return ""
}

// sequence follows the pages of an array or object from e.
func (f *follower) sequence(e envelope) ([]byte, error) {
	object := e.Members != nil
	open, close := "[", "]"
	if object {
		open, close = "{", "}"
	}
	var out []byte
	for page := 0; ; page++ {
		raw := e.Items
		if object {
			raw = e.Members
		}
		region := raw[1 : len(raw)-1]
		lead := ","
		if page == 0 {
			lead = open
		}
		if e.Meta.Lead != nil {
			lead = *e.Meta.Lead
		}
		if len(bytes.TrimSpace(region)) > 0 {
			out = append(out, lead...)
			sub, err := f.substitute(region, cursorOf(e), nil)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		} else if page == 0 {
			out = append(out, lead...)
		}
		if e.NextCursor == nil || *e.NextCursor == "" {
			tail := close
			if e.Meta.Tail != nil {
				tail = *e.Meta.Tail
			}
			return append(out, tail...), nil
		}
		var err error
		if e, err = f.next(*e.NextCursor, func(e envelope) bool { return e.Items != nil || e.Members != nil }); err != nil {
			return nil, err
		}
	}
}

// text follows the chunks of a text from e.
func (f *follower) text(e envelope) ([]byte, error) {
	var out []byte
	// A JSON string's chunks are its body: the quotes (and white space
	// around a string at the root, in lead and tail) go around them.
	str := e.Metadata.Form == "json-string"
	if str {
		lead := `"`
		if e.Metadata.Lead != nil {
			lead = *e.Metadata.Lead
		}
		out = append(out, lead...)
	}
	for {
		c := e.Content[1 : len(e.Content)-1]
		switch {
		case str:
			out = append(out, c...)
		case e.Metadata.Encoding == "latin1":
			out = append(out, rawjson.UnescapeLatin1(c)...)
		default:
			out = append(out, rawjson.Unescape(c)...)
		}
		if e.NextCursor == nil || *e.NextCursor == "" {
			if str {
				tail := `"`
				if e.Metadata.Tail != nil {
					tail = *e.Metadata.Tail
				}
				out = append(out, tail...)
			}
			return out, nil
		}
		var err error
		if e, err = f.next(*e.NextCursor, func(e envelope) bool { return e.Content != nil }); err != nil {
			return nil, err
		}
	}
}

// next follows cursor to the next page or chunk, which ok checks.
func (f *follower) next(cursor string, ok func(envelope) bool) (envelope, error) {
	body, err := f.fetch(cursor, 0)
	if err != nil {
		return envelope{}, err
	}
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		return envelope{}, err
	}
	if !ok(e) {
		return envelope{}, fmt.Errorf("follow: a cursor led to %.200s", body)
	}
	return e, nil
}

// substitute returns raw JSON (a region of values, or one value) with
// every placeholder replaced by the value it holds back: from known, or by
// opening the part with cursor.
func (f *follower) substitute(raw []byte, cursor string, known map[int64][]byte) ([]byte, error) {
	var out []byte
	last := 0
	var walk func(i int) (int, error)
	walk = func(i int) (int, error) {
		end, ok := rawjson.End(raw, i)
		if !ok {
			return 0, fmt.Errorf("follow: invalid JSON at %d of %.200s", i, raw)
		}
		switch raw[i] {
		case '{':
			if part, ok := placeholder(raw[i:end]); ok {
				v, found := known[part]
				if !found {
					if cursor == "" {
						return 0, fmt.Errorf("follow: part %d without a cursor", part)
					}
					body, err := f.fetch(cursor, part)
					if err != nil {
						return 0, err
					}
					if v, err = f.response(body); err != nil {
						return 0, err
					}
				}
				out = append(out, raw[last:i]...)
				out = append(out, v...)
				last = end
				return end, nil
			}
			it, _ := rawjson.Open(raw, i)
			for m, ok := it.Next(); ok; m, ok = it.Next() {
				if _, err := walk(m.Value); err != nil {
					return 0, err
				}
			}
		case '[':
			it, _ := rawjson.Open(raw, i)
			for m, ok := it.Next(); ok; m, ok = it.Next() {
				if _, err := walk(m.Value); err != nil {
					return 0, err
				}
			}
		}
		return end, nil
	}
	// raw is one value, or a region of array elements or object members:
	// walk it as the inside of a container.
	i := rawjson.Space(raw, 0)
	for i < len(raw) {
		if raw[i] == '"' && isMemberAt(raw, i) {
			// a member: skip the key and colon
			kend, _ := rawjson.End(raw, i)
			i = rawjson.Space(raw, kend)
			i = rawjson.Space(raw, i+1)
		}
		end, err := walk(i)
		if err != nil {
			return nil, err
		}
		i = rawjson.Space(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = rawjson.Space(raw, i+1)
		}
	}
	return append(out, raw[last:]...), nil
}

// isMemberAt reports whether the string at raw[i] is a member's key.
func isMemberAt(raw []byte, i int) bool {
	end, ok := rawjson.End(raw, i)
	if !ok {
		return false
	}
	j := rawjson.Space(raw, end)
	return j < len(raw) && raw[j] == ':'
}

// placeholder reports whether v is a placeholder, and the part it names.
func placeholder(v []byte) (int64, bool) {
	const key = `{"ctxfit:part":`
	if !bytes.HasPrefix(v, []byte(key)) {
		return 0, false
	}
	rest := v[len(key):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	part, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	return part, err == nil
}
