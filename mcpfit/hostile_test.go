package mcpfit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/testing/mcptest"
	"github.com/ctxfit/ctxfit/mcpfit"
)

// isErrorSkip: the adapters hand a tool's isError result to the egress
// gate rather than to the Shaper (see internal/mcpcore's shape tests for
// an isError result shaped whole).
var isErrorSkip = map[string]string{"huge_error": "mcpfit does not shape a tool's isError result"}

func TestEveryHostileResultIsShapedWithinTheCapAndRebuilt(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			s := mcptest.HostileServer()
			require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: mcptest.HostileHardCap, Mode: mode}), nil))
			mcptest.CheckHostile(t, connect(t, s), connect(t, mcptest.HostileServer()), isErrorSkip)
		})
	}
}
