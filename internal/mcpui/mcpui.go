// Package mcpui reads what the page of package internal/ui shows of an MCP
// tool call: the cursors inside what the model received, and its original
// read back from the guard's store. It imports no MCP SDK (the core module's
// rule): the middleware that hands an SDK server's calls to the page lives
// with the server (cmd/ctxfit's gateway; the proxy has its own call log).
package mcpui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/ui"
)

// errNoReplay is what reading an original the store no longer holds
// answers: the page never runs a tool again.
var errNoReplay = errors.New("ui: the original is no longer kept")

// Original returns the function that reads back the original a token of
// a shaped result leads to, from g's store, for subject; nil when token is
// "". It never runs the tool again (replay mode): an original the store
// does not hold is an error.
func Original(g *ctxfit.Guard, token, subject string) func(context.Context) ([]byte, error) {
	if token == "" {
		return nil
	}
	return func(ctx context.Context) ([]byte, error) {
		data, _, err := g.ReadResource(ctx, token, subject, func(context.Context) (ctxfit.Response, error) {
			return ctxfit.Response{}, errNoReplay
		})
		return data, err
	}
}

// Cursors returns the cursors a tool result hands the model (in its _meta
// and its ctxfit:// links) and the token of the link to its whole
// original ("" when none).
func Cursors(res json.RawMessage) (cursors []ui.Cursor, original string) {
	var r struct {
		Content []struct {
			Type string         `json:"type"`
			URI  string         `json:"uri"`
			Meta map[string]any `json:"_meta"`
		} `json:"content"`
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(res, &r) != nil {
		return nil, ""
	}
	for _, k := range []struct{ key, name string }{
		{mcpcore.MetaNextCursor, "next"}, {mcpcore.MetaDetailsCursor, "details"}, {mcpcore.MetaPartCursor, "part"},
	} {
		if v, ok := r.Meta[k.key].(string); ok && v != "" {
			cursors = append(cursors, ui.Cursor{Name: k.name, Token: v})
		}
	}
	if more, ok := r.Meta[mcpcore.MetaMoreCursors].([]any); ok {
		for _, m := range more {
			obj, _ := m.(map[string]any)
			for name, v := range obj {
				if v, ok := v.(string); ok && v != "" {
					cursors = append(cursors, ui.Cursor{Name: "more " + name, Token: v})
				}
			}
		}
	}
	for _, b := range r.Content {
		token, ok := strings.CutPrefix(b.URI, mcpcore.ResourcePrefix)
		if b.Type != "resource_link" || !ok || token == "" {
			continue
		}
		if b.Meta[mcpcore.MetaOriginal] == true {
			original = token
			cursors = append(cursors, ui.Cursor{Name: "original", Token: token})
		} else {
			cursors = append(cursors, ui.Cursor{Name: "resource", Token: token})
		}
	}
	return cursors, original
}
