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
func ExampleProxy_Serve() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{
		Threshold: 1000, Secret: "an example secret of 32 bytes or more",
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	exe, _ := os.Executable()
	ctx := context.Background()
	up := proxy.Upstream{Command: &proxy.Command{Path: exe, Env: append(proxy.PassEnv(os.Environ()), fakeEnv+"=1")}}
	p, err := proxy.New(g, up, &proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	// Serve clients with p.ServeStdio or p.Handler; here, one in memory.
	st, ct := mcp.NewInMemoryTransports()
	conn, err := st.Connect(ctx)
	if err != nil {
		log.Fatal(err)
	}
	go p.Serve(ctx, conn)
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
	// [add_tool big chatter count crash ctxfit_details ctxfit_next ctxfit_query ctxfit_search echo env garbage hang pid progress roots sample]
	// pagination with a next cursor: true
}
