package mcpcore

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/telemetry"
)

// MetaGate marks (true) a result the gate cut: shaping left it over the
// hard cap, or failed.
const MetaGate = "dev.ctxfit/gate"

// CompleteTool is the name under which [Shaper.Gate] checks a
// completion/complete result.
const CompleteTool = "completion/complete"

// HostFacing reports whether a resource of this uri and mimeType is
// content a host renders rather than a model reads: an MCP Apps resource
// (the ui:// scheme, or text/html;profile=mcp-app). Such content passes
// unchanged and is not counted against the model's budget.
func HostFacing(uri, mimeType string) bool {
	if strings.HasPrefix(strings.ToLower(uri), "ui://") {
		return true
	}
	base, params, err := mime.ParseMediaType(mimeType)
	return err == nil && base == "text/html" && strings.EqualFold(params["profile"], "mcp-app")
}

// gateSlack covers the tokens the gate's own text around a cut (guidance,
// link) may take beyond what it counted.
const gateSlack = 16

// Gate is the egress gate: the last check of every message an MCP adapter
// sends toward a model, after whatever shaped it. It holds the hard cap by
// exact count on what a model reads of the message, and never sends a
// message over it.
//
// These are the only messages it lets pass uncounted (the README's
// promise paragraph lists the same):
//
//   - an operator's opt-out: a tool (or resources/read, prompts/get) whose
//     [ctxfit.Endpoint] is Disabled;
//   - media a model does not read as text: image and audio blocks, blobs
//     and HTTP bodies of other media types (the shaper counts images and
//     audio by [MediaRule] and holds back what is too large behind a link);
//   - host-facing content, which a host renders rather than a model reads
//     ([HostFacing]): MCP Apps resources (a ui:// uri, or the mimeType
//     text/html;profile=mcp-app) pass unchanged, in a resources/read result
//     or embedded in a tool result;
//   - a response its handler streams (httpfit: one it flushes before it
//     ends, an event stream), until streams are shaped;
//   - what a server sends the client on its own (not an answer): the
//     proxy forwards it as it came. A sampling/createMessage request is
//     the server's prompt, which the host runs for the server once its
//     user approves it, and a model answering it has no tool to follow a
//     link, so a cut would lose what the server asked about; logging and
//     progress notifications go to the host's log and display, and an
//     elicitation/create to its user;
//   - httpfit's answers to HEAD, OPTIONS, CONNECT and TRACE: no body, a
//     description of what the server allows, a tunnel, and the echo of
//     the client's own request;
//   - a completion provider's error in mcpgofit: mcp-go hands its hooks
//     completion results only, and a server's providers cannot be wrapped
//     from outside it (its results pass the gate).
//
// Gate returns the message to send for a message toward a model: a tool
// result, or, when call.Tool is [ReadResourceTool], [GetPromptTool] or
// [CompleteTool], a resources/read, prompts/get or completion/complete
// result, as wire JSON. original is the message as it came, shaped what
// shaping made of it: nil when shaping failed or did not run, and raw is
// then the original. A tool result whose original had structured content
// keeps some (a strict client rejects a result without it when the tool
// has an output schema): when shaping left none (a TOON page, a text), it
// gets {"text": its first text block}, which the rewritten [OutputSchema]
// accepts.
//
// Within the hard cap of call.Tool (counted exactly as a client counts
// it: a tool result's whole JSON, less the data of media and host-facing
// content; a resources/read or prompts/get result's texts), it is raw
// unchanged. Over it, it is
// a lossless fallback: the first bytes that surely fit (at most the hard
// cap in bytes, cut at a UTF-8 boundary) of the message's one text, or,
// when its content is more than one text block (links, media, many
// blocks), of the whole message as it came; a line that says what was
// cut; and a ctxfit://r/... link that reads the rest by ranges
// (?bytes=A-), kept under the call's subject. The message the gate
// answers in place of raw (cut, or with its _meta held back) carries in
// its _meta the figures a shaped result carries, of the whole message
// ([MetaTokens]: what is sent; [MetaOriginalTokens]: raw; both counted
// exactly, but images and audio by the media rule), and its guidance is
// marked [MetaGuidance]. An adapter calls
// it with the result of shaping, or with the original when shaping failed
// (see the list of exceptions above).
//
// A JSON-RPC error answered in place of a result passes
// [Shaper.GateError], the same gate for errors.
//
// Its error, only when it cannot keep the original for the link (an
// unavailable store), is one the caller answers with [ErrorOf].
func (s *Shaper) Gate(ctx context.Context, call Call, original, shaped json.RawMessage) (json.RawMessage, error) {
	raw := original
	b := s.budgetOf(call.Tool)
	if shaped != nil {
		raw = keepStructured(call, original, shaped, func(m json.RawMessage) bool {
			return gateResultTokens(s.exact(), m, b.HardCap+1) <= b.HardCap-sdkSlack
		})
	}
	if b.HardCap <= 0 || len(raw) <= b.HardCap || s.optedOut(call.Tool) {
		return raw, nil // n bytes never hold more than n tokens
	}
	w, err := parseWire(raw)
	if err != nil {
		return raw, nil // not a message ctxfit can read; not ours to judge
	}
	c := s.exact()
	if call.Tool == CompleteTool {
		return s.gateCompletion(w, b.HardCap), nil
	}
	if gateTokens(c, call.Tool, raw, b.HardCap) <= b.HardCap {
		return raw, nil
	}
	// A _meta too large to send is held back behind a link first: the
	// rest may then fit as it is.
	hw, held, err := s.gateHoldMeta(ctx, call, w, b.HardCap)
	if err != nil {
		return nil, err
	}
	wholeTokens := -1 // the whole message's tokens, counted once when needed
	if held {
		wholeTokens = s.tokens(raw)
		if out := s.gateFigures(hw, wholeTokens, b.HardCap); gateTokens(c, call.Tool, out, b.HardCap) <= b.HardCap {
			return out, nil
		}
		w = hw
	}
	tool := raw
	switch call.Tool {
	case ReadResourceTool:
		tool, err = ReadAsToolResult(raw)
	case GetPromptTool:
		tool, err = PromptAsToolResult(raw)
	}
	if err != nil {
		return raw, nil
	}
	if wholeTokens < 0 {
		wholeTokens = s.tokens(raw)
	}
	return s.gateCut(ctx, call, w, raw, tool, b.HardCap, wholeTokens)
}

// gateHoldMeta returns w with its _meta held back behind a ctxfit://r/
// link (the _meta key [MetaHeldMeta]) when the _meta takes more than the
// room shaping gives it (a tenth of the hard cap, at most 1,000 tokens),
// and true; else w itself and false.
func (s *Shaper) gateHoldMeta(ctx context.Context, call Call, w *wire, hardCap int) (*wire, bool, error) {
	m := w.get("_meta")
	room := min(hardCap/10, 1000)
	if len(m) <= room || budget.CountUpTo(s.exact(), string(m), room+1) <= room {
		return w, false, nil
	}
	req := ctxfit.Request{Endpoint: call.Tool, Path: call.Tool, Subject: call.Subject, Filters: call.Arguments,
		Unrepeatable: call.Unrepeatable || isErr(w.get("isError")) || call.Tool == GetPromptTool, Block: blockMeta}
	token, err := s.Guard.Resource(ctx, req, m, "application/json")
	if err != nil {
		return nil, false, err
	}
	held, _ := marshal(map[string]any{MetaHeldMeta: ResourcePrefix + token, MetaGate: true})
	out := &wire{members: slices.Clone(w.members)}
	out.set("_meta", held)
	return out, true, nil
}

// gateFigures returns w's message with the token figures a shaped result
// carries in its _meta, those of the whole message: [MetaHardCap],
// [MetaOriginalTokens] (original: the message as it came, counted as
// [Shaper.tokens] counts, exactly but for images and audio, which the
// media rule counts) and [MetaTokens] (the message sent, counted the same
// way, these figures included).
func (s *Shaper) gateFigures(w *wire, original, hardCap int) json.RawMessage {
	m := map[string]any{}
	_ = json.Unmarshal(w.get("_meta"), &m)
	m[MetaHardCap] = hardCap
	m[MetaOriginalTokens] = original
	out := &wire{members: slices.Clone(w.members)}
	var raw json.RawMessage
	tokens := 0
	for range 4 {
		// The count goes into the message it counts: again until it holds.
		m[MetaTokens] = tokens
		meta, _ := marshal(m)
		out.set("_meta", meta)
		raw = out.marshal()
		n := s.tokens(raw)
		if n == tokens {
			break
		}
		tokens = n
	}
	return raw
}

// gateResultTokens counts a tool result as a client counts it, up to
// limit: its whole JSON (text, structured content, links, _meta, the
// envelope), less what the gate lets pass uncounted: the data of image
// and audio blocks, blobs, and the text of host-facing resources.
func gateResultTokens(c budget.Counter, raw json.RawMessage, limit int) int {
	w, err := parseWire(raw)
	if err != nil {
		return budget.CountUpTo(c, string(raw), limit)
	}
	var content []json.RawMessage
	if json.Unmarshal(w.get("content"), &content) == nil && len(content) > 0 {
		for i, bl := range content {
			content[i] = gateReadablePart(bl)
		}
		cj, _ := marshal(content)
		w.set("content", cj)
	}
	return budget.CountUpTo(c, string(clientView(w.marshal())), limit)
}

// gateReadablePart returns a content block with what a model does not
// read as text emptied: the data of an image or audio block, a blob, the
// text of a host-facing resource.
func gateReadablePart(bl json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(bl, &m) != nil {
		return bl
	}
	var typ string
	_ = json.Unmarshal(m["type"], &typ)
	switch typ {
	case "image", "audio":
		m["data"] = json.RawMessage(`""`)
	case "resource":
		var r map[string]json.RawMessage
		if json.Unmarshal(m["resource"], &r) != nil {
			return bl
		}
		var uri, mime string
		_ = json.Unmarshal(r["uri"], &uri)
		_ = json.Unmarshal(r["mimeType"], &mime)
		if _, ok := r["blob"]; ok {
			r["blob"] = json.RawMessage(`""`)
		}
		if _, ok := r["text"]; ok && HostFacing(uri, mime) {
			r["text"] = json.RawMessage(`""`)
		}
		m["resource"], _ = marshal(r)
	default:
		return bl
	}
	out, _ := marshal(m)
	return out
}

// optedOut reports whether the operator turned shaping off for tool.
func (s *Shaper) optedOut(tool string) bool {
	for _, ep := range s.Guard.Config().Endpoints {
		if ep.Match == tool {
			return ep.Disabled
		}
	}
	return false
}

// gateBlockTokens counts what a model reads of a content block, up to limit:
// a text's text, an embedded text resource's text, a link's JSON; nothing
// of media, blobs and host-facing resources.
func gateBlockTokens(c budget.Counter, raw json.RawMessage, limit int) int {
	if limit <= 0 {
		return 0
	}
	var bl struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Resource json.RawMessage `json:"resource"`
	}
	if json.Unmarshal(raw, &bl) != nil {
		return budget.CountUpTo(c, string(raw), limit)
	}
	switch bl.Type {
	case "text":
		return budget.CountUpTo(c, bl.Text, limit)
	case "image", "audio":
		return 0
	case "resource":
		return gateReadableTokens(c, bl.Resource, limit)
	}
	return budget.CountUpTo(c, string(raw), limit)
}

// gateReadableTokens counts what a model reads of a resource's contents, up
// to limit: its text, unless it is host-facing; nothing of a blob.
func gateReadableTokens(c budget.Counter, raw json.RawMessage, limit int) int {
	if limit <= 0 {
		return 0
	}
	var r struct {
		URI      string  `json:"uri"`
		MimeType string  `json:"mimeType"`
		Text     *string `json:"text"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Text == nil || HostFacing(r.URI, r.MimeType) {
		return 0
	}
	return budget.CountUpTo(c, *r.Text, limit)
}

// gateCut answers a message over the hard cap (raw; tool is the message
// in tool-result form): what it keeps behind a ctxfit:// link is the
// message's one text (block 0 of tool: its structured content, else its
// text) when its content is that one text block, else the whole message
// as it came (every block, of every kind, in order), and the message
// answers the first bytes of that which fit, a guidance line and the
// link, in its own form (w).
func (s *Shaper) gateCut(ctx context.Context, call Call, w *wire, raw, tool json.RawMessage, hardCap, original int) (json.RawMessage, error) {
	var body []byte
	var ct string
	var err error
	if tw, perr := parseWire(tool); perr == nil && gateOneText(call.Tool, readBlocks(tw.get("content"))) {
		body, ct, err = BlockBody(tool, 0)
		if err != nil || len(body) == 0 {
			// An isError result: its text.
			body, ct = gateJoinedTexts(tool), ""
		}
	} else {
		// Many blocks, or media, links, blobs: the whole message, so that
		// nothing of it is lost.
		body, ct = raw, "application/json"
	}
	mimeType := "text/plain"
	if ct != "" {
		mimeType = ct
	}
	req := ctxfit.Request{Endpoint: call.Tool, Path: call.Tool, Subject: call.Subject, Filters: call.Arguments,
		Unrepeatable: call.Unrepeatable}
	if isErr(w.get("isError")) {
		req.Unrepeatable = true // a rerun would not answer the same error
	}
	token, err := s.Guard.Resource(ctx, req, body, mimeType)
	if err != nil {
		return nil, err
	}
	structured := call.Tool != ReadResourceTool && call.Tool != GetPromptTool && !isErr(w.get("isError")) &&
		len(w.get("structuredContent")) > 0 && string(w.get("structuredContent")) != "null"
	c := s.exact()
	link := func(n int) json.RawMessage {
		l, _ := marshal(map[string]any{
			"type": "resource_link", "uri": fmt.Sprintf("%s%s?bytes=%d-", ResourcePrefix, token, n),
			"name": call.Tool + " result, the rest", "mimeType": mimeType, "size": len(body) - n,
			"_meta": map[string]any{MetaOriginal: true},
		})
		return l
	}
	line := func(n int) string {
		return GateGuidance(ResourcePrefix+token, n, len(body), hardCap)
	}
	// A token is at least one byte: n bytes of text hold at most n tokens,
	// so nothing here is counted but the few lines around the cut.
	avail := hardCap - c.Count(line(len(body))) - c.Count(string(link(len(body)))) - gateSlack
	n := gatePrefix(body, max(avail, 1), structured)
	var out json.RawMessage
	for {
		out = s.gateMessage(call, w, body, n, line(n), link(n), structured, hardCap, original)
		if n == 0 || gateTokens(c, call.Tool, out, hardCap) <= hardCap {
			break
		}
		n = gatePrefix(body, n/2, structured)
	}
	return out, nil
}

// GateGuidance is the line that says what the gate cut and how to read
// the rest: the first n bytes of the original (total bytes), the rest
// through uri.
func GateGuidance(uri string, n, total, hardCap int) string {
	return rangeGuidance(uri, 0, n, total, hardCap)
}

// gateTokens counts a message the gate built as Gate counts.
func gateTokens(c budget.Counter, tool string, raw json.RawMessage, limit int) int {
	w, err := parseWire(raw)
	if err != nil {
		return limit + 1
	}
	// What a model may read of a read's or a prompt's message: its texts
	// and its _meta.
	n := budget.CountUpTo(c, string(w.get("_meta")), limit+1)
	switch tool {
	case ReadResourceTool:
		for _, ct := range contentsOf(raw) {
			n += gateReadableTokens(c, ct, limit+1-n)
		}
	case GetPromptTool:
		var msgs []promptMessage
		_ = json.Unmarshal(w.get("messages"), &msgs)
		for _, m := range msgs {
			n += gateBlockTokens(c, m.Content, limit+1-n)
		}
	default:
		// What an SDK may add to a tool result counts too.
		return gateResultTokens(c, raw, limit+1) + sdkSlack
	}
	return n
}

// gateMessage builds the message of a cut at n bytes, in the form of w.
func (s *Shaper) gateMessage(call Call, w *wire, body []byte, n int, line string, link json.RawMessage, structured bool, hardCap, original int) json.RawMessage {
	part := string(body[:n])
	m := map[string]any{}
	_ = json.Unmarshal(w.get("_meta"), &m)
	m[MetaStrategy] = string(telemetry.StrategyCut)
	m[MetaHardCap] = hardCap
	m[MetaGate] = true
	meta, _ := marshal(m)
	guide, _ := marshal(map[string]any{"type": "text", "text": line, "_meta": map[string]any{MetaGuidance: true}})
	out := &wire{}
	for _, mb := range w.members {
		switch mb.key {
		case "content", "structuredContent", "contents", "messages", "_meta":
		default:
			out.members = append(out.members, mb)
		}
	}
	switch call.Tool {
	case ReadResourceTool:
		uri, _ := ReadURI(call.Arguments)
		contents, _ := marshal([]any{
			map[string]any{"uri": uri, "mimeType": "text/plain", "text": part},
			map[string]any{"uri": uri, "mimeType": "text/plain", "text": line, "_meta": map[string]any{MetaGuidance: true}},
		})
		out.set("contents", contents)
	case GetPromptTool:
		var msgs []promptMessage
		_ = json.Unmarshal(w.get("messages"), &msgs)
		role := "user"
		if len(msgs) > 0 {
			role = msgs[0].Role
		}
		text, _ := marshal(map[string]any{"type": "text", "text": part})
		ms, _ := marshal([]any{
			map[string]any{"role": role, "content": text},
			map[string]any{"role": role, "content": guide},
			map[string]any{"role": role, "content": link},
		})
		out.set("messages", ms)
	default:
		text := part
		if structured {
			env, _ := marshal(map[string]any{"content": part, "metadata": map[string]any{"offset": 0, "bytesInChunk": n, "totalBytes": len(body)}})
			out.set("structuredContent", env)
			text = string(env)
		}
		tb, _ := marshal(map[string]any{"type": "text", "text": text})
		content, _ := marshal([]json.RawMessage{tb, guide, link})
		out.set("content", content)
	}
	out.set("_meta", meta)
	return s.gateFigures(out, original, hardCap)
}

// gatePrefix returns the length of the longest prefix of body, cut at
// a UTF-8 boundary, of at most limit bytes (as JSON string content when
// escaped).
func gatePrefix(body []byte, limit int, escaped bool) int {
	if !escaped {
		n := min(limit, len(body))
		for n > 0 && n < len(body) && !utf8.RuneStart(body[n]) {
			n--
		}
		return n
	}
	n, size := 0, 0
	for n < len(body) {
		_, w := utf8.DecodeRune(body[n:])
		l := rawjson.EscapedLen(body[n : n+w])
		if size+l > limit {
			break
		}
		size += l
		n += w
	}
	return n
}

// gateCountedPrefix returns the length of a prefix of body, cut at a UTF-8
// boundary, of at most limit tokens by exact count: a few counts aim at
// about four bytes a token, and the byte bound (a token is at least one
// byte) is the last resort.
func gateCountedPrefix(c budget.Counter, body []byte, limit int) int {
	n := gatePrefix(body, 4*limit, false)
	for range 4 {
		t := budget.CountUpTo(c, string(body[:n]), limit+1)
		if t <= limit {
			return n
		}
		n = gatePrefix(body, int(int64(n)*int64(limit)/int64(t))*9/10, false)
	}
	return gatePrefix(body, limit, false)
}

// gateOneText reports whether a content list is at most one text block:
// its text alone is the original. An embedded text resource counts only in
// a resources/read answer (whose uri is the call's own); in a tool result
// its uri and mimeType are part of the original, so the whole message is.
func gateOneText(tool string, blocks []block) bool {
	if len(blocks) == 0 {
		return true
	}
	return len(blocks) == 1 && blocks[0].kind == "text" && (blocks[0].uri == "" || tool == ReadResourceTool)
}

// gateJoinedTexts returns the texts of a tool result's text blocks, joined by
// newlines.
func gateJoinedTexts(tool json.RawMessage) []byte {
	w, err := parseWire(tool)
	if err != nil {
		return nil
	}
	var content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(w.get("content"), &content)
	var texts []string
	for _, c := range content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return []byte(strings.Join(texts, "\n"))
}

// gateCompletion drops a completion's last values until the rest is
// within the hard cap, and says there are more.
func (s *Shaper) gateCompletion(w *wire, hardCap int) json.RawMessage {
	var comp map[string]json.RawMessage
	if json.Unmarshal(w.get("completion"), &comp) != nil {
		return w.marshal()
	}
	var values []string
	if json.Unmarshal(comp["values"], &values) != nil {
		return w.marshal()
	}
	c := s.exact()
	n, keep := 0, 0
	for _, v := range values {
		t := budget.CountUpTo(c, v, hardCap+1) + 1
		if n+t > hardCap-gateSlack {
			break
		}
		n += t
		keep++
	}
	if keep == len(values) {
		return w.marshal()
	}
	comp["values"], _ = marshal(values[:keep])
	comp["hasMore"] = json.RawMessage("true")
	cm, _ := marshal(comp)
	w.set("completion", cm)
	return w.marshal()
}

// keepStructured gives a shaped tool result whose original had structured
// content (and is no error) the structured content {"text": its first
// text block} when shaping left it none, or, when the result would then
// not fit, [heldStructuredContent].
func keepStructured(call Call, original, shaped json.RawMessage, fits func(json.RawMessage) bool) json.RawMessage {
	if call.Tool == ReadResourceTool || call.Tool == GetPromptTool || call.Tool == CompleteTool {
		return shaped
	}
	ow, err := parseWire(original)
	if err != nil || isErr(ow.get("isError")) {
		return shaped
	}
	if st := ow.get("structuredContent"); len(st) == 0 || string(st) == "null" {
		return shaped
	}
	w, err := parseWire(shaped)
	if err != nil || isErr(w.get("isError")) {
		return shaped
	}
	if st := w.get("structuredContent"); len(st) > 0 && string(st) != "null" {
		return shaped
	}
	var content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(w.get("content"), &content)
	for _, c := range content {
		if c.Type == "text" {
			st, _ := marshal(map[string]string{"text": c.Text})
			w.set("structuredContent", st)
			if out := w.marshal(); fits(out) {
				return out
			}
			break
		}
	}
	// The text twice would not fit: a pointer to the content blocks,
	// which the rewritten schema accepts as well.
	w.set("structuredContent", heldStructuredContent)
	return w.marshal()
}

// heldStructuredContent is the structured content of a shaped result
// whose own is held back or shaped into something that is not an object:
// {"text": a pointer to the content blocks}, which the rewritten
// [OutputSchema] accepts.
var heldStructuredContent = json.RawMessage(`{"text":"ctxfit: the structured content is in the content blocks, shaped to fit the context window."}`)

// MetaErrorOriginal is the key, in the data of a JSON-RPC error the gate
// cut ([Shaper.GateError]), of the ctxfit://r/ link to the whole error.
const MetaErrorOriginal = "dev.ctxfit/error"

// GateError is the egress gate ([Shaper.Gate]) for a JSON-RPC error
// answered to call (a server's error toward a model: a host shows a
// failed tools/call, resources/read or prompts/get to the model). An error
// whose message and data are within the hard cap of call.Tool by exact
// count is returned unchanged, as is one the operator opted out of
// shaping. Over it, the whole error ({"code", "message", "data"}, as
// JSON) is kept behind a ctxfit://r/ link (read by ranges, as the gate's
// cut is), and the error answered is the first bytes of its message that
// surely fit (a token is at least one byte), a line that says where the
// whole error is, and, in place of its data, {[MetaErrorOriginal]: the
// link, [MetaGate]: true}.
//
// Its error, only when it cannot keep the original (an unavailable
// store), is one the caller answers with [ErrorOf].
func (s *Shaper) GateError(ctx context.Context, call Call, code int64, message string, data json.RawMessage) (string, json.RawMessage, error) {
	hardCap := s.budgetOf(call.Tool).HardCap
	if hardCap <= 0 || len(message)+len(data) <= hardCap || s.optedOut(call.Tool) {
		return message, data, nil // n bytes never hold more than n tokens
	}
	c := s.exact()
	n := budget.CountUpTo(c, message, hardCap+1)
	if n += budget.CountUpTo(c, string(data), hardCap+1-n); n <= hardCap {
		return message, data, nil
	}
	whole := map[string]any{"code": code, "message": message}
	if len(data) > 0 {
		whole["data"] = data
	}
	body, err := marshal(whole)
	if err != nil {
		return message, data, nil
	}
	req := ctxfit.Request{Endpoint: call.Tool, Path: call.Tool, Subject: call.Subject, Filters: call.Arguments,
		Unrepeatable: true} // a rerun would not answer the same error
	token, err := s.Guard.Resource(ctx, req, body, "application/json")
	if err != nil {
		return "", nil, err
	}
	uri := ResourcePrefix + token
	line := fmt.Sprintf("\nctxfit: this error's message was cut to keep it under %d tokens; the whole error (%d bytes of JSON: code, message, data) "+
		"reads with resources/read of uri %s (ranges ?bytes=A-B or ?lines=A-B work too).", hardCap, len(body), uri)
	held, _ := marshal(map[string]any{MetaErrorOriginal: uri, MetaGate: true})
	avail := hardCap - c.Count(line) - c.Count(string(held)) - gateSlack
	cut := gatePrefix([]byte(message), max(avail, 0), false)
	return message[:cut] + line, held, nil
}
