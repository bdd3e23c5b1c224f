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
//     shaped JSON body as its text;
//   - the guidance line follows it as a text content of the same uri, with
//     _meta {"dev.ctxfit/guidance": true};
//   - a blob held back is a text content whose uri is the ctxfit://r/...
//     link that reads it whole ([Shaper.ReadResource]) and whose text says
//     what it was, with _meta {"dev.ctxfit/heldBack": original uri}.
//
// The result's _meta gets the keys of [Meta]. Errors are those of
// [Shaper.ShapeResult].
func (s *Shaper) ShapeRead(ctx context.Context, call Call, raw json.RawMessage) (Shaped, error) {
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
			Type        string          `json:"type"`
			Text        string          `json:"text"`
			URI         string          `json:"uri"`
			MimeType    string          `json:"mimeType"`
			Description string          `json:"description"`
			Name        string          `json:"name"`
			Resource    json.RawMessage `json:"resource"`
		}
		_ = json.Unmarshal(b, &bl)
		var c json.RawMessage
		switch bl.Type {
		case "resource":
			c = bl.Resource
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
	if data, err = rng.of(data); err != nil {
		return nil, err
	}
	content := map[string]any{"uri": uri, "mimeType": mime}
	if isText(mime) && utf8.Valid(data) {
		content["text"] = string(data)
	} else {
		content["blob"] = base64.StdEncoding.EncodeToString(data)
	}
	return marshal(map[string]any{"contents": []any{content}})
}
