package mcpcore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/telemetry"
)

// ReadResourceTool is the name under which a Shaper shapes, and a client
// runs again, a resources/read result: [Call].Tool and [ctxfit.Request]
// Endpoint of its cursors, with the arguments {"uri": "..."} (see
// [ReadArguments]). MCP tool names cannot hold a slash, so it names no
// tool of any server.
const ReadResourceTool = "resources/read"

// ReadArguments returns the canonical arguments of a resources/read of
// uri, as [Call].Arguments: {"uri": uri}.
func ReadArguments(uri string) json.RawMessage {
	out, _ := marshal(map[string]string{"uri": uri})
	return out
}

// ReadURI returns the uri of arguments built by [ReadArguments].
func ReadURI(args json.RawMessage) (string, error) {
	var in struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.URI == "" {
		return "", errors.New(`mcpcore: the arguments of a resources/read need {"uri": "..."}`)
	}
	return in.URI, nil
}

// ReadAsToolResult returns the wire JSON of a ReadResourceResult as the
// wire JSON of a tool result: each of its contents an embedded resource
// block, its _meta kept. [BlockBody] reads a rerun read from it as it
// reads a tool result.
func ReadAsToolResult(raw json.RawMessage) (json.RawMessage, error) {
	w, err := parseWire(raw)
	if err != nil {
		return nil, err
	}
	var contents []json.RawMessage
	if err := json.Unmarshal(w.get("contents"), &contents); err != nil {
		return nil, errors.New("mcpcore: a resources/read result has no contents")
	}
	blocks := make([]json.RawMessage, len(contents))
	for i, c := range contents {
		blocks[i], _ = marshal(map[string]json.RawMessage{"type": json.RawMessage(`"resource"`), "resource": c})
	}
	content, _ := marshal(blocks)
	tw := &wire{members: []member{{"content", content}}}
	if meta := w.get("_meta"); len(meta) > 0 {
		tw.set("_meta", meta)
	}
	return tw.marshal(), nil
}

// ShapeRead shapes the wire JSON of a resources/read result of uri as
// [Shaper.ShapeResult] shapes a tool result whose blocks are its contents
// (call.Tool is [ReadResourceTool], call.Arguments [ReadArguments](uri)).
// A shaped result keeps the form of a ReadResourceResult:
//
//   - a content whose text was shaped keeps its uri and mimeType, with the
//     shaped body as its text and _meta {"dev.ctxfit/shaped": "block"}: a
//     chunk of the text as it is, with its place in _meta [MetaChunk], or
//     a shaped JSON body (a page, a summary);
//   - the guidance line follows it as a text content of the same uri, with
//     _meta {"dev.ctxfit/guidance": true};
//   - host-facing content ([HostFacing]: an MCP Apps page) is not shaped:
//     a host renders it, a model does not read it;
//   - a blob held back is a text content whose uri is the ctxfit://r/...
//     link that reads it whole ([Shaper.ReadResource]) and whose text says
//     what it was, with _meta {"dev.ctxfit/heldBack": original uri}.
//
// The result's _meta gets the keys of [Meta]. Errors are those of
// [Shaper.ShapeResult].
func (s *Shaper) ShapeRead(ctx context.Context, call Call, raw json.RawMessage) (Shaped, error) {
	if readHostFacing(call, raw) {
		return Shaped{Result: raw}, nil // a host renders it; a model does not read it
	}
	tool, err := ReadAsToolResult(raw)
	if err != nil {
		return Shaped{Result: raw}, nil // not ours to judge
	}
	call.read = true
	shaped, err := s.ShapeResult(ctx, call, tool)
	if err != nil || !shaped.Shaped {
		return Shaped{Result: raw, Results: shaped.Results}, err
	}
	sw, err := parseWire(shaped.Result)
	if err != nil {
		return Shaped{}, err
	}
	var blocks []json.RawMessage
	_ = json.Unmarshal(sw.get("content"), &blocks)
	uri, _ := ReadURI(call.Arguments)
	contents := make([]json.RawMessage, 0, len(blocks))
	for _, b := range blocks {
		var bl struct {
			Type        string                     `json:"type"`
			Text        string                     `json:"text"`
			URI         string                     `json:"uri"`
			MimeType    string                     `json:"mimeType"`
			Description string                     `json:"description"`
			Name        string                     `json:"name"`
			Resource    json.RawMessage            `json:"resource"`
			Meta        map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(b, &bl)
		var c json.RawMessage
		switch bl.Type {
		case "resource":
			c = withShapedMeta(bl.Resource, bl.Meta)
			var r struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(bl.Resource, &r) == nil && r.URI != "" {
				uri = r.URI
			}
		case "resource_link":
			c, _ = marshal(map[string]any{"uri": bl.URI, "mimeType": "text/plain", "text": bl.Description,
				"_meta": map[string]any{MetaHeldBack: originalURI(contentsOf(raw), bl.Name)}})
		default:
			c, _ = marshal(map[string]any{"uri": uri, "mimeType": "text/plain", "text": bl.Text,
				"_meta": map[string]any{MetaGuidance: true}})
		}
		contents = append(contents, c)
	}
	w, err := parseWire(raw)
	if err != nil {
		return Shaped{}, err
	}
	cs, _ := marshal(contents)
	w.set("contents", cs)
	w.set("_meta", sw.get("_meta"))
	return Shaped{Result: w.marshal(), Shaped: true, Results: shaped.Results}, nil
}

// withShapedMeta returns a resource's contents with the keys that mark a
// shaped text ([MetaShaped], [MetaChunk]) of its block's _meta in its own.
func withShapedMeta(resource json.RawMessage, meta map[string]json.RawMessage) json.RawMessage {
	if meta[MetaShaped] == nil {
		return resource
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(resource, &r) != nil || r == nil {
		return resource
	}
	var own map[string]json.RawMessage
	_ = json.Unmarshal(r["_meta"], &own)
	if own == nil {
		own = map[string]json.RawMessage{}
	}
	for _, k := range []string{MetaShaped, MetaChunk} {
		if v, ok := meta[k]; ok {
			own[k] = v
		}
	}
	r["_meta"], _ = marshal(own)
	out, _ := marshal(r)
	return out
}

// readHostFacing reports whether a resources/read result is host-facing
// content ([HostFacing]): its uri, or every one of its contents.
func readHostFacing(call Call, raw json.RawMessage) bool {
	if uri, err := ReadURI(call.Arguments); err == nil && HostFacing(uri, "") {
		return true
	}
	contents := contentsOf(raw)
	for _, c := range contents {
		var r struct {
			URI      string `json:"uri"`
			MimeType string `json:"mimeType"`
		}
		if json.Unmarshal(c, &r) != nil || !HostFacing(r.URI, r.MimeType) {
			return false
		}
	}
	return len(contents) > 0
}

// Keys of the _meta of the contents of a shaped resources/read result.
const (
	// MetaGuidance marks the text content that holds the guidance line
	// (true).
	MetaGuidance = "dev.ctxfit/guidance"
	// MetaHeldBack marks the text content that stands for a blob held back
	// behind its ctxfit://r/... uri: the blob's own uri (string, "" when
	// unknown).
	MetaHeldBack = "dev.ctxfit/heldBack"
)

// contentsOf returns the contents of a ReadResourceResult's wire JSON.
func contentsOf(raw json.RawMessage) []json.RawMessage {
	var r struct {
		Contents []json.RawMessage `json:"contents"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Contents
}

// originalURI returns the uri of the content a link named "TOOL block N"
// ([Shaper.ShapeResult]) stands for: contents[N-1]; "" when unknown.
func originalURI(contents []json.RawMessage, name string) string {
	i := strings.LastIndexByte(name, ' ')
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 1 || n > len(contents) {
		return ""
	}
	var c struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(contents[n-1], &c)
	return c.URI
}

// ReadResource serves resources/read of a URI a resource_link of this
// Shaper named (ctxfit://r/<token>): the held-back bytes, whole, as a blob
// (or as text when they are UTF-8 text), provided the token verifies and
// was issued for subject. In replay mode it runs the tool again with rerun.
// It returns the wire JSON of a ReadResourceResult, or an error whose
// [ErrorOf] says what went wrong.
func (s *Shaper) ReadResource(ctx context.Context, subject, uri string, rerun Rerun) (json.RawMessage, error) {
	token, ok := strings.CutPrefix(uri, ResourcePrefix)
	if !ok {
		return nil, fmt.Errorf("mcpcore: %q is not a resource of ctxfit", uri)
	}
	token, query, _ := strings.Cut(token, "?")
	rng, err := parseRange(query)
	if err != nil {
		return nil, err
	}
	fetch := func(ctx context.Context) (ctxfit.Response, error) {
		req, err := s.Guard.ResumeContext(ctx, token, subject)
		if err != nil {
			return ctxfit.Response{}, err
		}
		if rerun == nil {
			return ctxfit.Response{}, errors.New("mcpcore: this server cannot run the tool again")
		}
		raw, err := rerun(ctx, req.Endpoint, req.Filters)
		if err != nil {
			return ctxfit.Response{}, err
		}
		body, ct, err := BlockBody(raw, req.Block)
		if err != nil {
			return ctxfit.Response{}, err
		}
		return ctxfit.Response{Body: body, ContentType: ct}, nil
	}
	data, mime, err := s.Guard.ReadResource(ctx, token, subject, fetch)
	if err != nil {
		return nil, err
	}
	whole := len(data)
	part, err := rng.of(data)
	if err != nil {
		return nil, err
	}
	from := cap(data) - cap(part) // part is data[from:...]
	content := map[string]any{"uri": uri, "mimeType": mime}
	if !isText(mime) || !utf8.Valid(part) {
		// Media a model does not read as text: whole, uncounted.
		content["blob"] = base64.StdEncoding.EncodeToString(part)
		return marshal(map[string]any{"contents": []any{content}})
	}
	hardCap := s.readCap(ctx, token, subject)
	if hardCap <= 0 || len(part) <= hardCap || budget.CountUpTo(s.exact(), string(part), hardCap+1) <= hardCap {
		content["text"] = string(part)
		return marshal(map[string]any{"contents": []any{content}})
	}
	// Over the hard cap: the first bytes that surely fit (a token is at
	// least one byte), and the range that reads on.
	base := ResourcePrefix + token
	line := GateGuidance(base, from+len(part), whole, hardCap)
	n := gateCountedPrefix(s.exact(), part, max(hardCap-s.exact().Count(line)-gateSlack, 1))
	line = rangeGuidance(base, from, from+n, whole, hardCap)
	content["text"] = string(part[:n])
	return marshal(map[string]any{
		"contents": []any{content, map[string]any{"uri": uri, "mimeType": "text/plain", "text": line,
			"_meta": map[string]any{MetaGuidance: true}}},
		"_meta": map[string]any{MetaStrategy: string(telemetry.StrategyCut), MetaHardCap: hardCap, MetaGate: true,
			MetaNextRange: fmt.Sprintf("%s?bytes=%d-", base, from+n)},
	})
}

// MetaNextRange is, on a resources/read of a ctxfit:// resource cut to the
// hard cap, the uri that reads on from where it stops (string).
const MetaNextRange = "dev.ctxfit/nextRange"

// rangeGuidance is the line that follows a range of a held-back original
// cut to the hard cap: bytes from-(to-1) of total, and the range to read
// next.
func rangeGuidance(base string, from, to, total, hardCap int) string {
	return fmt.Sprintf("ctxfit: this is bytes %d-%d of %d, cut to keep the answer under %d tokens. "+
		"For the rest call resources/read with uri %s?bytes=%d- (any range ?bytes=A-B or ?lines=A-B works).",
		from, max(to-1, from), total, hardCap, base, to)
}

// readCap is the hard cap of a resources/read of a ctxfit:// resource:
// that of the tool whose result it was kept from.
func (s *Shaper) readCap(ctx context.Context, token, subject string) int {
	if req, err := s.Guard.ResumeContext(ctx, token, subject); err == nil {
		return s.budgetOf(req.Endpoint).HardCap
	}
	return s.Guard.Config().HardCap
}
