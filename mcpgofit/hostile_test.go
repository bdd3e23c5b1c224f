package mcpgofit_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/hostile"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/mcpgofit"
)

const hostileHardCap = 2000

// hostileServer serves the hostile results (hostile.Cases), a read-only
// tool each.
func hostileServer() *server.MCPServer {
	s := server.NewMCPServer("hostile", "1", server.WithToolCapabilities(true), server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false))
	// The edges besides tools (mcpfittest.HostileServer's).
	s.AddResource(mcp.NewResource(mcpfittest.HostileUIURI, "app", mcp.WithMIMEType(mcpfittest.HostileUIMIME)),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: mcpfittest.HostileUIURI, MIMEType: mcpfittest.HostileUIMIME, Text: mcpfittest.HostileUIPage()}}, nil
		})
	s.AddResource(mcp.NewResource(mcpfittest.HostileHugeURI, "huge", mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: mcpfittest.HostileHugeURI, MIMEType: "text/plain", Text: mcpfittest.HostileHugeText()}}, nil
		})
	s.AddPrompt(mcp.NewPrompt(mcpfittest.HostileHugePrompt), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(mcpfittest.HostileHugeText())}}}, nil
	})
	for _, c := range hostile.Cases() {
		s.AddTool(mcp.NewTool(c.Tool, mcp.WithReadOnlyHintAnnotation(true)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			raw := json.RawMessage(c.Result)
			return mcp.ParseCallToolResult(&raw)
		})
	}
	return s
}

// readRanges reads a ctxfit:// resource in ranges of 1,500 bytes.
func readRanges(t *testing.T, c *client.Client, uri string) ([]byte, error) {
	t.Helper()
	const size = 1500
	var out []byte
	for at := 0; ; at += size {
		r, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: fmt.Sprintf("%s?bytes=%d-%d", uri, at, at+size-1)}})
		if err != nil {
			if at > 0 && strings.Contains(err.Error(), "past the end") {
				return out, nil
			}
			return nil, err
		}
		require.Len(t, r.Contents, 1)
		var piece []byte
		switch rc := r.Contents[0].(type) {
		case mcp.TextResourceContents:
			piece = []byte(rc.Text)
		case mcp.BlobResourceContents:
			piece, err = base64.StdEncoding.DecodeString(rc.Blob)
			require.NoError(t, err)
		}
		out = append(out, piece...)
		if len(piece) < size {
			return out, nil
		}
	}
}

func TestEveryHostileResultIsShapedWithinTheCapAndRebuilt(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		s := hostileServer()
		require.NoError(t, mcpgofit.Install(s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: hostileHardCap, Mode: mode}), nil))
		guarded, raw := connect(t, s), connect(t, hostileServer())
		for _, c := range hostile.Cases() {
			t.Run(fmt.Sprintf("%s in %s mode", c.Tool, mode), func(t *testing.T) {
				got, want := call(t, guarded, c.Tool, nil), call(t, raw, c.Tool, nil)
				gotJSON, err := json.Marshal(got)
				require.NoError(t, err)
				wantJSON, err := json.Marshal(want)
				require.NoError(t, err)
				n, err := hostile.Tokens(gotJSON)
				require.NoError(t, err)
				assert.LessOrEqual(t, n, hostileHardCap, "the result within the hard cap as a client counts it")
				assert.Equal(t, want.IsError, got.IsError)
				assert.InDelta(t, n, metaOf(got)[mcpcore.MetaTokens], 40, "_meta tokens: the whole result")

				next := func(cursor string, part int64) ([]byte, error) {
					args := map[string]any{"cursor": cursor}
					if part != 0 {
						args["part"] = part
					}
					res := call(t, guarded, mcpcore.DefaultNextTool, args)
					b, err := json.Marshal(res)
					require.NoError(t, err)
					n, err := hostile.Tokens(b)
					require.NoError(t, err)
					assert.LessOrEqual(t, n, hostileHardCap, "a continuation within the hard cap as a client counts it")
					if res.IsError {
						return nil, fmt.Errorf("%s", b)
					}
					return follow.ResultBody(b)
				}
				blocks, structured, err := follow.Blocks(gotJSON, next, func(uri string) ([]byte, error) { return readRanges(t, guarded, uri) })
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
				link := original(got)
				require.NotNil(t, link, "a link to the whole result")
				whole, err := readRanges(t, guarded, link.URI)
				require.NoError(t, err)
				assert.JSONEq(t, string(mcpfittest.WithoutSDKMeta(t, wantJSON)), string(mcpfittest.WithoutSDKMeta(t, whole)), "the whole result behind its link")
			})
		}
	}
}

func TestTheHostileEdgesBesidesToolsKeepBothPromises(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		s := hostileServer()
		require.NoError(t, mcpgofit.Install(s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: hostileHardCap, Mode: mode}), nil))
		guarded := connect(t, s)
		ctx := context.Background()
		next := func(cursor string, part int64) ([]byte, error) {
			args := map[string]any{"cursor": cursor}
			if part != 0 {
				args["part"] = part
			}
			res := call(t, guarded, mcpcore.DefaultNextTool, args)
			require.False(t, res.IsError, "%v", texts(t, res))
			assert.LessOrEqual(t, tokensOf(t, res), hostileHardCap, "a continuation within the hard cap")
			raw, err := json.Marshal(res)
			require.NoError(t, err)
			return follow.ResultBody(raw)
		}
		t.Run("a host UI resource passes unchanged and uncounted in "+string(mode)+" mode", func(t *testing.T) {
			r, err := guarded.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: mcpfittest.HostileUIURI}})
			require.NoError(t, err)
			require.Len(t, r.Contents, 1)
			page := r.Contents[0].(mcp.TextResourceContents)
			assert.Equal(t, mcpfittest.HostileUIPage(), page.Text, "the page as it is")
			assert.Equal(t, mcpfittest.HostileUIMIME, page.MIMEType)
		})
		t.Run("a huge resource reads within the cap and is rebuilt in "+string(mode)+" mode", func(t *testing.T) {
			r, err := guarded.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: mcpfittest.HostileHugeURI}})
			require.NoError(t, err)
			n := 0
			for _, rc := range r.Contents {
				n += mcpfittest.Count(rc.(mcp.TextResourceContents).Text)
			}
			assert.LessOrEqual(t, n, hostileHardCap, "a read within the hard cap")
			rr, err := json.Marshal(r)
			require.NoError(t, err)
			first, err := follow.ReadBody(rr)
			require.NoError(t, err)
			first = withGuidanceCursor(t, first, r.Contents[len(r.Contents)-1].(mcp.TextResourceContents).Text)
			got, _, err := follow.Rebuild(first, next)
			require.NoError(t, err)
			assert.Equal(t, mcpfittest.HostileHugeText(), string(got), "the resource rebuilt, byte for byte")
		})
		t.Run("a huge prompt comes within the cap and is rebuilt in "+string(mode)+" mode", func(t *testing.T) {
			p, err := guarded.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: mcpfittest.HostileHugePrompt}})
			require.NoError(t, err)
			n := 0
			for _, m := range p.Messages {
				if tc, ok := m.Content.(mcp.TextContent); ok {
					n += mcpfittest.Count(tc.Text)
				}
			}
			assert.LessOrEqual(t, n, hostileHardCap, "a prompt within the hard cap")
			pr, err := json.Marshal(p)
			require.NoError(t, err)
			first, err := follow.PromptBody(pr)
			require.NoError(t, err)
			got, _, err := follow.Rebuild(first, next)
			require.NoError(t, err)
			assert.Equal(t, mcpfittest.HostileHugeText(), string(got), "the prompt rebuilt, byte for byte")
		})
	}
}
