package mcpclientfit

import "context"

type subjectKey struct{}

// WithSubject returns a copy of ctx whose calls bind their cursors to
// subject (see [SubjectFromContext]): a chat session's id, a user, a
// tenant.
func WithSubject(ctx context.Context, subject string) context.Context {
	return context.WithValue(ctx, subjectKey{}, subject)
}

// SubjectFromContext returns the subject [WithSubject] set on ctx, "" when
// none: then every cursor of the process is bound to the same, empty,
// subject.
func SubjectFromContext(ctx context.Context) string {
	s, _ := ctx.Value(subjectKey{}).(string)
	return s
}

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
