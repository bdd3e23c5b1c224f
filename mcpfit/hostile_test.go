package mcpfit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/testing/mcptest"
	"github.com/ctxfit/ctxfit/mcpfit"
)

func TestEveryHostileResultIsShapedWithinTheCapAndRebuilt(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			s := mcptest.HostileServer()
			require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: mcptest.HostileHardCap, Mode: mode}), nil))
			mcptest.CheckHostile(t, connect(t, s), connect(t, mcptest.HostileServer()), nil)
		})
	}
}
