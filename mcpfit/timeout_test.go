package mcpfit_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/testing/hostile"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// TestATimeOutAnswersValidResultsNeverAnError calls tools that return
// generated results (every shape of hostile.Generate) under a shaping
// time limit of a millisecond: every answer is a valid result within the
// hard cap, never an error, and following it rebuilds the original.
func TestATimeOutAnswersValidResultsNeverAnError(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 3))
	n := 4
	if testing.Short() {
		n = 2
	}
	cases := make([]hostile.Case, n)
	for i := range cases {
		cases[i] = hostile.Case{Tool: fmt.Sprintf("generated_%d", i), Result: hostile.Generate(r, 30)}
	}
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode)+" mode", func(t *testing.T) {
			s := mcpfittest.CasesServer(cases)
			g := newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: mcpfittest.HostileHardCap, Mode: mode,
				ShapeTimeout: 1}) // a nanosecond: every shaping runs past it, the same path on every machine
			require.NoError(t, mcpfit.Install(s, g, nil))
			mcpfittest.CheckCases(t, connect(t, s), connect(t, mcpfittest.CasesServer(cases)), cases, mcpfittest.HostileHardCap, nil)
		})
	}
}
