package mcpclientfit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/mcpclientfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

func TestEveryHostileResultIsShapedWithinTheCapAndRebuilt(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			s := mcpfittest.HostileServer()
			cg, err := mcpclientfit.New(newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: mcpfittest.HostileHardCap, Mode: mode}), nil)
			require.NoError(t, err)
			mcpfittest.CheckHostile(t, connect(t, s, cg), connect(t, s, nil), nil)
		})
	}
}

func TestAServersHugeErrorComesWithinTheCapWithALinkToTheWholeError(t *testing.T) {
	rpcErr := mcpfittest.HugeError()
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			cg, err := mcpclientfit.New(newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: mcpfittest.HostileHardCap, Mode: mode}), nil)
			require.NoError(t, err)
			mcpfittest.CheckHugeErrors(t, connect(t, mcpfittest.FailingServer(rpcErr), cg), rpcErr, mcpfittest.HostileHardCap)
		})
	}
}
