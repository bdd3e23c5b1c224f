package mcpcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
)

// GetPromptTool is the name under which a Shaper shapes, and a proxy runs
// again, a prompts/get result: [Call].Tool of its cursors, with the
// arguments {"name": ..., "arguments": {...}} (see [PromptArguments]).
const GetPromptTool = "prompts/get"

// PromptArguments returns the canonical arguments of a prompts/get of the
// prompt name with arguments args (a JSON object or nothing).
func PromptArguments(name string, args json.RawMessage) (json.RawMessage, error) {
	canon, err := CanonicalArguments(args)
	if err != nil {
		return nil, err
	}
	return marshal(map[string]json.RawMessage{"name": mustMarshal(name), "arguments": canon})
}

func mustMarshal(v any) json.RawMessage {
	b, _ := marshal(v)
	return b
}

// messageKey tags each content block of a prompt's tool form with the
// index of its message, so that shaped blocks find their role again.
const messageKey = "ctxfit:message"

type promptMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// PromptAsToolResult returns the wire JSON of a GetPromptResult as the wire
// JSON of a tool result whose blocks are its messages' contents, in order.
// [BlockBody] reads a rerun prompts/get from it as it reads a tool result.
func PromptAsToolResult(raw json.RawMessage) (json.RawMessage, error) {
	_, tool, err := promptTool(raw)
	return tool, err
}

func promptTool(raw json.RawMessage) ([]promptMessage, json.RawMessage, error) {
	w, err := parseWire(raw)
	if err != nil {
		return nil, nil, err
	}
	var msgs []promptMessage
	if err := json.Unmarshal(w.get("messages"), &msgs); err != nil {
		return nil, nil, errors.New("mcpcore: a prompts/get result has no messages")
	}
	blocks := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		c := bytes.TrimSpace(m.Content)
		if len(c) < 2 || c[0] != '{' {
			return nil, nil, errors.New("mcpcore: a prompt message's content is not an object")
		}
		tag := `{"` + messageKey + `":` + strconv.Itoa(i)
		if len(bytes.TrimSpace(c[1:])) > 1 {
			tag += ","
		}
		blocks[i] = append([]byte(tag), c[1:]...)
	}
	content, _ := marshal(blocks)
	return msgs, (&wire{members: []member{{"content", content}}}).marshal(), nil
}

// ShapePrompt shapes the wire JSON of a prompts/get result as
// [Shaper.ShapeResult] shapes a tool result whose blocks are its messages'
// contents (call.Tool is [GetPromptTool], call.Arguments
// [PromptArguments]). A shaped result keeps the form of a GetPromptResult:
// a message whose text was shaped keeps its role with the shaped body as
// its text, and the guidance line follows as a text message of the same
// role, marked as ctxfit's by _meta {"dev.ctxfit/guidance": true}; the result's _meta gets the keys of [Meta]. Errors are those of
// [Shaper.ShapeResult].
func (s *Shaper) ShapePrompt(ctx context.Context, call Call, raw json.RawMessage) (Shaped, error) {
	msgs, tool, err := promptTool(raw)
	if err != nil {
		return Shaped{Result: raw}, nil // not ours to judge
	}
	call.read = true // the client can get the prompt again itself
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
	out := make([]json.RawMessage, 0, len(blocks))
	role := "user"
	if len(msgs) > 0 {
		role = msgs[0].Role
	}
	for _, b := range blocks {
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		if tag, ok := m[messageKey]; ok {
			if i, err := strconv.Atoi(string(tag)); err == nil && i >= 0 && i < len(msgs) {
				role = msgs[i].Role
				if bytes.Equal(b, blockWithTag(msgs[i].Content, i)) {
					msg, _ := marshal(map[string]json.RawMessage{"role": mustMarshal(role), "content": msgs[i].Content})
					out = append(out, msg)
					continue
				}
			}
			delete(m, messageKey)
		} else if string(m["type"]) == `"text"` && m["_meta"] == nil {
			// A block of ctxfit's own: the guidance line.
			m["_meta"] = mustMarshal(map[string]bool{MetaGuidance: true})
		}
		c, _ := marshal(m)
		msg, _ := marshal(map[string]json.RawMessage{"role": mustMarshal(role), "content": c})
		out = append(out, msg)
	}
	w, err := parseWire(raw)
	if err != nil {
		return Shaped{}, err
	}
	ms, _ := marshal(out)
	w.set("messages", ms)
	w.set("_meta", sw.get("_meta"))
	return Shaped{Result: w.marshal(), Shaped: true, Results: shaped.Results}, nil
}

// blockWithTag is the tagged form promptTool gives message i's content.
func blockWithTag(content json.RawMessage, i int) json.RawMessage {
	c := bytes.TrimSpace(content)
	tag := `{"` + messageKey + `":` + strconv.Itoa(i)
	if len(bytes.TrimSpace(c[1:])) > 1 {
		tag += ","
	}
	return append([]byte(tag), c[1:]...)
}
