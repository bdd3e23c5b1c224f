package follow

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// A Reader reads what a ctxfit://r/ link leads to, whole.
type Reader func(uri string) ([]byte, error)

// Block is a content block of a tool result as [Blocks] rebuilds it:
// Raw is its JSON, Text the text of a block whose text was shaped (Raw
// is then the shaped block), Held the bytes of a media or binary block
// held back behind a link (Raw is then the link).
type Block struct {
	Raw  json.RawMessage
	Text *string
	Held []byte
}

// wireBlock is what Blocks reads of a block of a shaped result.
type wireBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	URI      string          `json:"uri"`
	Resource json.RawMessage `json:"resource"`
	Meta     map[string]any  `json:"_meta"`
}

// Blocks rebuilds the content list of the tool result a shaped result
// (its wire JSON) stands for, following every cursor with call and
// reading every held-back block with read: the guidance blocks ctxfit
// added and the link to the whole original are left out. It also
// returns the structured content, when the result holds a page of it.
//
// A result the egress gate cut (_meta dev.ctxfit/gate, strategy cut) is
// its first bytes and a link to the rest (ctxfit://r/...?bytes=N-): read
// reads the rest, and the first bytes and the rest are the result's one
// text, its structured content, or, when the link is JSON, the whole
// result as it came, whose blocks and structured content Blocks returns.
func Blocks(shaped json.RawMessage, call Caller, read Reader) ([]Block, json.RawMessage, error) {
	var r struct {
		Content    []json.RawMessage `json:"content"`
		Structured json.RawMessage   `json:"structuredContent"`
		Meta       map[string]any    `json:"_meta"`
	}
	if err := json.Unmarshal(shaped, &r); err != nil {
		return nil, nil, fmt.Errorf("follow: a tool result is not JSON: %w", err)
	}
	if r.Meta["dev.ctxfit/gate"] == true && r.Meta["dev.ctxfit/strategy"] == "cut" {
		return gateCut(r.Content, r.Structured, read)
	}
	var out []Block
	var structured json.RawMessage
	cursors := cursorsOf(shaped)
	shapedN := 0
	for _, raw := range r.Content {
		var b wireBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, nil, err
		}
		var cur blockCursors
		if b.Meta["dev.ctxfit/shaped"] != nil {
			if shapedN < len(cursors) {
				cur = cursors[shapedN]
			}
			shapedN++
		}
		switch {
		case b.Meta["dev.ctxfit/guidance"] == true, b.Meta["dev.ctxfit/original"] == true:
			continue
		case b.Meta["dev.ctxfit/shaped"] == "content":
			list, _, err := Rebuild([]byte(b.Text), call)
			if err != nil {
				return nil, nil, err
			}
			var items []json.RawMessage
			if err := json.Unmarshal(list, &items); err != nil {
				return nil, nil, fmt.Errorf("follow: the content list is not a list: %w", err)
			}
			for _, it := range items {
				out = append(out, Block{Raw: it})
			}
		case b.Meta["dev.ctxfit/shaped"] == "structured":
			whole, _, err := Rebuild([]byte(b.Text), call)
			if err != nil {
				return nil, nil, err
			}
			structured = whole
		case b.Meta["dev.ctxfit/shaped"] == "block":
			body := b.Text
			if b.Resource != nil {
				var res struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(b.Resource, &res)
				body = res.Text
			}
			if chunk, ok := b.Meta["dev.ctxfit/chunk"].(map[string]any); ok {
				body = string(ChunkBody(body, chunk, cur.Next, cur.Part))
			}
			text, _, err := Rebuild([]byte(body), call)
			if err != nil {
				return nil, nil, err
			}
			s := string(text)
			out = append(out, Block{Raw: raw, Text: &s})
		case b.Type == "resource_link" && strings.HasPrefix(b.URI, "ctxfit://r/"):
			data, err := read(b.URI)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, Block{Raw: raw, Held: data})
		default:
			out = append(out, Block{Raw: raw})
		}
	}
	return out, structured, nil
}

// gateCut rebuilds a result the egress gate cut ([Blocks]): content is
// its first bytes (or structured, their envelope), the guidance and the
// link to the rest.
func gateCut(content []json.RawMessage, structured json.RawMessage, read Reader) ([]Block, json.RawMessage, error) {
	var first *wireBlock
	var rest struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
	}
	for _, raw := range content {
		var b wireBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, nil, err
		}
		switch {
		case b.Meta["dev.ctxfit/original"] == true:
			_ = json.Unmarshal(raw, &rest)
		case b.Meta["dev.ctxfit/guidance"] == true:
		case first == nil && b.Type == "text":
			first = &b
		}
	}
	if first == nil || !strings.HasPrefix(rest.URI, "ctxfit://r/") || !strings.Contains(rest.URI, "?bytes=") {
		return nil, nil, fmt.Errorf("follow: a cut result without its first bytes and a link to the rest: %.300s", content)
	}
	prefix := first.Text
	var env struct {
		Content *string `json:"content"`
	}
	if len(structured) > 0 && json.Unmarshal(structured, &env) == nil && env.Content != nil {
		prefix = *env.Content
	}
	tail, err := read(rest.URI)
	if err != nil {
		return nil, nil, err
	}
	body := prefix + string(tail)
	if rest.MimeType != "application/json" {
		// The result's one text.
		raw, _ := marshalUnescaped(map[string]string{"type": "text", "text": body})
		return []Block{{Raw: raw, Text: &body}}, nil, nil
	}
	var whole struct {
		Content    []json.RawMessage `json:"content"`
		Structured json.RawMessage   `json:"structuredContent"`
	}
	if json.Unmarshal([]byte(body), &whole) != nil || whole.Content == nil {
		// The result's structured content.
		return nil, json.RawMessage(body), nil
	}
	// The whole result as it came.
	out := make([]Block, len(whole.Content))
	for i, c := range whole.Content {
		out[i] = Block{Raw: c}
	}
	if len(whole.Structured) > 0 && string(whole.Structured) != "null" {
		return out, whole.Structured, nil
	}
	return out, nil, nil
}

// blockCursors are the cursors of a shaped block of a tool result.
type blockCursors struct{ Next, Part string }

// cursorsOf returns the cursors of the shaped blocks of a tool result, in
// order: the first's from its _meta, the others' from
// dev.ctxfit/moreCursors.
func cursorsOf(result json.RawMessage) []blockCursors {
	var r struct {
		Meta struct {
			Next string `json:"dev.ctxfit/nextCursor"`
			Part string `json:"dev.ctxfit/partCursor"`
			More []struct {
				Next string `json:"nextCursor"`
				Part string `json:"partCursor"`
			} `json:"dev.ctxfit/moreCursors"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(result, &r)
	out := []blockCursors{{r.Meta.Next, r.Meta.Part}}
	for _, m := range r.Meta.More {
		out = append(out, blockCursors{m.Next, m.Part})
	}
	return out
}

// ChunkBody is the chunk envelope ({"content": ..., "nextCursor": ...,
// "metadata": {...}}) of a text block that carries a chunk of a text as
// it is, with its place in _meta dev.ctxfit/chunk and its cursors (next,
// part) in the result's _meta, so that [Rebuild] follows it as it follows
// an HTTP response's chunks.
func ChunkBody(text string, chunk map[string]any, next, part string) []byte {
	e := map[string]any{}
	metadata := map[string]any{}
	for k, v := range chunk {
		switch k {
		case "chunkIndex", "totalChunks":
			e[k] = v
		default:
			metadata[k] = v
		}
	}
	e["nextCursor"] = nil
	if next != "" {
		e["nextCursor"] = next
	}
	if part != "" {
		e["partCursor"] = part
	}
	e["metadata"] = metadata
	out, _ := marshalUnescaped(e)
	content, _ := marshalUnescaped(text)
	if metadata["form"] == "json-string" {
		content = []byte(`"` + text + `"`) // the string's body as written
	}
	// "content" first, as the engine writes it.
	return append(append(append([]byte(`{"content":`), content...), ','), out[1:]...)
}

// ResultBody returns the shaped body of a tool result (a continuation's):
// the text of its first block, as a chunk envelope ([ChunkBody]) when the
// block carries a chunk of a text as it is.
func ResultBody(result json.RawMessage) ([]byte, error) {
	var r struct {
		Content []wireBlock `json:"content"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("follow: a tool result is not JSON: %w", err)
	}
	if len(r.Content) == 0 {
		return nil, fmt.Errorf("follow: a tool result without content: %.200s", result)
	}
	b := r.Content[0]
	if chunk, ok := b.Meta["dev.ctxfit/chunk"].(map[string]any); ok {
		c := cursorsOf(result)[0]
		return ChunkBody(b.Text, chunk, c.Next, c.Part), nil
	}
	return []byte(b.Text), nil
}

// ReadBody returns the shaped body of a resources/read result: the text
// of its first content, as a chunk envelope ([ChunkBody]) when it carries
// a chunk of a text as it is.
func ReadBody(result json.RawMessage) ([]byte, error) {
	var r struct {
		Contents []wireBlock `json:"contents"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("follow: a read result is not JSON: %w", err)
	}
	if len(r.Contents) == 0 {
		return nil, fmt.Errorf("follow: a read result without contents: %.200s", result)
	}
	return chunkOrText(result, r.Contents[0])
}

// chunkOrText returns the body of block c of result: a chunk envelope
// when c carries a chunk of a text as it is (its place in c's _meta, or,
// where an SDK drops a content's _meta, only the result's cursors beside
// a text that is not JSON), else c's text.
func chunkOrText(result json.RawMessage, c wireBlock) ([]byte, error) {
	chunk, ok := c.Meta["dev.ctxfit/chunk"].(map[string]any)
	cur := cursorsOf(result)[0]
	if !ok && (cur.Next != "" || cur.Part != "") && !json.Valid([]byte(c.Text)) {
		chunk, ok = map[string]any{}, true
	}
	if ok {
		return ChunkBody(c.Text, chunk, cur.Next, cur.Part), nil
	}
	return []byte(c.Text), nil
}

func marshalUnescaped(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Same reports how a rebuilt block differs from the original block, ""
// when it is the original: the same JSON, or the same type and text (or
// embedded text) for a shaped block, or the same bytes for a held-back
// one.
func (b Block) Same(original json.RawMessage) string {
	switch {
	case b.Text != nil:
		var o, g struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Resource *struct {
				Text string `json:"text"`
			} `json:"resource"`
		}
		if json.Unmarshal(original, &o) != nil || json.Unmarshal(b.Raw, &g) != nil {
			return "a shaped block that is not JSON"
		}
		text := o.Text
		if o.Resource != nil {
			text = o.Resource.Text
		}
		if o.Type != g.Type {
			return fmt.Sprintf("type %q, was %q", g.Type, o.Type)
		}
		if *b.Text != text {
			return fmt.Sprintf("text of %d bytes, was %d", len(*b.Text), len(text))
		}
		return ""
	case b.Held != nil:
		var o struct {
			Data     string `json:"data"`
			Resource *struct {
				Blob string `json:"blob"`
			} `json:"resource"`
		}
		if json.Unmarshal(original, &o) != nil {
			return "the original is not JSON"
		}
		enc := o.Data
		if o.Resource != nil {
			enc = o.Resource.Blob
		}
		data, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return "the original's data is not base64"
		}
		if !bytes.Equal(data, b.Held) {
			return fmt.Sprintf("held back %d bytes, was %d", len(b.Held), len(data))
		}
		return ""
	}
	if !bytes.Equal(b.Raw, original) {
		return fmt.Sprintf("%.80s, was %.80s", b.Raw, original)
	}
	return ""
}

// SameBlocks reports how rebuilt blocks differ from the original content
// list, "" when they are the same blocks in the same order.
func SameBlocks(got []Block, original json.RawMessage) string {
	var want []json.RawMessage
	if err := json.Unmarshal(original, &want); err != nil {
		return "the original content is not a list"
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d blocks, were %d", len(got), len(want))
	}
	for i := range got {
		if d := got[i].Same(want[i]); d != "" {
			return fmt.Sprintf("block %d: %s", i, d)
		}
	}
	return ""
}

// PromptBody returns the shaped body of a prompts/get result: the text of
// its first message, as a chunk envelope ([ChunkBody]) when it carries a
// chunk of a text as it is.
func PromptBody(result json.RawMessage) ([]byte, error) {
	var r struct {
		Messages []struct {
			Content wireBlock `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("follow: a prompt result is not JSON: %w", err)
	}
	if len(r.Messages) == 0 {
		return nil, fmt.Errorf("follow: a prompt result without messages: %.200s", result)
	}
	return chunkOrText(result, r.Messages[0].Content)
}
