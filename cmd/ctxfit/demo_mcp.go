package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/mcpfit"
)

// demoMCP serves list_bookings from an MCP server guarded by mcpfit, calls
// it from an in-memory client, and continues the result once through
// ctxfit_next.
func demoMCP(w io.Writer, counter budget.Counter) error {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "bookings", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "list_bookings", Description: "List the bookings."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			b, err := json.Marshal(bookingtools.ListBookings(""))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, err
		})
	log := demoLog()
	addFindTools(server, log)
	g, err := ctxfit.New(&ctxfit.Options{Counter: counter, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer g.Close()
	if err := mcpfit.Install(server, g, nil); err != nil {
		return err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "demo", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer cs.Close()

	rawBytes, err := json.Marshal(bookingtools.ListBookings(""))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== MCP: a tool result shaped and continued (official Go SDK, mcpfit)\n\n")
	fmt.Fprintf(w, "list_bookings returns %d tokens unguarded.\n", counter.Count(string(rawBytes)))
	text := func(res *mcp.CallToolResult) (body, line string) {
		for i, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				if i == 0 {
					body = tc.Text
				} else {
					line = tc.Text
				}
			}
		}
		return body, line
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_bookings"})
	if err != nil {
		return err
	}
	body, line := text(res)
	fmt.Fprintf(w, "  call list_bookings: %d tokens; the model reads:\n    %s\n", counter.Count(body), shorten(line))
	next, _ := res.Meta["dev.ctxfit/nextCursor"].(string)
	if next == "" {
		return fmt.Errorf("the shaped result has no cursor")
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ctxfit_next", Arguments: map[string]any{"cursor": next}})
	if err != nil {
		return err
	}
	body, line = text(res)
	fmt.Fprintf(w, "  call ctxfit_next:   %d tokens; the model reads:\n    %s\n", counter.Count(body), shorten(line))
	return demoFind(ctx, w, counter, cs, log)
}

var cursorArg = regexp.MustCompile(`("cursor":")([^"]{24})[^"]+"`)

// shorten elides the middle of cursors in a guidance line.
func shorten(line string) string { return cursorArg.ReplaceAllString(line, `$1$2…"`) }
