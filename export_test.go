package ctxfit

import (
	"context"
	"time"
)

// SetShapeContext makes g's shaping run in the contexts f makes instead of
// context.WithTimeout's: tests end shaping at a chosen step, not at a time.
func SetShapeContext(g *Guard, f func(context.Context, time.Duration) (context.Context, context.CancelFunc)) {
	g.shapeContext = f
}
