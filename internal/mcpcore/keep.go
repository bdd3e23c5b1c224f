package mcpcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit"
)

// KeptEndpoint is the endpoint (telemetry, per-endpoint settings) under
// which [Shaper.Keep] keeps a cleared tool result.
const KeptEndpoint = "conversation/cleared"

// ErrNotKept: the Guard could not keep a cleared tool result where the
// continuation tool reads it back (replay mode keeps nothing; a full store
// refuses). The content must then stay, or go whole.
var ErrNotKept = errors.New("mcpcore: the guard keeps no snapshot of the content (replay mode, or the store is full)")

// Keep keeps content, a tool result that a conversation clears from its
// history, with the Guard as a snapshot bound to subject, and returns the
// arguments of the continuation tool that read it back:
// {"cursor":"...","part":1}. [Shaper.Next] with them answers the first
// part of content (a page of a JSON array or object, a chunk of a text)
// within the hard cap, with the cursors that lead to the rest; following
// them all rebuilds content byte for byte: a JSON object or array as
// itself, any other text as a JSON string whose value is content. The
// snapshot lives as long as a cursor ([ctxfit.Config].CursorTTL).
//
// Content that is not valid UTF-8 is an error, and so is a Guard that
// could not keep the snapshot: [ErrNotKept].
func (s *Shaper) Keep(ctx context.Context, subject, content string) (json.RawMessage, error) {
	if !utf8.ValidString(content) {
		return nil, errors.New("mcpcore: a cleared tool result must be valid UTF-8")
	}
	// The snapshot is one JSON array that holds content; part 1 opens its
	// element, the value at offset 1.
	var data []byte
	if trimmed := bytes.TrimSpace([]byte(content)); len(trimmed) == len(content) && len(content) > 0 &&
		(content[0] == '{' || content[0] == '[') && json.Valid(trimmed) {
		data = append(append([]byte{'['}, content...), ']')
	} else {
		str, err := marshal(content)
		if err != nil {
			return nil, err
		}
		data = append(append([]byte{'['}, str...), ']')
	}
	req := ctxfit.Request{Endpoint: KeptEndpoint, Path: KeptEndpoint, Subject: subject}
	token, err := s.Guard.Resource(ctx, req, data, "application/json")
	if err != nil {
		return nil, err
	}
	// A token that the store does not hold would be read by running a tool
	// again, which a cleared result has not: check that it is held.
	_, _, err = s.Guard.ReadResource(ctx, token, subject, func(context.Context) (ctxfit.Response, error) {
		return ctxfit.Response{}, ErrNotKept
	})
	if err != nil {
		return nil, err
	}
	return marshal(NextInput{Cursor: token, Part: 1})
}
