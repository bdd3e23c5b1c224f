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

	mu         sync.Mutex
	last       map[string]R
	repeatable map[string]bool // by tool, from the server's tools/list
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
	if err := names.Distinct(); err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
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
	case c.Names.Search:
		return c.Shaper.Search(ctx, subject, args, rerun), nil
	case c.Names.Query:
		return c.Shaper.Query(ctx, subject, args, rerun), nil
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

// Learn records what a page of the server's tools/list says of running
// each tool again (see [Repeatable]).
func (c *Client[R]) Learn(tools []ToolHints) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.repeatable == nil || len(c.repeatable)+len(tools) > maxRunners {
		c.repeatable = make(map[string]bool, len(tools))
	}
	for _, t := range tools {
		c.repeatable[t.Name] = Repeatable(t.ReadOnly, t.Idempotent)
	}
}

// Unrepeatable reports whether the tool named name must not run again to
// continue its result: the server's tools/list did not say it is
// read-only or idempotent (or was not read).
func (c *Client[R]) Unrepeatable(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.repeatable[name]
}

// ToolHints are the annotations of a tool that say whether it may run
// again.
type ToolHints struct {
	Name                 string
	ReadOnly, Idempotent bool
}

// ReadKey is the key under which a Client remembers the runner of a read
// of uri.
func ReadKey(uri string) string { return ReadResourceTool + " " + uri }
