// Package mediatype classifies the media types ctxfit can shape, without
// allocating: it runs for every response.
package mediatype

import "strings"

// Kind is what a media type holds, as far as shaping is concerned.
type Kind int

const (
	// Other is anything ctxfit does not shape (images, archives, event
	// streams, malformed values).
	Other Kind = iota
	// JSON is application/json and any type whose subtype ends in +json.
	JSON
	// Text is text/* (except text/event-stream, which streams) and the
	// line-delimited JSON types, which are shaped as lines.
	Text
	// None is an empty value: no media type was given.
	None
)

// Of returns the kind of the media type ct ("application/json;
// charset=utf-8"): parameters are ignored, case does not matter.
func Of(ct string) Kind {
	switch ct { // the common spellings, at the cost of a comparison
	case "application/json", "application/json; charset=utf-8":
		return JSON
	case "text/plain; charset=utf-8":
		return Text
	}
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	if mt == "" {
		return None
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" {
		return Other
	}
	switch {
	case len(sub) >= 5 && strings.EqualFold(sub[len(sub)-5:], "+json"):
		return JSON
	case strings.EqualFold(typ, "text"):
		if strings.EqualFold(sub, "event-stream") {
			return Other
		}
		return Text
	case !strings.EqualFold(typ, "application"):
		return Other
	case strings.EqualFold(sub, "json"):
		return JSON
	case strings.EqualFold(sub, "x-ndjson"), strings.EqualFold(sub, "jsonl"):
		return Text
	}
	return Other
}
