package mcpgoclientfit_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/mcpgoclientfit"
)

func ExampleGuard_Wrap() {
	// A server the agent does not control, with a 3,000-line log.
	s := server.NewMCPServer("logs", "1", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("read_log"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var b strings.Builder
		for i := range 3000 {
			fmt.Fprintf(&b, "2026-11-21T10:%02d:%02dZ INFO request %d served in %d ms\n", i/60%60, i%60, i, i%97)
		}
		return mcp.NewToolResultText(b.String()), nil
	})

	ctx := context.Background()
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of 32 bytes or more"}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	cg, err := mcpgoclientfit.New(g, nil)
	if err != nil {
		log.Fatal(err)
	}
	// Any transport: transport.NewStdio, transport.NewStreamableHTTP, ...
	c := client.NewClient(cg.Wrap(transport.NewInProcessTransport(s)))
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "agent", Version: "1"}}}); err != nil {
		log.Fatal(err)
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "read_log"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Meta.AdditionalFields["dev.ctxfit/strategy"])
	guidance := res.Content[1].(mcp.TextContent).Text
	fmt.Println(guidance[:strings.Index(guidance, ";")])

	// The model's ctxfit_next: answered by the wrapper, never sent.
	next, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "ctxfit_next",
		Arguments: map[string]any{"cursor": res.Meta.AdditionalFields["dev.ctxfit/nextCursor"]}}})
	if err != nil {
		log.Fatal(err)
	}
	guidance = next.Content[1].(mcp.TextContent).Text
	fmt.Println(guidance[:strings.Index(guidance, ";")])
	// Output:
	// chunking
	// Showing chunk 1 of 36 (lines 1-86 of 3,000
	// Showing chunk 2 of 36 (lines 87-172 of 3,000
}
