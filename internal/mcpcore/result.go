package mcpcore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/telemetry"
)

// A Shaper shapes MCP tool results in their wire form (the JSON of a
// CallToolResult) with a Guard. mcpfit, mcpgofit and the proxy convert
// their SDK's results to and from the wire form and leave the rest to it,
// so that a model sees the same results whichever serves it.
//
// A result counts what a client counts of it: the exact tokens of its
// JSON, images and audio by what the model family reads of them
// ([MediaRule]). One at most the threshold passes through unchanged, and
// so does one within the hard cap that shaped would cost more than as it
// came; one over it (an isError result too) is shaped within the hard cap
// by that count, nothing lost (package mcpfit describes what a model
// sees):
//
//   - the tool's _meta, and any other member ctxfit does not read, when
//     too large, is held back behind a ctxfit://r/ link ([MetaHeldMeta])
//     or left out (the whole result keeps it);
//   - large structured content is shaped (pages, summary, chunks) and
//     becomes the structured content and, in place of the text blocks
//     that carry it, the text block of the result; with no room for it
//     twice it is held back and its text form is shaped instead;
//   - otherwise the largest text blocks (or embedded text resources) are
//     each shaped on their own, in their place, with a share of the
//     budget, and the others stay, every block in its place; a chunk of a
//     text (or a part cut by size) is the text itself, its bytes as in the
//     original, with where it lies in the block's _meta ([MetaChunk]), so
//     that reading a text whole costs at most 1.3 times its tokens plus
//     the answers' envelopes, whatever its escapes;
//   - a content list that does not fit that way (thousands of blocks, or
//     more large ones than can each have a page) is sent in JSON pages of
//     its blocks, as they are;
//   - an image or audio block stays unless it alone is over the hard cap;
//     a blob (an embedded resource that is not text) and any media over
//     the hard cap are replaced by a resource_link to ctxfit://r/<token>,
//     which [Shaper.ReadResource] serves byte for byte, bound to the
//     session;
//   - a resource_link to the whole result as it came ([MetaOriginal])
//     closes the content, but for resources/read and prompts/get, whose
//     client can ask again.
//
// The zero Shaper is not usable: set Guard. A Shaper is safe for
// concurrent use once in use; do not change its fields then.
type Shaper struct {
	Guard *ctxfit.Guard
	Names Names
	// Media counts images and audio; the zero value means the Guard's
	// settings (Config.ImagePixelsPerToken and the others).
	Media MediaRule

	mu      sync.Mutex
	counter budget.Counter
	enc     string
	fit     GuidanceFit
}

// ResourceScheme is the scheme of the resources a Shaper serves, and
// ResourceTemplate their URI template (RFC 6570).
const (
	ResourceScheme   = "ctxfit"
	ResourcePrefix   = "ctxfit://r/"
	ResourceTemplate = "ctxfit://r/{token}{?lines,bytes}"
)

// Rerun runs a tool again (replay mode, drill-downs) and returns its
// result's wire JSON.
type Rerun func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)

// wire is a CallToolResult as JSON: the members ctxfit reads, and the
// others kept as they are, in order.
type wire struct {
	members []member
}

type member struct {
	key string
	val json.RawMessage
}

func parseWire(raw json.RawMessage) (*wire, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("mcpcore: a tool result is not a JSON object")
	}
	w := &wire{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		w.members = append(w.members, member{key, v})
	}
	return w, nil
}

func (w *wire) get(key string) json.RawMessage {
	for _, m := range w.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func (w *wire) set(key string, v json.RawMessage) {
	for i, m := range w.members {
		if m.key == key {
			w.members[i].val = v
			return
		}
	}
	w.members = append(w.members, member{key, v})
}

func (w *wire) del(key string) {
	for i, m := range w.members {
		if m.key == key {
			w.members = append(w.members[:i], w.members[i+1:]...)
			return
		}
	}
}

func (w *wire) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range w.members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// block is a content block as the shaper reads it.
type block struct {
	raw  json.RawMessage
	kind string // "text", "image", "audio", "blob", "link", "other"
	text string // text, or the text of an embedded text resource
	data []byte // the decoded bytes of an image, audio or blob
	mime string
	uri  string
}

func readBlock(raw json.RawMessage) block {
	var b struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
		URI      string `json:"uri"`
		Resource *struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     string  `json:"blob"`
		} `json:"resource"`
	}
	out := block{raw: raw, kind: "other"}
	if json.Unmarshal(raw, &b) != nil {
		return out
	}
	switch b.Type {
	case "text":
		out.kind, out.text = "text", b.Text
	case "image", "audio":
		if data, ok := decodeBase64(b.Data); ok {
			out.kind, out.data, out.mime = b.Type, data, b.MimeType
		}
	case "resource":
		if b.Resource == nil {
			break
		}
		out.mime, out.uri = b.Resource.MimeType, b.Resource.URI
		switch {
		case b.Resource.Text != nil:
			out.kind, out.text = "text", *b.Resource.Text
		default:
			if data, ok := decodeBase64(b.Resource.Blob); ok {
				out.kind, out.data = "blob", data
			}
		}
	case "resource_link":
		out.kind = "link"
	}
	return out
}

// setText returns the block with its text (or its embedded resource's
// text) replaced by a shaped body, marked in its _meta ([MetaShaped]);
// with chunk, a chunk of the text itself, whose place goes in _meta
// too ([MetaChunk]).
func (b block) setText(text string, chunk map[string]any) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(b.raw, &m) != nil || m == nil {
		m = map[string]json.RawMessage{"type": json.RawMessage(`"text"`)}
	}
	t, _ := marshal(text)
	if _, ok := m["resource"]; ok {
		var r map[string]json.RawMessage
		_ = json.Unmarshal(m["resource"], &r)
		if r == nil {
			r = map[string]json.RawMessage{}
		}
		r["text"] = t
		m["resource"], _ = marshal(r)
	} else {
		m["text"] = t
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(m["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[MetaShaped] = json.RawMessage(`"block"`)
	if chunk != nil {
		meta[MetaChunk], _ = marshal(chunk)
	}
	m["_meta"], _ = marshal(meta)
	out, _ := marshal(m)
	return out
}

// MetaShaped marks, in its _meta, a content block of a shaped result
// whose text is a shaped body: "block" when it is a page, chunk or
// summary of the block's own text (or embedded resource's text), "content"
// when it is a page of the result's content list (its blocks as JSON
// items), "structured" when it is a page of the structured content (in
// place of the text blocks that carried it). Following the cursors of the
// body rebuilds the text, content list or structured content byte for
// byte.
const MetaShaped = "dev.ctxfit/shaped"

// MetaChunk is, in the _meta of a text block (or embedded text resource)
// marked "block" by [MetaShaped], where the block's text lies when it is
// one chunk of the original text (or one part of it cut by size): the
// text is the chunk's bytes exactly as they are in the original, not
// escaped again in a JSON envelope, and MetaChunk holds the envelope's
// other fields (object): chunkIndex, totalChunks, and as far as they
// apply startLine, endLine, totalLines (lines from 1, endLine inclusive),
// bytesInChunk, offset (the chunk's first byte in the text); for a text
// that is itself one JSON string (form "json-string"), its chunks are the
// string's body as written, with lead (the opening quote and any white
// space before it) on the first and tail on the last. The chunk's cursors
// are in the result's _meta ([MetaNextCursor], or [MetaMoreCursors] for
// the blocks after the first shaped one) and in the guidance line that
// follows. The chunks' texts, in order (lead and tail around them), are
// the original text byte for byte.
const MetaChunk = "dev.ctxfit/chunk"

// textChunk reads a shaped body that is a chunk (or a cut part) of a text:
// its bytes as they are in the text, and the envelope's other fields for
// [MetaChunk]. ok is false for any other body, and for a chunk a text
// block cannot carry byte for byte (bytes that are not UTF-8) or that is
// part of a JSON document (a string inside it, with its outline).
func textChunk(res ctxfit.Result) (text string, chunk map[string]any, ok bool) {
	if !res.Shaped || res.Strategy != telemetry.StrategyChunking && res.Strategy != telemetry.StrategyCut {
		return "", nil, false
	}
	var e struct {
		Outline     json.RawMessage            `json:"outline"`
		Content     json.RawMessage            `json:"content"`
		ChunkIndex  json.RawMessage            `json:"chunkIndex"`
		TotalChunks json.RawMessage            `json:"totalChunks"`
		Metadata    map[string]json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal(res.Body, &e) != nil || e.Outline != nil || len(e.Content) < 2 || e.Content[0] != '"' {
		return "", nil, false
	}
	if e.Metadata["encoding"] != nil || e.Metadata["path"] != nil || e.Metadata["part"] != nil {
		return "", nil, false
	}
	if string(e.Metadata["form"]) == `"json-string"` {
		text = string(e.Content[1 : len(e.Content)-1]) // the string's body as written
	} else if json.Unmarshal(e.Content, &text) != nil {
		return "", nil, false
	}
	if !utf8.ValidString(text) {
		return "", nil, false
	}
	chunk = map[string]any{}
	for k, v := range e.Metadata {
		switch k {
		case "estimatedTokens", "budgetUsed", "budgetRemaining":
			// The envelope's count: the result's _meta counts what is sent.
		default:
			chunk[k] = v
		}
	}
	if e.ChunkIndex != nil {
		chunk["chunkIndex"] = e.ChunkIndex
	}
	if e.TotalChunks != nil {
		chunk["totalChunks"] = e.TotalChunks
	}
	return text, chunk, true
}

// shapedBlock is the text block that holds a shaped body of what (see
// [MetaShaped]).
func shapedBlock(body []byte, what string) json.RawMessage {
	out, _ := marshal(map[string]any{"type": "text", "text": string(body), "_meta": map[string]string{MetaShaped: what}})
	return out
}

func textBlock(text string) json.RawMessage {
	out, _ := marshal(map[string]string{"type": "text", "text": text})
	return out
}

// exact returns the exact counter of the Guard's encoding.
func (s *Shaper) exact() budget.Counter {
	enc := s.Guard.Config().Encoding
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counter == nil || s.enc != enc {
		c, err := budget.Exact(enc)
		if err != nil {
			c, _ = budget.Exact("")
		}
		s.counter, s.enc = c, enc
	}
	return s.counter
}

// budgetOf returns the budget of a tool's results.
func (s *Shaper) budgetOf(tool string) budget.Budget {
	cfg := s.Guard.Config()
	b := budget.Budget{Threshold: cfg.Threshold, HardCap: cfg.HardCap}
	for _, ep := range cfg.Endpoints {
		if ep.Match == tool {
			if ep.Threshold != 0 {
				b.Threshold = ep.Threshold
			}
			if ep.HardCap != 0 {
				b.HardCap = ep.HardCap
			}
			b.HardCap = max(b.HardCap, b.Threshold)
		}
	}
	return b
}

// media is the rule media are counted by: the Shaper's Media, else the
// Guard's settings.
func (s *Shaper) media() MediaRule {
	if s.Media != (MediaRule{}) {
		return s.Media
	}
	cfg := s.Guard.Config()
	return MediaRule{PixelsPerToken: cfg.ImagePixelsPerToken, MaxEdge: cfg.ImageMaxEdge,
		MaxImageTokens: cfg.ImageMaxTokens, AudioTokensPerSecond: cfg.AudioTokensPerSecond}
}

// mediaTokens is what the model reads of a media block.
func (s *Shaper) mediaTokens(b block) int {
	switch b.kind {
	case "image":
		if t, ok := s.media().ImageTokens(b.data); ok {
			return t
		}
	case "audio":
		return s.media().AudioTokens(b.data)
	}
	return (base64.StdEncoding.EncodedLen(len(b.data)) + 3) / 4 // as text
}

// MetaOriginal marks (true) the resource_link of a shaped result that
// leads to its whole original, as opposed to one that holds back a blob.
const MetaOriginal = "dev.ctxfit/original"

// linkSlack covers what an SDK's encoding of a resource_link (its member
// order, its escaping) may cost beyond ours.
const linkSlack = 8

// OriginalLink is the resource_link to the whole original of block blk of
// a tool's result (0: its structured content or its text), kept under
// token; size is its length in bytes.
func OriginalLink(tool string, blk int, token, mime string, size int) json.RawMessage {
	name := tool + " result"
	if blk > 0 {
		name = fmt.Sprintf("%s result, block %d", tool, blk)
	}
	link, _ := marshal(map[string]any{
		"type": "resource_link", "uri": ResourcePrefix + token, "name": name, "mimeType": mime, "size": size,
		"description": "The whole original: resources/read, or a range with ?lines=A-B or ?bytes=A-B.",
		"_meta":       map[string]any{MetaOriginal: true},
	})
	return link
}

// findHint is the sentence that tells the model it can search (or, for
// pages of JSON, query) the result instead of reading every part.
func findHint(res ctxfit.Result, n Names) string {
	if res.Strategy == telemetry.StrategyPagination {
		return fmt.Sprintf(" To find something, call %s (cursor, pattern) or %s (cursor, jq expression) with that cursor.", n.search(), n.query())
	}
	return fmt.Sprintf(" To find something, call %s (cursor, pattern) with that cursor.", n.search())
}

// meta merges ctxfit's _meta keys into the tool's own; hardCap is the
// result's (a shaped block had a share of it).
func (s *Shaper) meta(tool json.RawMessage, results []ctxfit.Result, first *ctxfit.Result, hardCap int) json.RawMessage {
	m := map[string]any{}
	if len(tool) > 0 {
		_ = json.Unmarshal(tool, &m)
	}
	if first != nil {
		for k, v := range Meta(*first) {
			m[k] = v
		}
		m[MetaHardCap] = hardCap
	}
	if len(results) > 1 {
		more := make([]map[string]any, 0, len(results)-1)
		cursors := false
		for _, r := range results[1:] {
			c := map[string]any{}
			if r.Next != "" {
				c["nextCursor"] = r.Next
			}
			if r.PartCursor != "" {
				c["partCursor"] = r.PartCursor
			}
			cursors = cursors || len(c) > 0
			more = append(more, c)
		}
		if cursors {
			m[MetaMoreCursors] = more
		}
	}
	out, _ := marshal(m)
	return out
}

// MetaMoreCursors lists, when several text blocks of a result were shaped,
// the cursors of the shaped blocks after the first, one object per block
// in their order (nextCursor and partCursor, each when the block has one;
// {} for a block with none).
const MetaMoreCursors = "dev.ctxfit/moreCursors"

// link keeps a media block's bytes with the Guard and returns the
// resource_link that stands for it.
func (s *Shaper) link(ctx context.Context, call Call, blk int, bl block, tokens int) (json.RawMessage, error) {
	req := ctxfit.Request{Endpoint: call.Tool, Path: call.Tool, Subject: call.Subject, Filters: call.Arguments, Unrepeatable: call.Unrepeatable, Block: blk}
	mime := bl.mime
	if mime == "" {
		mime = "application/octet-stream"
	}
	token, err := s.Guard.Resource(ctx, req, bl.data, mime)
	if err != nil {
		return nil, err
	}
	what := bl.kind
	if what == "blob" {
		what = "binary resource"
	}
	desc := fmt.Sprintf("Held back by ctxfit: a %s of %d bytes (%s), about %d tokens. Read it with resources/read.", what, len(bl.data), mime, tokens)
	if bl.uri != "" {
		desc += " It was " + bl.uri + "."
	}
	return marshal(map[string]any{
		"type": "resource_link", "uri": ResourcePrefix + token,
		"name": fmt.Sprintf("%s block %d", call.Tool, blk), "mimeType": mime, "size": len(bl.data), "description": desc,
	})
}

// WithStructured returns a result's wire JSON with its structured content
// set to raw: the bytes the tool (or the upstream, for the proxy) wrote, as
// they were, where an SDK's marshalling would have escaped or reordered
// them.
func WithStructured(result, raw json.RawMessage) json.RawMessage {
	w, err := parseWire(result)
	if err != nil || len(raw) == 0 {
		return result
	}
	w.set("structuredContent", raw)
	return w.marshal()
}

func isErr(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "true" }

// BlockBody returns the body of block blk of a result's wire JSON, as
// [Shaper.ShapeResult] shaped it: 0 is the structured content (or, for
// cursors of earlier releases, the text blocks joined by newlines), i > 0
// the text of content block i-1, or the bytes of its media; the blocks
// past the content blocks stand for the whole result, its _meta and its
// content list. A replay-mode continuation reruns the tool and reads the
// same body again with it.
func BlockBody(raw json.RawMessage, blk int) ([]byte, string, error) {
	w, err := parseWire(raw)
	if err != nil {
		return nil, "", err
	}
	switch blk {
	case blockWhole:
		return raw, "application/json", nil
	case blockMeta:
		if m := w.get("_meta"); len(m) > 0 {
			return m, "application/json", nil
		}
		return nil, "", errors.New("mcpcore: the result has no _meta")
	case blockContent:
		return w.get("content"), "application/json", nil
	}
	var content []json.RawMessage
	_ = json.Unmarshal(w.get("content"), &content)
	if blk == 0 {
		if st := w.get("structuredContent"); len(st) > 0 && string(st) != "null" {
			return st, "application/json", nil
		}
		var texts []string
		for _, c := range content {
			if b := readBlock(c); b.kind == "text" {
				texts = append(texts, b.text)
			}
		}
		return []byte(strings.Join(texts, "\n")), "", nil
	}
	if blk < 1 || blk > len(content) {
		return nil, "", fmt.Errorf("mcpcore: the result has no block %d", blk)
	}
	b := readBlock(content[blk-1])
	if b.kind == "text" {
		return []byte(b.text), "", nil
	}
	return b.data, b.mime, nil
}

// Next serves the continuation tool: args are its arguments, subject the
// caller's, rerun runs a tool again (replay mode; nil if it cannot). It
// returns the wire JSON of the tool result to send: the next page, chunk
// or part, or an isError result with the structured [Error] a model can act
// on (bad arguments included, as the 2025-11-25 revision asks).
func (s *Shaper) Next(ctx context.Context, subject string, args json.RawMessage, rerun Rerun) json.RawMessage {
	in, bad := s.Names.NextInput(args)
	if bad != nil {
		return ErrorResult(*bad)
	}
	req, err := s.Guard.ResumeContext(ctx, in.Cursor, subject)
	if err != nil {
		return ErrorResult(ErrorOf(err))
	}
	if req.Endpoint == KeptEndpoint && req.Block == blockKept {
		return s.recall(ctx, in.Cursor, subject) // a text Keep kept
	}
	req.Part = in.Part
	return s.serve(ctx, req, rerun)
}

// Details serves the drill-down tool (see [Shaper.Next]): it opens only
// the object a summary's details cursor names, for the subject it was
// issued to.
func (s *Shaper) Details(ctx context.Context, subject string, args json.RawMessage, rerun Rerun) json.RawMessage {
	in, bad := s.Names.DetailsInput(args)
	if bad != nil {
		return ErrorResult(*bad)
	}
	req, err := s.Guard.ResumeContext(ctx, in.Cursor, subject)
	if err != nil {
		return ErrorResult(ErrorOf(err))
	}
	req.Fields = in.Fields
	return s.serve(ctx, req, rerun)
}

// Search serves the search tool (see [Shaper.Next]): what matches in the
// result a cursor belongs to, for the subject it was issued to.
func (s *Shaper) Search(ctx context.Context, subject string, args json.RawMessage, rerun Rerun) json.RawMessage {
	in, bad := s.Names.SearchInput(args)
	if bad != nil {
		return ErrorResult(*bad)
	}
	req, err := s.Guard.ResumeContext(ctx, in.Cursor, subject)
	if err != nil {
		return ErrorResult(ErrorOf(err))
	}
	req.Search = &ctxfit.Search{Pattern: in.Pattern, Literal: in.Literal, IgnoreCase: in.IgnoreCase, Path: in.Path, Context: in.Context}
	return s.serve(ctx, req, rerun)
}

// Query serves the query tool (see [Shaper.Next]): a jq expression over
// the result a cursor belongs to.
func (s *Shaper) Query(ctx context.Context, subject string, args json.RawMessage, rerun Rerun) json.RawMessage {
	in, bad := s.Names.QueryInput(args)
	if bad != nil {
		return ErrorResult(*bad)
	}
	req, err := s.Guard.ResumeContext(ctx, in.Cursor, subject)
	if err != nil {
		return ErrorResult(ErrorOf(err))
	}
	req.Query = in.Expression
	return s.serve(ctx, req, rerun)
}

// errToolResult carries a tool's own isError result (or a result ctxfit
// cannot read) out of a Fetch, to be sent as it is.
type errToolResult struct{ raw json.RawMessage }

func (e *errToolResult) Error() string { return "mcpcore: the tool answered with an error" }

// ToolError is a protocol error of a tool a continuation ran again (for
// example a JSON-RPC error from the SDK): Rerun returns it, and the
// continuation answers [ToolFailed].
type ToolError struct{ Message string }

func (e *ToolError) Error() string { return e.Message }

// serve answers a continuation or drill-down request.
func (s *Shaper) serve(ctx context.Context, req ctxfit.Request, rerun Rerun) json.RawMessage {
	fetch := func(ctx context.Context) (ctxfit.Response, error) {
		if rerun == nil {
			return ctxfit.Response{}, errors.New("mcpcore: this server cannot run the tool again")
		}
		raw, err := rerun(ctx, req.Endpoint, req.Filters)
		if err != nil {
			return ctxfit.Response{}, err
		}
		body, ct, err := BlockBody(raw, req.Block)
		if err != nil {
			return ctxfit.Response{}, &errToolResult{raw}
		}
		return ctxfit.Response{Body: body, ContentType: ct}, nil
	}
	out, err := s.continued(ctx, req, fetch)
	if err != nil {
		var tr *errToolResult
		var te *ToolError
		switch {
		case errors.As(err, &tr):
			return tr.raw // the tool answered with an error or another kind of result
		case errors.As(err, &te):
			return ErrorResult(ToolFailed(req.Endpoint, te.Message))
		}
		return ErrorResult(ErrorOf(err))
	}
	return out
}

// ErrorResult is the wire JSON of a tool result with isError set, carrying
// e as text and as structured content.
func ErrorResult(e Error) json.RawMessage {
	data, _ := marshal(e)
	c, _ := marshal([]json.RawMessage{textBlock(e.Text())})
	w := &wire{members: []member{{"content", c}, {"structuredContent", data}, {"isError", json.RawMessage("true")}}}
	return w.marshal()
}
