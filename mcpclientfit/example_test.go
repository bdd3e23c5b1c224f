package mcpclientfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/mcpclientfit"
)

// A server the agent does not control, with one tool whose result is a
// 3,000-line log.
func upstream() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "logs", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "read_log"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		var b strings.Builder
		for i := range 3000 {
			fmt.Fprintf(&b, "2026-11-21T10:%02d:%02dZ INFO request %d served in %d ms\n", i/60%60, i%60, i, i%97)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, nil, nil
	})
	return s
}

func ExampleNew() {
	ctx := context.Background()
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of 32 bytes or more"}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	cg, err := mcpclientfit.New(g, nil)
	if err != nil {
		log.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	cg.Install(client) // shapes every tools/call and resources/read result

	serverT, clientT := mcp.NewInMemoryTransports() // or mcp.CommandTransport, mcp.StreamableClientTransport
	ss, err := upstream().Connect(ctx, serverT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	session, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "read_log"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Meta["dev.ctxfit/strategy"], "within", res.Meta["dev.ctxfit/hardCap"], "tokens")
	guidance := res.Content[1].(*mcp.TextContent).Text
	fmt.Println(guidance[:strings.Index(guidance, ";")]) // then the tokens, and how to go on

	// The model calls ctxfit_next (one of cg.Tools()); the guard answers it
	// and the server never sees it.
	args, _ := json.Marshal(map[string]any{"cursor": res.Meta["dev.ctxfit/nextCursor"]})
	next, err := cg.CallTool(ctx, "ctxfit_next", args)
	if err != nil {
		log.Fatal(err)
	}
	guidance = next.Content[1].(*mcp.TextContent).Text
	fmt.Println(guidance[:strings.Index(guidance, ";")])
	for _, t := range cg.Tools() {
		fmt.Println(t.Name)
	}
	// Output:
	// chunking within 12000 tokens
	// Showing chunk 1 of 36 (lines 1-86 of 3,000
	// Showing chunk 2 of 36 (lines 87-172 of 3,000
	// ctxfit_next
	// ctxfit_details
	// ctxfit_search
	// ctxfit_query
}
