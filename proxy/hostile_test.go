package proxy_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
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

// failingUpstream is an upstream that is mcpfittest.FailingServer(rpcErr)
// in this process.
func failingUpstream(rpcErr *jsonrpc.Error) proxy.Upstream {
	return proxy.Upstream{Dial: func(ctx context.Context) (mcp.Connection, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := mcpfittest.FailingServer(rpcErr).Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct.Connect(ctx)
	}}
}

func TestAnUpstreamsHugeErrorComesWithinTheCapWithALinkToTheWholeError(t *testing.T) {
	rpcErr := mcpfittest.HugeError()
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			f := newFixture(t, failingUpstream(rpcErr), ctxfit.Config{Threshold: 1000, HardCap: mcpfittest.HostileHardCap, Mode: mode}, proxy.Options{})
			mcpfittest.CheckHugeErrors(t, f.connect(nil), rpcErr, mcpfittest.HostileHardCap)
		})
	}
}
