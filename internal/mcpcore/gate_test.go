package mcpcore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// longText is n lines of text with some multi-byte runes.
func longText(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d: café, naïve, 東京 <&> \"quoted\"\n", i)
	}
	return b.String()
}

// readResult is a ReadResourceResult as a test reads it.
type readResult struct {
	Contents []struct {
		URI      string         `json:"uri"`
		MimeType string         `json:"mimeType"`
		Text     string         `json:"text"`
		Blob     string         `json:"blob"`
		Meta     map[string]any `json:"_meta"`
	} `json:"contents"`
	Meta map[string]any `json:"_meta"`
}

// readAll reads a ctxfit:// uri range after range, as a model follows the
// gate's guidance, checking each answer against the hard cap, and returns
// the text.
func readAll(t *testing.T, s *mcpcore.Shaper, uri string, hardCap int) string {
	t.Helper()
	c, err := budget.Exact("")
	require.NoError(t, err)
	var out strings.Builder
	for i := 0; uri != ""; i++ {
		require.Less(t, i, 1000, "too many ranges")
		raw, err := s.ReadResource(context.Background(), "s", uri, nil)
		require.NoError(t, err)
		var r readResult
		require.NoError(t, json.Unmarshal(raw, &r))
		n := 0
		for _, ct := range r.Contents {
			n += c.Count(ct.Text)
		}
		require.LessOrEqual(t, n, hardCap, "a range read is within the hard cap")
		out.WriteString(r.Contents[0].Text)
		uri, _ = r.Meta[mcpcore.MetaNextRange].(string)
		if uri != "" {
			require.Len(t, r.Contents, 2)
			assert.Equal(t, true, r.Contents[1].Meta[mcpcore.MetaGuidance], "the guidance is marked as ctxfit's")
			assert.Contains(t, r.Contents[1].Text, uri, "the guidance names the next range")
		}
	}
	return out.String()
}

func TestReadingAHugeCtxfitLinkAnswersRangesWithinTheCap(t *testing.T) {
	s := newShaper(t, ctxfit.Config{Threshold: 500, HardCap: 1000})
	lines, lastLine := 5000, 4000
	if testing.Short() {
		lines, lastLine = 1500, 1200 // under -race (test.sh): still dozens of ranges; 5,000 lines without -race
	}
	text := longText(lines)
	token, err := s.Guard.Resource(context.Background(), ctxfit.Request{Endpoint: "big", Subject: "s"}, []byte(text), "text/plain")
	require.NoError(t, err)
	for _, tc := range []struct{ name, query, want string }{
		{"read whole", "", text},
		{"a byte range", "?bytes=1000-60000", text[1000:60001]},
		{"a line range", fmt.Sprintf("?lines=10-%d", lastLine), strings.Join(strings.SplitAfter(text, "\n")[9:lastLine], "")},
	} {
		t.Run("a link "+tc.name+" is rebuilt range after range", func(t *testing.T) {
			got := readAll(t, s, mcpcore.ResourcePrefix+token+tc.query, 1000)
			if tc.query == "" {
				assert.Equal(t, tc.want, got, "nothing lost, byte for byte")
				return
			}
			// The first range is the asked one's start; the ranges after it
			// read on to the end of the original.
			assert.True(t, strings.HasPrefix(got, tc.want[:100]))
			assert.True(t, strings.HasSuffix(text, got), "the ranges read on to the end")
		})
	}
}

func TestTheGatePassesWhatIsWithinTheCapUnchanged(t *testing.T) {
	s := newShaper(t, ctxfit.Config{Threshold: 500, HardCap: 1000})
	ctx := context.Background()
	small := json.RawMessage(`{"content":[{"type":"text","text":"hello"}]}`)
	out, err := s.Gate(ctx, mcpcore.Call{Tool: "t", Subject: "s"}, small, nil)
	require.NoError(t, err)
	assert.Equal(t, string(small), string(out))

	img := json.RawMessage(`{"content":[{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("A", 100000) + `"}]}`)
	out, err = s.Gate(ctx, mcpcore.Call{Tool: "t", Subject: "s"}, img, nil)
	require.NoError(t, err)
	assert.Equal(t, string(img), string(out), "media a model does not read as text passes")

	page := mustJSON(t, map[string]any{"contents": []any{map[string]any{
		"uri": "ui://pdf-viewer/mcp-app.html", "mimeType": "text/html;profile=mcp-app", "text": longText(5000)}}})
	call := mcpcore.Call{Tool: mcpcore.ReadResourceTool, Arguments: mcpcore.ReadArguments("ui://pdf-viewer/mcp-app.html"), Subject: "s"}
	shaped, err := s.ShapeRead(ctx, call, page)
	require.NoError(t, err)
	assert.False(t, shaped.Shaped, "an MCP App page is not shaped")
	out, err = s.Gate(ctx, call, page, shaped.Result)
	require.NoError(t, err)
	assert.Equal(t, string(page), string(out), "host-facing content passes unchanged")

	s2 := newShaper(t, ctxfit.Config{Threshold: 500, HardCap: 1000, Endpoints: []ctxfit.Endpoint{{Match: "off", Disabled: true}}})
	big := mustJSON(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": longText(2000)}}})
	out, err = s2.Gate(ctx, mcpcore.Call{Tool: "off", Subject: "s"}, big, nil)
	require.NoError(t, err)
	assert.Equal(t, string(big), string(out), "an operator's opt-out passes")
}

func TestTheGateCutsWhatIsOverTheCapLosslessly(t *testing.T) {
	const hardCap = 1000
	s := newShaper(t, ctxfit.Config{Threshold: 500, HardCap: hardCap})
	c, err := budget.Exact("")
	require.NoError(t, err)
	ctx := context.Background()
	lines := 3000
	if testing.Short() {
		lines = 1000 // under -race (test.sh): still 15 times the hard cap; 3,000 lines without -race
	}
	text := longText(lines)
	structured := mustJSON(t, map[string]any{"lines": strings.Split(text, "\n")})
	readArgs := mcpcore.ReadArguments("file:///big.txt")
	prompt, err := mcpcore.PromptArguments("p", nil)
	require.NoError(t, err)
	links := make([]any, 1500)
	for i := range links {
		links[i] = map[string]any{"type": "resource_link", "uri": fmt.Sprintf("file:///srv/file-%05d.txt", i), "name": fmt.Sprintf("file-%05d.txt", i)}
	}
	manyLinks := mustJSON(t, map[string]any{"content": links})
	mixed := mustJSON(t, map[string]any{"content": []any{
		map[string]any{"type": "text", "text": longText(800)},
		map[string]any{"type": "image", "mimeType": "image/png", "data": strings.Repeat("iVBO", 2000)},
		map[string]any{"type": "text", "text": longText(800)},
		map[string]any{"type": "audio", "mimeType": "audio/wav", "data": strings.Repeat("UklG", 2000)},
	}})
	// Its uri and mimeType are the server's too: the whole message is kept.
	embedded := mustJSON(t, map[string]any{"content": []any{map[string]any{"type": "resource",
		"resource": map[string]any{"uri": "file:///srv/big.log", "mimeType": "text/x-log", "text": text}}}})
	for _, tc := range []struct {
		name string
		call mcpcore.Call
		raw  json.RawMessage
		want string
	}{
		{"a result of many resource_link blocks", mcpcore.Call{Tool: "t"}, manyLinks, string(manyLinks)},
		{"a result of texts, an image and audio", mcpcore.Call{Tool: "t"}, mixed, string(mixed)},
		{"a tool result's embedded text resource", mcpcore.Call{Tool: "t"}, embedded, string(embedded)},
		{"a tool result's text", mcpcore.Call{Tool: "t"},
			mustJSON(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}), text},
		{"an isError result", mcpcore.Call{Tool: "t"},
			mustJSON(t, map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": text}}}), text},
		{"a structured result", mcpcore.Call{Tool: "t"},
			mustJSON(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(structured)}},
				"structuredContent": json.RawMessage(structured)}), string(structured)},
		{"a resources/read result", mcpcore.Call{Tool: mcpcore.ReadResourceTool, Arguments: readArgs},
			mustJSON(t, map[string]any{"contents": []any{map[string]any{"uri": "file:///big.txt", "mimeType": "text/plain", "text": text}}}), text},
		{"a prompts/get result", mcpcore.Call{Tool: mcpcore.GetPromptTool, Arguments: prompt},
			mustJSON(t, map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": text}}}}), text},
	} {
		t.Run(tc.name+" over the cap is its first bytes and a link to the rest", func(t *testing.T) {
			tc.call.Subject = "s"
			out, err := s.Gate(ctx, tc.call, tc.raw, nil)
			require.NoError(t, err)
			assert.NotContains(t, string(out), text[len(text)-200:], "the original is not sent over the cap")
			var w struct {
				Content  []map[string]any `json:"content"`
				Contents []map[string]any `json:"contents"`
				Messages []struct {
					Content map[string]any `json:"content"`
				} `json:"messages"`
				Structured map[string]any `json:"structuredContent"`
				IsError    bool           `json:"isError"`
				Meta       map[string]any `json:"_meta"`
			}
			require.NoError(t, json.Unmarshal(out, &w))
			assert.Equal(t, true, w.Meta[mcpcore.MetaGate])
			// The figures of the whole message, exact (what is sent holds
			// no media; the original's media count by the media rule).
			assert.EqualValues(t, c.Count(string(mustJSON(t, json.RawMessage(out)))), w.Meta[mcpcore.MetaTokens], "_meta tokens: the message sent, exactly")
			if tc.name != "a result of texts, an image and audio" {
				assert.EqualValues(t, c.Count(string(mustJSON(t, tc.raw))), w.Meta[mcpcore.MetaOriginalTokens], "_meta originalTokens: the whole message, exactly")
			} else {
				assert.Greater(t, w.Meta[mcpcore.MetaOriginalTokens], float64(hardCap), "_meta originalTokens: the whole message")
			}
			assert.EqualValues(t, hardCap, w.Meta[mcpcore.MetaHardCap])
			blocks := w.Content
			if tc.call.Tool == mcpcore.ReadResourceTool {
				blocks = w.Contents
			}
			for _, m := range w.Messages {
				blocks = append(blocks, m.Content)
			}
			n, first, link := 0, "", ""
			for i, b := range blocks {
				if txt, ok := b["text"].(string); ok {
					n += c.Count(txt)
					if i == 0 {
						first = txt
					}
				}
				if b["type"] == "resource_link" {
					n += c.Count(string(mustJSON(t, b)))
					link, _ = b["uri"].(string)
				}
				if meta, ok := b["_meta"].(map[string]any); ok && meta[mcpcore.MetaGuidance] == true {
					if link == "" {
						link = b["text"].(string)[strings.Index(b["text"].(string), mcpcore.ResourcePrefix):]
						link = link[:strings.IndexByte(link, ' ')]
					}
				}
			}
			assert.LessOrEqual(t, n, hardCap, "within the hard cap by exact count")
			require.NotEmpty(t, link, "a link to the rest")
			if w.Structured != nil {
				first = w.Structured["content"].(string)
			}
			assert.Equal(t, tc.name == "an isError result", w.IsError)
			rest := readAll(t, s, link, hardCap)
			assert.Equal(t, tc.want, first+rest, "the first bytes and the rest are the original, byte for byte")
		})
	}
}

func TestTheREADMEListsTheGatesExceptionsAsTheCodeDoes(t *testing.T) {
	code, err := os.ReadFile("gate.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	doc := string(code)
	doc = doc[strings.Index(doc, "These are the only messages"):strings.Index(doc, "func (s *Shaper) Gate(")]
	var leads []string
	for _, line := range strings.Split(doc, "\n") {
		if lead, ok := strings.CutPrefix(line, "//   - "); ok {
			lead, _, _ = strings.Cut(lead, ":")
			leads = append(leads, lead)
		}
	}
	require.Equal(t, []string{"an operator's opt-out", "media a model does not read as text", "host-facing content, which a host renders rather than a model reads",
		"a response its handler streams (httpfit", "what a server sends the client on its own (not an answer)",
		"httpfit's answers to HEAD, OPTIONS, CONNECT and TRACE", "a completion provider's error in mcpgofit"}, leads)
	promise := string(readme)
	promise = promise[strings.Index(promise, "- **nothing over budget**"):strings.Index(promise, "- **nothing lost, byte for byte**")]
	promise = strings.Join(strings.Fields(promise), " ")
	_, exceptions, ok := strings.Cut(promise, "The only exceptions")
	require.True(t, ok)
	for _, lead := range leads {
		assert.Contains(t, exceptions, lead, "the README's promise paragraph lists %q", lead)
	}
}

func TestACompletionOverTheCapKeepsTheValuesThatFitAndSaysThereAreMore(t *testing.T) {
	s := newShaper(t, ctxfit.Config{Threshold: 500, HardCap: 1000})
	values := make([]string, 100)
	for i := range values {
		values[i] = fmt.Sprintf("value %d: %s", i, strings.Repeat("word ", 40))
	}
	raw := mustJSON(t, map[string]any{"completion": map[string]any{"values": values, "total": 100}})
	out, err := s.Gate(context.Background(), mcpcore.Call{Tool: mcpcore.CompleteTool, Subject: "s"}, raw, nil)
	require.NoError(t, err)
	var r struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   int      `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	require.NoError(t, json.Unmarshal(out, &r))
	require.NotEmpty(t, r.Completion.Values)
	assert.Less(t, len(r.Completion.Values), 100)
	assert.Equal(t, values[:len(r.Completion.Values)], r.Completion.Values, "the first values, as they were")
	assert.True(t, r.Completion.HasMore)
	assert.Equal(t, 100, r.Completion.Total)
	c, err := budget.Exact("")
	require.NoError(t, err)
	assert.LessOrEqual(t, c.Count(strings.Join(r.Completion.Values, "\n")), 1000)
}

// hugeMeta is a _meta of about size bytes.
func hugeMeta(size int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"example/trace":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"span":%d,"name":"step %d","ok":true}`, i, i)
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

func TestTheGateHoldsBackAHugeMetaWhenShapingFailed(t *testing.T) {
	const hardCap = 2000
	meta := hugeMeta(120 << 10) // 40,000 tokens: the 3 MB of the issue cost the same code more time
	prompt, err := mcpcore.PromptArguments("p", nil)
	require.NoError(t, err)
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		s := newShaper(t, ctxfit.Config{Threshold: 1000, HardCap: hardCap, Mode: mode})
		c, err := budget.Exact("")
		require.NoError(t, err)
		for _, tc := range []struct {
			name    string
			call    mcpcore.Call
			message string // the wire JSON without its _meta
		}{
			{"a small tool result", mcpcore.Call{Tool: "t", Arguments: json.RawMessage(`{}`)},
				`{"content":[{"type":"text","text":"a small result"}]`},
			{"a small isError result", mcpcore.Call{Tool: "t", Arguments: json.RawMessage(`{}`)},
				`{"content":[{"type":"text","text":"it failed"}],"isError":true`},
			{"a small resources/read result", mcpcore.Call{Tool: mcpcore.ReadResourceTool, Arguments: mcpcore.ReadArguments("file:///a.txt")},
				`{"contents":[{"uri":"file:///a.txt","mimeType":"text/plain","text":"a small file"}]`},
			{"a small prompts/get result", mcpcore.Call{Tool: mcpcore.GetPromptTool, Arguments: prompt},
				`{"messages":[{"role":"user","content":{"type":"text","text":"a small prompt"}}]`},
		} {
			t.Run(fmt.Sprintf("%s with a huge _meta in %s mode is within the cap, its _meta behind a link", tc.name, mode), func(t *testing.T) {
				tc.call.Subject = "subject"
				raw := json.RawMessage(tc.message + `,"_meta":` + string(meta) + `}`)
				rerun := func(_ context.Context, tool string, _ json.RawMessage) (json.RawMessage, error) {
					switch tool {
					case mcpcore.ReadResourceTool:
						return mcpcore.ReadAsToolResult(raw)
					case mcpcore.GetPromptTool:
						return mcpcore.PromptAsToolResult(raw)
					}
					return raw, nil
				}
				out, err := s.Gate(context.Background(), tc.call, raw, nil) // shaping failed
				require.NoError(t, err)
				assert.LessOrEqual(t, c.Count(string(out)), hardCap, "the whole message within the hard cap")
				var w map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(out, &w))
				var m map[string]any
				require.NoError(t, json.Unmarshal(w["_meta"], &m))
				assert.EqualValues(t, c.Count(string(mustJSON(t, out))), m[mcpcore.MetaTokens], "_meta tokens: the message sent, exactly")
				assert.EqualValues(t, c.Count(string(mustJSON(t, raw))), m[mcpcore.MetaOriginalTokens], "_meta originalTokens: the whole message, exactly")
				uri, _ := m[mcpcore.MetaHeldMeta].(string)
				require.True(t, strings.HasPrefix(uri, mcpcore.ResourcePrefix), "the _meta is a link: %v", m)
				held, err := readWhole(t, s, uri, rerun)
				require.NoError(t, err)
				assert.Equal(t, string(meta), string(held), "the _meta behind its link, byte for byte")
				delete(w, "_meta")
				var want map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(json.RawMessage(tc.message+`}`), &want))
				assert.Equal(t, want, w, "the rest of the message as it was")
			})
		}
	}
}

func TestAJSONRPCErrorOverTheCapIsCutWithALinkToTheWholeError(t *testing.T) {
	const hardCap = 1000
	c, err := budget.Exact("")
	require.NoError(t, err)
	ctx := context.Background()
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		s := newShaper(t, ctxfit.Config{Threshold: 500, HardCap: hardCap, Mode: mode})
		call := mcpcore.Call{Tool: "t", Subject: "s"}
		t.Run("a small error passes unchanged in "+string(mode)+" mode", func(t *testing.T) {
			msg, data, err := s.GateError(ctx, call, -32603, "the file is missing", json.RawMessage(`{"path":"/x"}`))
			require.NoError(t, err)
			assert.Equal(t, "the file is missing", msg)
			assert.JSONEq(t, `{"path":"/x"}`, string(data))
		})
		for _, tc := range []struct {
			name, message string
			data          json.RawMessage
		}{
			{"a huge message", longText(3000), nil},
			{"huge data", "the upstream failed", mustJSON(t, map[string]any{"trace": longText(3000)})},
		} {
			t.Run(tc.name+" is cut within the cap, the whole error behind a link, in "+string(mode)+" mode", func(t *testing.T) {
				msg, data, err := s.GateError(ctx, call, -32603, tc.message, tc.data)
				require.NoError(t, err)
				assert.LessOrEqual(t, c.Count(msg)+c.Count(string(data)), hardCap, "the error within the hard cap")
				var held map[string]any
				require.NoError(t, json.Unmarshal(data, &held))
				assert.Equal(t, true, held[mcpcore.MetaGate])
				uri, _ := held[mcpcore.MetaErrorOriginal].(string)
				require.True(t, strings.HasPrefix(uri, mcpcore.ResourcePrefix), "a link to the whole error: %v", held)
				assert.Contains(t, msg, uri, "the message says where the whole error is")
				prefix, _, _ := strings.Cut(msg, "\nctxfit: ")
				assert.True(t, strings.HasPrefix(tc.message, prefix), "the message's first bytes as they were")
				whole := mustJSON(t, map[string]any{"code": -32603, "message": tc.message, "data": tc.data})
				if tc.data == nil {
					whole = mustJSON(t, map[string]any{"code": -32603, "message": tc.message})
				}
				assert.JSONEq(t, string(whole), readAll(t, s, uri, hardCap), "the whole error, read by ranges")
			})
		}
	}
}
