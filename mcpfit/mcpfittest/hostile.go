package mcpfittest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/hostile"
)

// HostileHardCap is the hard cap (threshold 1,000) the hostile results
// are tested under.
const HostileHardCap = 2000

// HostileServer is an MCP server (official SDK) whose read-only tools
// return the hostile results ([hostile.Cases]), a tool each, and which
// serves the hostile edges besides tools: a host UI resource
// ([HostileUIURI]), a huge resource ([HostileHugeURI]) and a huge prompt
// ([HostileHugePrompt]).
func HostileServer() *mcp.Server {
	s := CasesServer(hostile.Cases())
	s.AddResource(&mcp.Resource{URI: HostileUIURI, Name: "app", MIMEType: HostileUIMIME},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: HostileUIURI, MIMEType: HostileUIMIME, Text: HostileUIPage()}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: HostileHugeURI, Name: "huge", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: HostileHugeURI, MIMEType: "text/plain", Text: HostileHugeText()}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: HostileHugePrompt}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: HostileHugeText()}}}}, nil
	})
	return s
}

// The hostile edges besides tools: a host UI resource (an MCP App page,
// which passes unchanged and uncounted), a huge resource and a huge
// prompt (each some 30,000 tokens).
const (
	HostileUIURI      = "ui://hostile/mcp-app.html"
	HostileUIMIME     = "text/html;profile=mcp-app"
	HostileHugeURI    = "file:///hostile/huge.txt"
	HostileHugePrompt = "huge_prompt"
)

// HostileUIPage is the host UI resource's page: far over any budget.
func HostileUIPage() string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><body>")
	for i := range 3000 {
		fmt.Fprintf(&b, "<div class=\"page\" id=\"p%d\">page %d &amp; its viewer</div>\n", i, i)
	}
	b.WriteString("</body></html>")
	return b.String()
}

// HostileHugeText is the text of the huge resource and prompt.
func HostileHugeText() string {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "line %d: the guest booked a room with a view \"of the harbour\"\n", i)
	}
	return b.String()
}

// CasesServer is an MCP server (official SDK) whose read-only tools
// return cases, a tool each.
func CasesServer(cases []hostile.Case) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	for _, c := range cases {
		s.AddTool(&mcp.Tool{Name: c.Tool, InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var res mcp.CallToolResult
				if err := json.Unmarshal(c.Result, &res); err != nil {
					return nil, err
				}
				return &res, nil
			})
	}
	return s
}

// CheckHostile calls every tool of [HostileServer] through guarded (a
// session of ctxfit in front of it) and raw (a session of the server
// itself) and holds each result to both promises: the result and every
// continuation within [HostileHardCap] as a client counts them (the
// JSON of the result, media by what a model reads), isError kept, every
// block rebuilt in its place by following the cursors and reading the
// links, and the whole result behind the link to the original; then the
// edges besides tools ([CheckHostileEdges]). Tools in skip are left out,
// with the reason given.
func CheckHostile(t *testing.T, guarded, raw *mcp.ClientSession, skip map[string]string) {
	CheckCases(t, guarded, raw, hostile.Cases(), HostileHardCap, skip)
	CheckHostileEdges(t, guarded, raw, HostileHardCap)
}

// CheckHostileEdges holds guarded (a session of ctxfit in front of
// [HostileServer]) to both promises beyond tools: the host UI resource
// reads as it is (raw, a session of the server itself, reads the same),
// not counted against the cap; a read of the huge resource and a get of
// the huge prompt are within hardCap as a client counts their texts, and
// following them with the continuation tool rebuilds the text byte for
// byte.
func CheckHostileEdges(t *testing.T, guarded, raw *mcp.ClientSession, hardCap int) {
	ctx := context.Background()
	t.Run("a host UI resource passes unchanged and uncounted", func(t *testing.T) {
		got, err := guarded.ReadResource(ctx, &mcp.ReadResourceParams{URI: HostileUIURI})
		require.NoError(t, err)
		want, err := raw.ReadResource(ctx, &mcp.ReadResourceParams{URI: HostileUIURI})
		require.NoError(t, err)
		require.Len(t, got.Contents, 1)
		assert.Equal(t, want.Contents[0].Text, got.Contents[0].Text, "the page as it is")
		assert.Equal(t, HostileUIMIME, got.Contents[0].MIMEType)
		assert.Greater(t, Count(got.Contents[0].Text), hardCap, "over the cap: host-facing content is not counted")
	})
	call := func(t *testing.T) follow.Caller {
		return func(cursor string, part int64) ([]byte, error) {
			args := map[string]any{"cursor": cursor}
			if part != 0 {
				args["part"] = part
			}
			res := Call(t, guarded, mcpcore.DefaultNextTool, args)
			require.False(t, res.IsError, "%v", Texts(t, res))
			assert.LessOrEqual(t, Tokens(t, res), hardCap, "a continuation within the hard cap")
			return []byte(Body(t, res)), nil
		}
	}
	t.Run("a huge resource reads within the cap and is rebuilt", func(t *testing.T) {
		r, err := guarded.ReadResource(ctx, &mcp.ReadResourceParams{URI: HostileHugeURI})
		require.NoError(t, err)
		n := 0
		for _, c := range r.Contents {
			n += Count(c.Text)
		}
		assert.LessOrEqual(t, n, hardCap, "a read within the hard cap")
		b, err := json.Marshal(r)
		require.NoError(t, err)
		first, err := follow.ReadBody(b)
		require.NoError(t, err)
		got, _, err := follow.Rebuild(first, call(t))
		require.NoError(t, err)
		assert.Equal(t, HostileHugeText(), string(got), "the resource rebuilt, byte for byte")
	})
	t.Run("a huge prompt comes within the cap and is rebuilt", func(t *testing.T) {
		p, err := guarded.GetPrompt(ctx, &mcp.GetPromptParams{Name: HostileHugePrompt})
		require.NoError(t, err)
		n := 0
		for _, m := range p.Messages {
			if tc, ok := m.Content.(*mcp.TextContent); ok {
				n += Count(tc.Text)
			}
		}
		assert.LessOrEqual(t, n, hardCap, "a prompt within the hard cap")
		b, err := json.Marshal(p)
		require.NoError(t, err)
		first, err := follow.PromptBody(b)
		require.NoError(t, err)
		got, _, err := follow.Rebuild(first, call(t))
		require.NoError(t, err)
		assert.Equal(t, HostileHugeText(), string(got), "the prompt rebuilt, byte for byte")
	})
}

// CheckCases is [CheckHostile] for the tools of [CasesServer](cases),
// under hardCap.
func CheckCases(t *testing.T, guarded, raw *mcp.ClientSession, cases []hostile.Case, hardCap int, skip map[string]string) {
	for _, c := range cases {
		t.Run(c.Tool, func(t *testing.T) {
			if why, ok := skip[c.Tool]; ok {
				t.Skip(why)
			}
			got, want := Call(t, guarded, c.Tool, map[string]any{}), Call(t, raw, c.Tool, map[string]any{})
			gotJSON, err := json.Marshal(got)
			require.NoError(t, err)
			wantJSON, err := json.Marshal(want)
			require.NoError(t, err)
			n, err := hostile.Tokens(gotJSON)
			require.NoError(t, err)
			assert.LessOrEqual(t, n, hardCap, "the result within the hard cap as a client counts it")
			assert.Equal(t, want.IsError, got.IsError, "isError kept")
			// The SDK adds to a result's _meta after ctxfit shaped it.
			assert.InDelta(t, n, got.Meta[mcpcore.MetaTokens], sdkMetaTokens, "_meta tokens: the whole result")

			call := func(cursor string, part int64) ([]byte, error) {
				args := map[string]any{"cursor": cursor}
				if part != 0 {
					args["part"] = part
				}
				res := Call(t, guarded, mcpcore.DefaultNextTool, args)
				b, err := json.Marshal(res)
				require.NoError(t, err)
				n, err := hostile.Tokens(b)
				require.NoError(t, err)
				assert.LessOrEqual(t, n, hardCap, "a continuation within the hard cap as a client counts it")
				if res.IsError {
					return nil, fmt.Errorf("%s", b)
				}
				return follow.ResultBody(b)
			}
			read := func(uri string) ([]byte, error) { return ReadRanges(t, guarded, uri) }
			blocks, structured, err := follow.Blocks(gotJSON, call, read)
			require.NoError(t, err)
			var w struct {
				Content    json.RawMessage `json:"content"`
				Structured json.RawMessage `json:"structuredContent"`
			}
			require.NoError(t, json.Unmarshal(wantJSON, &w))
			if structured != nil {
				assert.JSONEq(t, string(w.Structured), string(structured), "the structured content rebuilt")
			} else {
				assert.Empty(t, follow.SameBlocks(blocks, w.Content), "every block rebuilt, in its place")
			}
			link := Original(got)
			require.NotNil(t, link, "a link to the whole result")
			whole, err := ReadRanges(t, guarded, link.URI)
			require.NoError(t, err)
			assert.JSONEq(t, string(WithoutSDKMeta(t, wantJSON)), string(WithoutSDKMeta(t, whole)), "the whole result behind its link")
		})
	}
}

// ReadRanges reads a ctxfit:// resource in ranges of 1,500 bytes, as a
// client reads a large original in parts, and returns its bytes.
func ReadRanges(t testing.TB, cs *mcp.ClientSession, uri string) ([]byte, error) {
	t.Helper()
	const size = 1500
	var out []byte
	for at := 0; ; at += size {
		r, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: fmt.Sprintf("%s?bytes=%d-%d", uri, at, at+size-1)})
		if err != nil {
			if at > 0 && strings.Contains(err.Error(), "past the end") {
				return out, nil
			}
			return nil, err
		}
		require.Len(t, r.Contents, 1)
		piece := []byte(r.Contents[0].Text)
		if r.Contents[0].Blob != nil {
			piece = r.Contents[0].Blob
		}
		out = append(out, piece...)
		if len(piece) < size {
			return out, nil
		}
	}
}

// sdkMetaTokens bounds what an SDK adds to a result's _meta after ctxfit
// shaped it (its serverInfo).
const sdkMetaTokens = 40

// WithoutSDKMeta is a result's wire JSON without what an SDK adds to
// every result after ctxfit shaped it: the _meta key
// io.modelcontextprotocol/serverInfo, and mcp-go's resultType.
func WithoutSDKMeta(t testing.TB, raw []byte) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	delete(m, "resultType")
	if meta, ok := m["_meta"].(map[string]any); ok {
		delete(meta, "io.modelcontextprotocol/serverInfo")
		if len(meta) == 0 {
			delete(m, "_meta")
		}
	}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}
