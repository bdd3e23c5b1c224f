package proxy_test

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

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/proxy"
)

// hostileUpstream is an upstream that is a fresh hostile server
// (mcpfittest.HostileServer) in this process for every connection.
func hostileUpstream() proxy.Upstream {
	return proxy.Upstream{Dial: func(ctx context.Context) (mcp.Connection, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := mcpfittest.HostileServer().Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct.Connect(ctx)
	}}
}

func TestEveryHostileResultIsShapedWithinTheCapAndRebuilt(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			f := newFixture(t, hostileUpstream(), ctxfit.Config{Threshold: 1000, HardCap: mcpfittest.HostileHardCap, Mode: mode}, proxy.Options{})
			st, ct := mcp.NewInMemoryTransports()
			_, err := mcpfittest.HostileServer().Connect(context.Background(), st, nil)
			require.NoError(t, err)
			raw, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
				Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			require.NoError(t, err)
			t.Cleanup(func() { raw.Close() })
			mcpfittest.CheckHostile(t, f.connect(nil), raw, nil)
		})
	}
}

// failingUpstream is an upstream whose tool, resource and prompt each
// fail with a JSON-RPC error of a huge message and huge data.
func failingUpstream(rpcErr *jsonrpc.Error) proxy.Upstream {
	return proxy.Upstream{Dial: func(ctx context.Context) (mcp.Connection, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "failing", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, rpcErr })
		s.AddResource(&mcp.Resource{URI: "file:///fails.txt", Name: "fails"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, rpcErr })
		s.AddPrompt(&mcp.Prompt{Name: "fails"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, rpcErr })
		st, ct := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct.Connect(ctx)
	}}
}

func TestAnUpstreamsHugeErrorComesWithinTheCapWithALinkToTheWholeError(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "at frame %d: the upstream failed to open the file\n", i)
	}
	data, err := json.Marshal(map[string]any{"trace": b.String()})
	require.NoError(t, err)
	rpcErr := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: b.String(), Data: data}
	whole, err := json.Marshal(map[string]any{"code": rpcErr.Code, "message": rpcErr.Message, "data": rpcErr.Data})
	require.NoError(t, err)
	ctx := context.Background()
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		f := newFixture(t, failingUpstream(rpcErr), ctxfit.Config{Threshold: 1000, HardCap: mcpfittest.HostileHardCap, Mode: mode}, proxy.Options{})
		cs := f.connect(nil)
		for _, tc := range []struct {
			name string
			call func() error
		}{
			{"a tool's error", func() error {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fails", Arguments: map[string]any{}})
				return err
			}},
			{"a read's error", func() error {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///fails.txt"})
				return err
			}},
			{"a prompt's error", func() error {
				_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "fails"})
				return err
			}},
		} {
			t.Run(tc.name+" in "+string(mode)+" mode is cut within the cap, the whole error behind a link", func(t *testing.T) {
				var got *jsonrpc.Error
				require.ErrorAs(t, tc.call(), &got)
				assert.Equal(t, rpcErr.Code, got.Code, "the code as it came")
				assert.LessOrEqual(t, mcpfittest.Count(got.Message)+mcpfittest.Count(string(got.Data)), mcpfittest.HostileHardCap, "the error within the hard cap")
				var held map[string]any
				require.NoError(t, json.Unmarshal(got.Data, &held))
				uri, _ := held[mcpcore.MetaErrorOriginal].(string)
				require.NotEmpty(t, uri, "a link to the whole error: %s", got.Data)
				read, err := mcpfittest.ReadRanges(t, cs, uri)
				require.NoError(t, err)
				assert.JSONEq(t, string(whole), string(read), "the whole error behind its link")
			})
		}
	}
}
