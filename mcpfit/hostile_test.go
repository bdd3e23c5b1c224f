package mcpfit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

func TestEveryHostileResultIsShapedWithinTheCapAndRebuilt(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			s := mcpfittest.HostileServer()
			require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: mcpfittest.HostileHardCap, Mode: mode}), nil))
			mcpfittest.CheckHostile(t, connect(t, s), connect(t, mcpfittest.HostileServer()), nil)
		})
	}
}

func TestAHandlersHugeErrorComesWithinTheCapWithALinkToTheWholeError(t *testing.T) {
	rpcErr := mcpfittest.HugeError()
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			s := mcpfittest.FailingServer(rpcErr)
			require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: mcpfittest.HostileHardCap, Mode: mode}), nil))
			mcpfittest.CheckHugeErrors(t, connect(t, s), rpcErr, mcpfittest.HostileHardCap)
		})
	}
}
