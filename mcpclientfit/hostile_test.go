package mcpclientfit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/testing/mcptest"
	"github.com/ctxfit/ctxfit/mcpclientfit"
)

func TestEveryHostileResultIsShapedWithinTheCapAndRebuilt(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			s := mcptest.HostileServer()
			cg, err := mcpclientfit.New(newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: mcptest.HostileHardCap, Mode: mode}), nil)
			require.NoError(t, err)
			mcptest.CheckHostile(t, connect(t, s, cg), connect(t, s, nil), nil)
		})
	}
}
