package mcpcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
)

// KeptEndpoint is the endpoint (telemetry, per-endpoint settings) under
// which [Shaper.Keep] keeps a cleared tool result.
const KeptEndpoint = "conversation/cleared"

// ErrNotKept: the Guard could not keep a cleared tool result where the
// continuation tool reads it back (replay mode keeps nothing; a full store
// refuses). The content must then stay, or go whole.
var ErrNotKept = errors.New("mcpcore: the guard keeps no snapshot of the content (replay mode, or the store is full)")

// keptText is the media type of a kept text: its bytes as they were.
const keptText = "text/plain; charset=utf-8"

// blockKept marks, as the block of its token, a text [Shaper.Keep] kept
// as it is: the continuation tool reads it back as text ([Shaper.Next]).
// The chunks of its answers are block 1, a block's text.
const blockKept = blockWhole + 16

// Keep keeps content, a tool result that a conversation clears from its
// history, with the Guard as a snapshot bound to subject, and returns the
// arguments of the continuation tool that read it back: {"cursor":"..."}
// for a text, {"cursor":"...","part":1} for a JSON object or array.
//
// A text is kept as it is, its bytes as they were, and comes back as
// text: [Shaper.Next] answers it whole when it fits the tool's threshold,
// else its first chunk, each in the first text block of the result, the
// chunk's bytes as they are in the text (not escaped again in a JSON
// envelope) and its place in the block's _meta ([MetaChunk]); a guidance
// line follows, in a block of its own, and says how to read the next
// chunk (or that it is the last). A recall so costs the text and a
// guidance line a chunk, and the chunks' texts, in order, are content
// byte for byte. A JSON object or array comes back as itself, in pages
// within the hard cap whose cursors lead through the rest; following them
// all rebuilds it byte for byte. The snapshot lives as long as a cursor
// ([ctxfit.Config].CursorTTL).
//
// Content that is not valid UTF-8 is an error, and so is a Guard that
// could not keep the snapshot: [ErrNotKept].
func (s *Shaper) Keep(ctx context.Context, subject, content string) (json.RawMessage, error) {
	if !utf8.ValidString(content) {
		return nil, errors.New("mcpcore: a cleared tool result must be valid UTF-8")
	}
	req := ctxfit.Request{Endpoint: KeptEndpoint, Path: KeptEndpoint, Subject: subject, Block: blockKept}
	data, mime := []byte(content), keptText
	if trimmed := bytes.TrimSpace([]byte(content)); len(trimmed) == len(content) && len(content) > 0 &&
		(content[0] == '{' || content[0] == '[') && json.Valid(trimmed) {
		// The snapshot is one JSON array that holds content; part 1 opens
		// its element, the value at offset 1.
		req.Block = 0
		data, mime = append(append([]byte{'['}, content...), ']'), "application/json"
	}
	token, err := s.Guard.Resource(ctx, req, data, mime)
	if err != nil {
		return nil, err
	}
	// A token that the store does not hold would be read by running a tool
	// again, which a cleared result has not: check that it is held.
	if _, _, err = s.Guard.ReadResource(ctx, token, subject, notKept); err != nil {
		return nil, err
	}
	if req.Block == blockKept {
		return marshal(NextInput{Cursor: token})
	}
	return marshal(NextInput{Cursor: token, Part: 1})
}

func notKept(context.Context) (ctxfit.Response, error) { return ctxfit.Response{}, ErrNotKept }

// recall answers the continuation tool for token, a text [Shaper.Keep]
// kept: the text whole, or its first chunk, as text.
func (s *Shaper) recall(ctx context.Context, token, subject string) json.RawMessage {
	data, _, err := s.Guard.ReadResource(ctx, token, subject, notKept)
	if err != nil {
		return ErrorResult(ErrorOf(err))
	}
	b := s.budgetOf(KeptEndpoint)
	limit := min(b.Threshold, b.HardCap-continuationReserve)
	if n := budget.CountUpTo(s.exact(), string(data), limit+1); n <= limit {
		if out, ok := s.wholeText(b, string(data), n); ok {
			return out
		}
	}
	// Chunks of the text as it is, block 1 of a result; their cursors lead
	// on through the same snapshot (kept under the same content ID). The
	// text is never read again from a tool: a store with no room for it
	// ends the answer with what fits.
	req := ctxfit.Request{Endpoint: KeptEndpoint, Path: KeptEndpoint, Subject: subject, Block: 1, Unrepeatable: true}
	out, err := s.continued(ctx, req, func(context.Context) (ctxfit.Response, error) {
		return ctxfit.Response{Body: data, ContentType: keptText}, nil
	})
	if err != nil {
		return ErrorResult(ErrorOf(err))
	}
	return out
}

// wholeText is the answer of a recall of a text that fits whole: the text
// as the only chunk, and a guidance line that says so, or false when it
// is over the hard cap.
func (s *Shaper) wholeText(b budget.Budget, text string, tokens int) (json.RawMessage, bool) {
	chunk := map[string]any{"chunkIndex": 0, "totalChunks": 1, "offset": 0, "bytesInChunk": len(text)}
	content := []json.RawMessage{
		block{raw: textBlock("")}.setText(text, chunk),
		guidanceBlock(fmt.Sprintf("Showing chunk 1 of 1 (%d tokens): the whole text. This is the last chunk.", tokens)),
	}
	c, _ := marshal(content)
	sh := &shaping{s: s, b: b, out: &wire{members: []member{{"content", c}}}, tokens: tokens}
	out, ok, _ := sh.seal(nil)
	return out.Result, ok
}
