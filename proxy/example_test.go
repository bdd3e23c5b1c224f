package proxy_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/proxy"
)

// The upstream here is this test binary run as the fake server of the
// tests; in real use it is any stdio MCP server, e.g.
// proxy.Command{Path: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}}.
func ExampleNew() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{
		Threshold: 1000, Secret: "an example secret of 32 bytes or more",
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	exe, _ := os.Executable()
	ctx := context.Background()
	p, err := proxy.New(ctx, proxy.Command{Path: exe, Env: append(os.Environ(), fakeEnv+"=1")}, g,
		&proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	// Serve p.Server() on stdio or streamable HTTP; here, in memory.
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	fmt.Println(names)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big"})
	if err != nil {
		log.Fatal(err)
	}
	_, more := res.Meta[mcpcore.MetaNextCursor]
	fmt.Println(res.Meta[mcpcore.MetaStrategy], "with a next cursor:", more)
	// Output:
	// [add_tool big crash ctxfit_details ctxfit_next ctxfit_query ctxfit_search echo garbage hang pid]
	// pagination with a next cursor: true
}
