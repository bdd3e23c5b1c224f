package mcpfittest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/hostile"
	"github.com/ctxfit/ctxfit/internal/testing/mcpcheck"
)

// HostileHardCap is the hard cap (threshold 1,000) the hostile results
// are tested under ([hostile.HardCap]).
const HostileHardCap = hostile.HardCap

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

// The hostile edges besides tools ([hostile.UIURI] and the others).
const (
	HostileUIURI      = hostile.UIURI
	HostileUIMIME     = hostile.UIMIME
	HostileHugeURI    = hostile.HugeURI
	HostileHugePrompt = hostile.HugePrompt
)

// HostileUIPage is the host UI resource's page ([hostile.UIPage]).
func HostileUIPage() string { return hostile.UIPage() }

// HostileHugeText is the text of the huge resource and prompt
// ([hostile.HugeText]).
func HostileHugeText() string { return hostile.HugeText() }

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
	mcpcheck.Hostile(t, session(guarded), session(raw), skip)
}

// CheckHostileEdges holds guarded (a session of ctxfit in front of
// [HostileServer]) to both promises beyond tools: the host UI resource
// reads as it is (raw, a session of the server itself, reads the same),
// not counted against the cap; a read of the huge resource and a get of
// the huge prompt are within hardCap ([CheckRebuilt]).
func CheckHostileEdges(t *testing.T, guarded, raw *mcp.ClientSession, hardCap int) {
	mcpcheck.Edges(t, session(guarded), session(raw), hardCap)
}

// CheckCases is [CheckHostile] for the tools of [CasesServer](cases),
// under hardCap.
func CheckCases(t *testing.T, guarded, raw *mcp.ClientSession, cases []hostile.Case, hardCap int, skip map[string]string) {
	mcpcheck.Cases(t, session(guarded), session(raw), cases, hardCap, skip)
}

// CheckRebuilt holds result, a resources/read or prompts/get answer of
// cs (a *mcp.ReadResourceResult, a *mcp.GetPromptResult, or its wire
// JSON), to both promises: its texts within hardCap by exact count, and
// following its cursors with [mcpcore.DefaultNextTool] (each continuation
// within hardCap as a client counts it) rebuilds want byte for byte.
func CheckRebuilt(t testing.TB, cs *mcp.ClientSession, result any, want string, hardCap int) {
	t.Helper()
	raw, ok := result.(json.RawMessage)
	if !ok {
		var err error
		raw, err = json.Marshal(result)
		require.NoError(t, err)
	}
	mcpcheck.Rebuilt(t, session(cs), raw, want, hardCap)
}

// session is cs as raw JSON.
func session(cs *mcp.ClientSession) mcpcheck.Session {
	ctx := context.Background()
	return mcpcheck.Session{
		Call: func(tool string, args map[string]any) (json.RawMessage, error) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
		Read: func(uri string) (json.RawMessage, error) {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
		Prompt: func(name string) (json.RawMessage, error) {
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
	}
}

// ReadRanges reads a ctxfit:// resource in ranges of 1,500 bytes, as a
// client reads a large original in parts, and returns its bytes.
func ReadRanges(t testing.TB, cs *mcp.ClientSession, uri string) ([]byte, error) {
	t.Helper()
	return mcpcheck.ReadRanges(t, session(cs), uri)
}

// WithoutSDKMeta is a result's wire JSON without what an SDK adds to
// every result after ctxfit shaped it: the _meta key
// io.modelcontextprotocol/serverInfo, and mcp-go's resultType.
func WithoutSDKMeta(t testing.TB, raw []byte) []byte {
	t.Helper()
	return mcpcheck.WithoutSDKMeta(t, raw)
}

// FailingServer is an MCP server (official SDK) whose tool "fails",
// resource [FailingURI] and prompt "fails" each fail with rpcErr, a
// JSON-RPC error (a huge one, for [CheckHugeErrors]).
func FailingServer(rpcErr *jsonrpc.Error) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "failing", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, rpcErr })
	s.AddResource(&mcp.Resource{URI: FailingURI, Name: "fails"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, rpcErr })
	s.AddPrompt(&mcp.Prompt{Name: "fails"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, rpcErr })
	return s
}

// FailingURI is the resource of [FailingServer].
const FailingURI = "file:///fails.txt"

// HugeError is a JSON-RPC error some 30,000 tokens long, in its message
// and in its data, for [FailingServer].
func HugeError() *jsonrpc.Error {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "at frame %d: the upstream failed to open the file\n", i)
	}
	data, _ := json.Marshal(map[string]any{"trace": b.String()})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: b.String(), Data: data}
}

// CheckHugeErrors calls the tool, reads the resource and gets the prompt
// of [FailingServer](rpcErr) through cs (a session of ctxfit in front of
// it): each error comes with its code, within hardCap by exact count of
// its message and data, and its data links to the whole error, which
// reads back by ranges as it was.
func CheckHugeErrors(t *testing.T, cs *mcp.ClientSession, rpcErr *jsonrpc.Error, hardCap int) {
	ctx := context.Background()
	whole, err := json.Marshal(map[string]any{"code": rpcErr.Code, "message": rpcErr.Message, "data": rpcErr.Data})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"a tool's error", func() error {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fails", Arguments: map[string]any{}})
			return err
		}},
		{"a read's error", func() error {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: FailingURI})
			return err
		}},
		{"a prompt's error", func() error {
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "fails"})
			return err
		}},
	} {
		t.Run(tc.name+" is cut within the cap, the whole error behind a link", func(t *testing.T) {
			var got *jsonrpc.Error
			require.ErrorAs(t, tc.call(), &got)
			assert.Equal(t, rpcErr.Code, got.Code, "the code as it came")
			assert.LessOrEqual(t, Count(got.Message)+Count(string(got.Data)), hardCap, "the error within the hard cap")
			var held map[string]any
			require.NoError(t, json.Unmarshal(got.Data, &held))
			uri, _ := held[mcpcore.MetaErrorOriginal].(string)
			require.NotEmpty(t, uri, "a link to the whole error: %.300s", got.Data)
			read, err := ReadRanges(t, cs, uri)
			require.NoError(t, err)
			assert.JSONEq(t, string(whole), string(read), "the whole error behind its link")
		})
	}
}
