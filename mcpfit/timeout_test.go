package mcpfit_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/testing/hostile"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// TestATimeOutAnswersValidResultsNeverAnError calls tools that return
// generated results (every shape of hostile.Generate) under tiny shaping
// time limits: every answer is a valid result within the hard cap, never
// an error, and following it rebuilds the original. A nanosecond ends
// every shaping before it starts; the others end it somewhere inside
// (where depends on the machine: on a loaded one at 100 µs a store call
// ran past the limit), and every place must keep both promises, so none
// can fail on a slow machine.
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
	for _, limit := range []time.Duration{time.Nanosecond, 10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond} {
		for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
			t.Run(fmt.Sprintf("%v in %s mode", limit, mode), func(t *testing.T) {
				s := mcpfittest.CasesServer(cases)
				g := newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: mcpfittest.HostileHardCap, Mode: mode,
					ShapeTimeout: ctxfit.Duration(limit)})
				require.NoError(t, mcpfit.Install(s, g, nil))
				mcpfittest.CheckCases(t, connect(t, s), connect(t, mcpfittest.CasesServer(cases)), cases, mcpfittest.HostileHardCap, nil)
			})
		}
	}
}
