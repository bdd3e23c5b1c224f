package mcpclientfit

import "context"

type unshapedKey struct{}

// withUnshaped marks the calls a continuation makes to run a tool again:
// the middleware lets them through unshaped.
func withUnshaped(ctx context.Context) context.Context {
	return context.WithValue(ctx, unshapedKey{}, true)
}

func unshaped(ctx context.Context) bool {
	b, _ := ctx.Value(unshapedKey{}).(bool)
	return b
}
