package ctxfit

import (
	"context"
	"testing"
	"time"

	"github.com/itchyny/gojq"
)

// SetShapeContext makes g's shaping run in the contexts f makes instead of
// context.WithTimeout's: tests end shaping at a chosen step, not at a time.
func SetShapeContext(g *Guard, f func(context.Context, time.Duration) (context.Context, context.CancelFunc)) {
	g.shapeContext = f
}

// WithPanickingQueryFunction gives the queries of t a jq function,
// panic_for_test, that panics with a value holding "s3cret-data".
func WithPanickingQueryFunction(t *testing.T) {
	queryTestOptions = []gojq.CompilerOption{gojq.WithFunction("panic_for_test", 0, 0, func(any, []any) any {
		panic("boom: s3cret-data")
	})}
	t.Cleanup(func() { queryTestOptions = nil })
}
