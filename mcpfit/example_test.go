package mcpfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"regexp"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/mcpfit"
)

func ExampleInstall() {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "bookings", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "list_bookings", Description: "List all bookings."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			b, err := json.Marshal(bookingtools.ListBookings(""))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, err
		})

	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of at least 32 bytes"}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	if err := mcpfit.Install(server, g, nil); err != nil {
		log.Fatal(err)
	}

	// Connect a client in memory; a real server would run on stdio or HTTP.
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	// Cursors and the token counts of pages that hold one vary from run to run.
	cursor := regexp.MustCompile(`"cursor":"[^"]+"`)
	tokens := regexp.MustCompile(`\([0-9,]+ tokens`)
	// So does the size of the first page, by an item or so.
	firstPage := regexp.MustCompile(`items 1-[0-9]+ of`)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_bookings"})
	if err != nil {
		log.Fatal(err)
	}
	line := res.Content[1].(*mcp.TextContent).Text
	fmt.Println(firstPage.ReplaceAllString(tokens.ReplaceAllString(cursor.ReplaceAllString(line, `"cursor":"…"`), "(… tokens"), "items 1-… of"))

	count := func(res *mcp.CallToolResult) int {
		var page struct{ Items []json.RawMessage }
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &page); err != nil {
			log.Fatal(err)
		}
		return len(page.Items)
	}
	items := count(res)
	for next, _ := res.Meta["dev.ctxfit/nextCursor"].(string); next != ""; next, _ = res.Meta["dev.ctxfit/nextCursor"].(string) {
		if res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ctxfit_next", Arguments: map[string]any{"cursor": next}}); err != nil {
			log.Fatal(err)
		}
		items += count(res)
	}
	last := regexp.MustCompile(`items [0-9]+-`).ReplaceAllString(res.Content[1].(*mcp.TextContent).Text, "items …-")
	fmt.Println(tokens.ReplaceAllString(last, "(… tokens"))
	fmt.Println(items, "bookings in all")
	// Output:
	// Showing items 1-… of 500 (… tokens; budget 4,000). For the next page call ctxfit_next with {"cursor":"…"}. To find something, call ctxfit_search (cursor, pattern) or ctxfit_query (cursor, jq expression) with that cursor.
	// Showing items …-500 of 500 (… tokens; budget 4,000). This is the last page.
	// 500 bookings in all
}
