package mcpcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/store"
)

// Client is what the client-side guards of both SDKs (mcpclientfit,
// mcpgoclientfit) share: the tool names, the subject of a call, the
// Shaper, and which runner (an SDK's session or transport, of type R) last
// ran each tool or read each URI, for the reruns of replay-mode
// continuations and drill-downs.
//
// A Client is safe for concurrent use. Create one with [NewClient].
type Client[R comparable] struct {
	Names   Names
	Shaper  *Shaper
	Subject func(context.Context) string

	mu   sync.Mutex
	last map[string]R
}

// maxRunners bounds the tools and URIs a Client remembers the runner of.
const maxRunners = 4096

// NewClient returns the Client of a guard with the continuation and
// details tools named next and details ("" for the defaults) and subject
// (nil for [store.SubjectFrom]). pkg prefixes its errors: a nil guard, two
// tools of the same name.
func NewClient[R comparable](pkg string, g *ctxfit.Guard, next, details string, subject func(context.Context) string) (*Client[R], error) {
	if g == nil {
		return nil, errors.New(pkg + ": New needs a guard")
	}
	names := Names{Next: next, Details: details}.WithDefaults()
	if names.Next == names.Details {
		return nil, fmt.Errorf("%s: the continuation and details tools have the same name %q", pkg, names.Next)
	}
	if subject == nil {
		subject = store.SubjectFrom
	}
	return &Client[R]{Names: names, Shaper: &Shaper{Guard: g, Names: names}, Subject: subject, last: map[string]R{}}, nil
}

// Own answers a call of the continuation or drill-down tool for the
// subject of ctx, running tools again with rerun; an error for a name the
// client does not own. pkg prefixes the error.
func (c *Client[R]) Own(ctx context.Context, pkg, name string, args json.RawMessage, rerun Rerun) (json.RawMessage, error) {
	subject := c.Subject(ctx)
	switch name {
	case c.Names.Next:
		return c.Shaper.Next(ctx, subject, args, rerun), nil
	case c.Names.Details:
		return c.Shaper.Details(ctx, subject, args, rerun), nil
	}
	return nil, fmt.Errorf("%s: %q is not a tool of the guard", pkg, name)
}

// Keep keeps a cleared conversation result for the subject of ctx
// ([Shaper.Keep]) and returns the continuation tool's name and arguments.
func (c *Client[R]) Keep(ctx context.Context, content string) (string, string, error) {
	args, err := c.Shaper.Keep(ctx, c.Subject(ctx), content)
	if err != nil {
		return "", "", err
	}
	return c.Names.Next, string(args), nil
}

// Remember notes that r ran the tool (or read the URI: [ReadKey]) key.
func (c *Client[R]) Remember(key string, r R) {
	var zero R
	if r == zero {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last[key] == r {
		return
	}
	if len(c.last) >= maxRunners {
		clear(c.last)
	}
	c.last[key] = r
}

// Runner returns the runner that last ran key, or fallback.
func (c *Client[R]) Runner(key string, fallback R) R {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.last[key]; ok {
		return r
	}
	return fallback
}

// ReadKey is the key under which a Client remembers the runner of a read
// of uri.
func ReadKey(uri string) string { return ReadResourceTool + " " + uri }
