// Package mcpfittest tests MCP servers guarded by ctxfit from the client's
// side, with the official MCP Go SDK (modelcontextprotocol/go-sdk): call a
// tool, count a result as a client does, follow its cursors with the
// continuation tool and its links with resources/read, and join the shaped
// parts back into what the tool returned, to compare with the tool's own
// output, so that a server's tests can hold both promises (nothing over the
// hard cap, nothing lost) on its own tools. ctxfit's adapters, the proxy and
// the gateway are tested with it; [HostileServer] and [CheckHostile] send
// and check the edges real servers send (thousands of blocks and links, a
// huge isError result or _meta, mixed media, host-facing content).
//
// The helpers fail the test through testify's require and assert. They are
// safe for concurrent use by parallel tests.
package mcpfittest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
)

// maxCalls bounds the calls of [Follow].
const maxCalls = 2000

var exact = func() budget.Counter {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		panic(err)
	}
	return c
}()

// Count is the exact o200k_base token count of text.
func Count(text string) int { return exact.Count(text) }

// Tokens counts what the model reads of a result: its text blocks joined by
// newlines, and the JSON of its link to the original (see [Original]), by
// exact count ([Count]).
func Tokens(t testing.TB, res *mcp.CallToolResult) int {
	t.Helper()
	n := Count(strings.Join(Texts(t, res), "\n"))
	if link := Original(res); link != nil {
		b, err := json.Marshal(link)
		require.NoError(t, err)
		n += Count(string(b))
	}
	return n
}

// Original returns the resource_link to the held-back original that a
// shaped result carries (a ctxfit:// URI), nil when it has none.
func Original(res *mcp.CallToolResult) *mcp.ResourceLink {
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok && strings.HasPrefix(l.URI, mcpcore.ResourcePrefix) && l.Meta[mcpcore.MetaOriginal] == true {
			return l
		}
	}
	return nil
}

// TokensWithMedia counts what a model reads of a result with media: its
// text blocks by exact count ([Count]), images and audio by the default
// [mcpcore.MediaRule], and other blocks as their JSON.
func TokensWithMedia(t testing.TB, res *mcp.CallToolResult) int {
	t.Helper()
	var rule mcpcore.MediaRule
	n := 0
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			n += Count(c.Text)
		case *mcp.ImageContent:
			if tokens, ok := rule.ImageTokens(c.Data); ok {
				n += tokens
			} else {
				n += (len(c.Data)*4/3 + 3) / 4
			}
		case *mcp.AudioContent:
			n += rule.AudioTokens(c.Data)
		default:
			b, err := json.Marshal(c)
			require.NoError(t, err)
			n += Count(string(b))
		}
	}
	return n
}

// Call calls tool with args on cs and requires that the call succeeds (the
// result may still have isError set).
func Call(t testing.TB, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	return res
}

// Texts returns the text blocks of a result and requires that all its
// content is text, but for its link to the original ([Original]).
func Texts(t testing.TB, res *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok && l == Original(res) {
			continue
		}
		tc, ok := c.(*mcp.TextContent)
		require.True(t, ok, "content %T is not text", c)
		out = append(out, tc.Text)
	}
	return out
}

// Follow calls tool with args and then [mcpcore.DefaultNextTool] with every
// cursor (the _meta [mcpcore.MetaNextCursor]) until the end, and returns the
// results. No result may be an error, and none may exceed hardCap by exact
// count ([Tokens]).
func Follow(t testing.TB, cs *mcp.ClientSession, tool string, args any, hardCap int) []*mcp.CallToolResult {
	t.Helper()
	var out []*mcp.CallToolResult
	res := Call(t, cs, tool, args)
	for calls := 1; ; calls++ {
		require.False(t, res.IsError, "result is an error: %v", Texts(t, res))
		assert.LessOrEqual(t, Tokens(t, res), hardCap, "a result exceeds the hard cap")
		out = append(out, res)
		next := NextCursor(res)
		if next == "" {
			return out
		}
		if calls == maxCalls {
			t.Fatal("too many continuations")
			return nil
		}
		res = Call(t, cs, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
	}
}

// DetailsCursor returns a summary's details cursor from its _meta, "" if
// none.
func DetailsCursor(res *mcp.CallToolResult) string {
	c, _ := res.Meta[mcpcore.MetaDetailsCursor].(string)
	return c
}

// NextCursor returns the cursor in a result's _meta, "" if none.
func NextCursor(res *mcp.CallToolResult) string {
	next, _ := res.Meta[mcpcore.MetaNextCursor].(string)
	return next
}

// Bodies returns the shaped bodies of results ([Body]).
func Bodies(t testing.TB, results []*mcp.CallToolResult) []string {
	t.Helper()
	out := make([]string, len(results))
	for i, res := range results {
		require.NotEmpty(t, Texts(t, res), "result %d has no content", i)
		out[i] = Body(t, res)
	}
	return out
}

// Body returns the shaped body of a result: the text of its first block,
// or, for a chunk of a text (which travels as text, its place in the
// block's _meta dev.ctxfit/chunk), the chunk envelope an HTTP response
// would hold ({"content": ..., "nextCursor": ..., "metadata": {...}};
// [follow.ResultBody]).
func Body(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	body, err := follow.ResultBody(raw)
	require.NoError(t, err)
	return string(body)
}

// ChunkTexts returns the texts of chunk results as they travel (the text
// block of each, [mcpcore.MetaChunk] in its _meta), requiring that each is
// one.
func ChunkTexts(t testing.TB, results []*mcp.CallToolResult) []string {
	t.Helper()
	out := make([]string, len(results))
	for i, res := range results {
		require.NotEmpty(t, res.Content, "result %d has no content", i)
		tc, ok := res.Content[0].(*mcp.TextContent)
		require.True(t, ok, "result %d: content %T is not text", i, res.Content[0])
		require.Contains(t, tc.Meta, mcpcore.MetaChunk, "result %d: a chunk travels as text, its place in _meta", i)
		out[i] = tc.Text
	}
	return out
}

// JoinItems concatenates, byte for byte, the array at key of paged bodies
// into one JSON array.
func JoinItems(t testing.TB, bodies []string, key string) string {
	t.Helper()
	var all []string
	for _, body := range bodies {
		var b map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(body), &b))
		var items []json.RawMessage
		require.NoError(t, json.Unmarshal(b[key], &items), "page has no %q array: %.200s", key, body)
		require.NotNil(t, items, "page has no %q array (null or missing): %.200s", key, body)
		for _, it := range items {
			all = append(all, string(it))
		}
	}
	return "[" + strings.Join(all, ",") + "]"
}

// JoinChunks concatenates the content of chunk bodies.
func JoinChunks(t testing.TB, bodies []string) string {
	t.Helper()
	var b strings.Builder
	for i, body := range bodies {
		var ch struct {
			Content *string `json:"content"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &ch))
		require.NotNil(t, ch.Content, "body %d is not a chunk: %.200s", i, body)
		b.WriteString(*ch.Content)
	}
	return b.String()
}

// Session is a client session bound to a test, for tests that call many
// tools on one or two sessions (a guarded one and a raw one).
type Session struct {
	T  testing.TB
	CS *mcp.ClientSession
}

// Call is [Call] on s.
func (s Session) Call(tool string, args any) *mcp.CallToolResult {
	s.T.Helper()
	return Call(s.T, s.CS, tool, args)
}

// Follow is [Follow] on s, returning the shaped bodies ([Bodies]).
func (s Session) Follow(tool string, args any, hardCap int) []string {
	s.T.Helper()
	return Bodies(s.T, Follow(s.T, s.CS, tool, args, hardCap))
}

// Rebuild follows every cursor and part of a shaped result (its first
// block is the shaped body, see [Body]) with [mcpcore.DefaultNextTool] on cs, and
// returns the original the tool returned, byte for byte. No result may be
// an error or exceed hardCap by exact count.
func Rebuild(t testing.TB, cs *mcp.ClientSession, first *mcp.CallToolResult, hardCap int) string {
	t.Helper()
	call := func(cursor string, part int64) ([]byte, error) {
		args := map[string]any{"cursor": cursor}
		if part != 0 {
			args["part"] = part
		}
		res := Call(t, cs, mcpcore.DefaultNextTool, args)
		require.False(t, res.IsError, "result is an error: %v", Texts(t, res))
		assert.LessOrEqual(t, Tokens(t, res), hardCap, "a result exceeds the hard cap")
		return []byte(Body(t, res)), nil
	}
	out, _, err := follow.Rebuild([]byte(Body(t, first)), call)
	require.NoError(t, err)
	return string(out)
}

// ReadLink reads a ctxfit:// link whole as a model does: a range at a time,
// each within hardCap by exact count, following the _meta next range
// ([mcpcore.MetaNextRange]) to the end. It returns the text, or the bytes
// of a blob.
func ReadLink(t testing.TB, cs *mcp.ClientSession, uri string, hardCap int) string {
	t.Helper()
	var out strings.Builder
	for i := 0; uri != ""; i++ {
		require.Less(t, i, maxCalls, "too many ranges")
		r, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		require.NoError(t, err)
		require.NotEmpty(t, r.Contents)
		if r.Contents[0].Blob != nil {
			out.Write(r.Contents[0].Blob)
		} else {
			n := 0
			for _, c := range r.Contents {
				n += Count(c.Text)
			}
			assert.LessOrEqual(t, n, hardCap, "a read of a ctxfit link is within the hard cap")
			out.WriteString(r.Contents[0].Text)
		}
		uri, _ = r.Meta[mcpcore.MetaNextRange].(string)
	}
	return out.String()
}
