package mcpgoclientfit_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/testing/hostile"
	"github.com/ctxfit/ctxfit/internal/testing/mcpcheck"
)

// hostileServer serves the hostile results (hostile.Cases), a read-only
// tool each, and the edges besides tools: a host UI resource, a huge
// resource and a huge prompt.
func hostileServer() *server.MCPServer {
	s := server.NewMCPServer("hostile", "1", server.WithToolCapabilities(true), server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false))
	s.AddResource(mcp.NewResource(hostile.UIURI, "app", mcp.WithMIMEType(hostile.UIMIME)),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: hostile.UIURI, MIMEType: hostile.UIMIME, Text: hostile.UIPage()}}, nil
		})
	s.AddResource(mcp.NewResource(hostile.HugeURI, "huge", mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: hostile.HugeURI, MIMEType: "text/plain", Text: hostile.HugeText()}}, nil
		})
	s.AddPrompt(mcp.NewPrompt(hostile.HugePrompt), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(hostile.HugeText())}}}, nil
	})
	for _, c := range hostile.Cases() {
		s.AddTool(mcp.NewTool(c.Tool, mcp.WithReadOnlyHintAnnotation(true)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			raw := json.RawMessage(c.Result)
			return mcp.ParseCallToolResult(&raw)
		})
	}
	return s
}

// session is c as raw JSON, for the checks of mcpcheck.
func session(c *client.Client) mcpcheck.Session {
	ctx := context.Background()
	return mcpcheck.Session{
		Call: func(tool string, args map[string]any) (json.RawMessage, error) {
			res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
		Read: func(uri string) (json.RawMessage, error) {
			res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
		Prompt: func(name string) (json.RawMessage, error) {
			res, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: name}})
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
	}
}

// TestEveryHostileResultIsShapedWithinTheCapAndRebuilt holds the client
// guard to the hostile run every MCP adapter passes (mcpcheck.Hostile):
// every response within the cap as the client counts it, everything
// reachable and rebuilt byte for byte, block structure equal.
func TestEveryHostileResultIsShapedWithinTheCapAndRebuilt(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			cg := newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: hostile.HardCap, Mode: mode})
			mcpcheck.Hostile(t, session(connect(t, hostileServer(), cg)), session(connect(t, hostileServer(), nil)), nil)
		})
	}
}

func TestAServersHugeErrorComesWithinTheCapWithALinkToTheWholeError(t *testing.T) {
	huge := hostile.HugeText()
	fail := errors.New(huge)
	s := server.NewMCPServer("failing", "1", server.WithToolCapabilities(true), server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false))
	s.AddTool(mcp.NewTool("fails"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, fail })
	s.AddResource(mcp.NewResource("file:///fails.txt", "fails"), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return nil, fail
	})
	s.AddPrompt(mcp.NewPrompt("fails"), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, fail })
	link := regexp.MustCompile(`ctxfit://r/\S+`)
	ctx := context.Background()
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		c := connect(t, s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: hostile.HardCap, Mode: mode}))
		for _, tc := range []struct {
			name string
			call func() error
		}{
			{"a tool's error", func() error {
				_, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "fails"}})
				return err
			}},
			{"a read's error", func() error {
				_, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "file:///fails.txt"}})
				return err
			}},
			{"a prompt's error", func() error {
				_, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "fails"}})
				return err
			}},
		} {
			t.Run(tc.name+" in "+string(mode)+" mode is cut within the cap, the whole error behind a link", func(t *testing.T) {
				err := tc.call()
				require.Error(t, err)
				assert.LessOrEqual(t, exact.Count(err.Error()), hostile.HardCap, "the error within the hard cap")
				uri := link.FindString(err.Error())
				require.NotEmpty(t, uri, "a link to the whole error: %.300s", err.Error())
				whole, err := mcpcheck.ReadRanges(t, session(c), uri)
				require.NoError(t, err)
				var got struct {
					Message string `json:"message"`
				}
				require.NoError(t, json.Unmarshal(whole, &got))
				assert.Equal(t, huge, got.Message, "the whole error behind its link")
			})
		}
	}
}
