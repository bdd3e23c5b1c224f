// Package mcpcheck holds an MCP session guarded by ctxfit to the two
// promises, over the wire JSON of its results: every response within the
// hard cap as a client counts it, and everything reachable and rebuilt as
// it was, by following the cursors with the continuation tool and reading
// the links. A test of any SDK (the official one's mcpfittest, mark3labs'
// mcp-go) gives it a [Session] of funcs that send one request each.
//
// It imports no MCP SDK. The checks fail the test through testify.
package mcpcheck

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/hostile"
)

// A Session sends requests to an MCP server, each returning the wire JSON
// of the result or the request's error.
type Session struct {
	// Call calls a tool with arguments (tools/call).
	Call func(tool string, args map[string]any) (json.RawMessage, error)
	// Read reads a resource (resources/read).
	Read func(uri string) (json.RawMessage, error)
	// Prompt gets a prompt without arguments (prompts/get).
	Prompt func(name string) (json.RawMessage, error)
}

// sdkMetaTokens bounds what an SDK adds to a result's _meta after ctxfit
// shaped it (its serverInfo).
const sdkMetaTokens = 40

var exact = func() budget.Counter {
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		panic(err)
	}
	return c
}()

// next is the continuation caller of s for follow: every continuation
// within hardCap as a client counts it (its wire JSON, [hostile.Tokens]),
// an isError continuation an error.
func next(t testing.TB, s Session, hardCap int) follow.Caller {
	return func(cursor string, part int64) ([]byte, error) {
		args := map[string]any{"cursor": cursor}
		if part != 0 {
			args["part"] = part
		}
		res, err := s.Call(mcpcore.DefaultNextTool, args)
		require.NoError(t, err)
		n, err := hostile.Tokens(res)
		require.NoError(t, err)
		assert.LessOrEqual(t, n, hardCap, "a continuation within the hard cap as a client counts it")
		var r struct {
			IsError bool `json:"isError"`
		}
		require.NoError(t, json.Unmarshal(res, &r))
		if r.IsError {
			return nil, fmt.Errorf("%s", res)
		}
		return follow.ResultBody(res)
	}
}

// wireText is what the checks read of a content block or resource
// contents.
type wireText struct {
	Type string         `json:"type"`
	Text string         `json:"text"`
	Blob string         `json:"blob"`
	URI  string         `json:"uri"`
	Meta map[string]any `json:"_meta"`
}

// Rebuilt holds result, the wire JSON of a resources/read or prompts/get
// answer of s, to both promises: its texts within hardCap by exact count,
// and following its cursors with the continuation tool (each continuation
// within hardCap) rebuilds want byte for byte.
func Rebuilt(t testing.TB, s Session, result json.RawMessage, want string, hardCap int) {
	t.Helper()
	var r struct {
		Contents []wireText `json:"contents"`
		Messages []struct {
			Content wireText `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(result, &r))
	n := 0
	var first []byte
	var err error
	switch {
	case r.Contents != nil:
		for _, c := range r.Contents {
			n += exact.Count(c.Text)
		}
		first, err = follow.ReadBody(result)
		require.NoError(t, err)
		first = withGuidanceCursor(t, first, r.Contents[1:])
	case r.Messages != nil:
		for _, m := range r.Messages {
			n += exact.Count(m.Content.Text)
		}
		first, err = follow.PromptBody(result)
		require.NoError(t, err)
	default:
		require.Failf(t, "neither a read nor a prompt", "%.300s", result)
	}
	assert.LessOrEqual(t, n, hardCap, "the answer's texts within the hard cap")
	got, _, err := follow.Rebuild(first, next(t, s, hardCap))
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "the answer rebuilt, byte for byte")
}

var guidanceCursor = regexp.MustCompile(`"cursor":"([^"]+)"`)

// withGuidanceCursor returns body, a read's first chunk envelope, with
// the next cursor that ctxfit's guidance (one of rest) names when the
// envelope has none: mcp-go's resource handlers return contents, not a
// result, so the cursor travels in the guidance, not in the result's
// _meta.
func withGuidanceCursor(t testing.TB, body []byte, rest []wireText) []byte {
	t.Helper()
	var env map[string]any
	if json.Unmarshal(body, &env) != nil || env["nextCursor"] != nil && env["nextCursor"] != "" {
		return body
	}
	if _, ok := env["metadata"]; !ok {
		return body
	}
	for _, c := range rest {
		if m := guidanceCursor.FindStringSubmatch(c.Text); m != nil {
			env["nextCursor"] = m[1]
			out, err := json.Marshal(env)
			require.NoError(t, err)
			return out
		}
	}
	return body
}

// Cases calls every tool of cases through guarded (a session of ctxfit in
// front of a server whose tools return cases) and raw (a session of that
// server itself) and holds each result to both promises: the result and
// every continuation within hardCap as a client counts them
// ([hostile.Tokens]), isError kept, _meta's token figure the whole
// result's, every block rebuilt in its place by following the cursors and
// reading the links, and the whole result behind the link to the
// original. Tools in skip are left out, with the reason given.
func Cases(t *testing.T, guarded, raw Session, cases []hostile.Case, hardCap int, skip map[string]string) {
	for _, c := range cases {
		t.Run(c.Tool, func(t *testing.T) {
			if why, ok := skip[c.Tool]; ok {
				t.Skip(why)
			}
			got, err := guarded.Call(c.Tool, map[string]any{})
			require.NoError(t, err)
			want, err := raw.Call(c.Tool, map[string]any{})
			require.NoError(t, err)
			n, err := hostile.Tokens(got)
			require.NoError(t, err)
			assert.LessOrEqual(t, n, hardCap, "the result within the hard cap as a client counts it")
			var g, w struct {
				IsError    bool            `json:"isError"`
				Content    json.RawMessage `json:"content"`
				Structured json.RawMessage `json:"structuredContent"`
				Meta       map[string]any  `json:"_meta"`
			}
			require.NoError(t, json.Unmarshal(got, &g))
			require.NoError(t, json.Unmarshal(want, &w))
			assert.Equal(t, w.IsError, g.IsError, "isError kept")
			// An SDK adds to a result's _meta after ctxfit shaped it.
			assert.InDelta(t, n, g.Meta[mcpcore.MetaTokens], sdkMetaTokens, "_meta tokens: the whole result")

			read := func(uri string) ([]byte, error) { return ReadRanges(t, guarded, uri) }
			blocks, structured, err := follow.Blocks(got, next(t, guarded, hardCap), read)
			require.NoError(t, err)
			if structured != nil {
				assert.JSONEq(t, string(w.Structured), string(structured), "the structured content rebuilt")
			} else {
				assert.Empty(t, follow.SameBlocks(blocks, w.Content), "every block rebuilt, in its place")
			}
			link := Original(t, got)
			require.NotEmpty(t, link, "a link to the whole result")
			if g.Meta[mcpcore.MetaGate] == true {
				// The gate's cut links to the rest of what it keeps: that
				// is the whole result when its content was not one text.
				link, _, _ = strings.Cut(link, "?")
			}
			whole, err := ReadRanges(t, guarded, link)
			require.NoError(t, err)
			if g.Meta[mcpcore.MetaGate] == true && !json.Valid(whole) {
				return // one text, rebuilt above
			}
			assert.JSONEq(t, string(WithoutSDKMeta(t, want)), string(WithoutSDKMeta(t, whole)), "the whole result behind its link")
		})
	}
}

// Edges holds guarded (a session of ctxfit in front of a server that
// serves the hostile edges besides tools: [hostile.UIURI],
// [hostile.HugeURI], [hostile.HugePrompt]) to both promises: the host UI
// resource reads as it is (raw, a session of the server itself, reads the
// same), not counted against the cap; a read of the huge resource and a
// get of the huge prompt are within hardCap and rebuilt ([Rebuilt]).
func Edges(t *testing.T, guarded, raw Session, hardCap int) {
	t.Run("a host UI resource passes unchanged and uncounted", func(t *testing.T) {
		got, err := guarded.Read(hostile.UIURI)
		require.NoError(t, err)
		want, err := raw.Read(hostile.UIURI)
		require.NoError(t, err)
		var g, w struct {
			Contents []struct {
				Text     string `json:"text"`
				MIMEType string `json:"mimeType"`
			} `json:"contents"`
		}
		require.NoError(t, json.Unmarshal(got, &g))
		require.NoError(t, json.Unmarshal(want, &w))
		require.Len(t, g.Contents, 1)
		require.Len(t, w.Contents, 1)
		assert.Equal(t, hostile.UIPage(), w.Contents[0].Text, "the server's page")
		assert.Equal(t, w.Contents[0].Text, g.Contents[0].Text, "the page as it is")
		assert.Equal(t, hostile.UIMIME, g.Contents[0].MIMEType)
		assert.Greater(t, exact.Count(g.Contents[0].Text), hardCap, "over the cap: host-facing content is not counted")
	})
	t.Run("a huge resource reads within the cap and is rebuilt", func(t *testing.T) {
		r, err := guarded.Read(hostile.HugeURI)
		require.NoError(t, err)
		Rebuilt(t, guarded, r, hostile.HugeText(), hardCap)
	})
	t.Run("a huge prompt comes within the cap and is rebuilt", func(t *testing.T) {
		p, err := guarded.Prompt(hostile.HugePrompt)
		require.NoError(t, err)
		Rebuilt(t, guarded, p, hostile.HugeText(), hardCap)
	})
}

// Hostile is [Cases] for [hostile.Cases] and then [Edges], under
// [hostile.HardCap].
func Hostile(t *testing.T, guarded, raw Session, skip map[string]string) {
	Cases(t, guarded, raw, hostile.Cases(), hostile.HardCap, skip)
	Edges(t, guarded, raw, hostile.HardCap)
}

// Original returns the URI of the resource_link to the held-back
// original that a shaped result (its wire JSON) carries (a ctxfit://
// URI), "" when it has none.
func Original(t testing.TB, result json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []wireText `json:"content"`
	}
	require.NoError(t, json.Unmarshal(result, &r))
	for _, c := range r.Content {
		if c.Type == "resource_link" && strings.HasPrefix(c.URI, mcpcore.ResourcePrefix) && c.Meta[mcpcore.MetaOriginal] == true {
			return c.URI
		}
	}
	return ""
}

// ReadRanges reads a ctxfit:// resource through s in ranges of 1,500
// bytes, as a client reads a large original in parts, and returns its
// bytes: from byte N on for a link to the rest of a cut (?bytes=N-).
func ReadRanges(t testing.TB, s Session, uri string) ([]byte, error) {
	t.Helper()
	const size = 1500
	start := 0
	if base, q, ok := strings.Cut(uri, "?bytes="); ok {
		from, open := strings.CutSuffix(q, "-")
		n, err := strconv.Atoi(from)
		require.True(t, open && err == nil, "a link to the rest is ?bytes=N-: %s", uri)
		uri, start = base, n
	}
	var out []byte
	for at := start; ; {
		res, err := s.Read(fmt.Sprintf("%s?bytes=%d-%d", uri, at, at+size-1))
		if err != nil {
			if at > start && strings.Contains(err.Error(), "past the end") {
				return out, nil
			}
			return nil, err
		}
		var r struct {
			Contents []wireText     `json:"contents"`
			Meta     map[string]any `json:"_meta"`
		}
		require.NoError(t, json.Unmarshal(res, &r))
		require.NotEmpty(t, r.Contents)
		piece := []byte(r.Contents[0].Text)
		if r.Contents[0].Blob != "" {
			piece, err = base64.StdEncoding.DecodeString(r.Contents[0].Blob)
			require.NoError(t, err)
		}
		out = append(out, piece...)
		at += len(piece)
		// A range over the cap comes cut, with the next range to read.
		if len(piece) < size && r.Meta[mcpcore.MetaNextRange] == nil || len(piece) == 0 {
			return out, nil
		}
	}
}

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
