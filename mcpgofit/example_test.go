package mcpgofit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/mcpgofit"
)

// An mcp-go server whose list tool returns 500 bookings (about 30,000
// tokens): with ctxfit installed, the model gets a page that fits the
// budget and follows ctxfit_next to the end.
func ExampleInstall() {
	s := server.NewMCPServer("bookings", "1.0.0")
	s.AddTool(mcp.NewTool("list_bookings", mcp.WithDescription("List the bookings.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := json.Marshal(bookingtools.ListBookings(""))
			if err != nil {
				return nil, err
			}
			return mcp.NewToolResultText(string(b)), nil
		})

	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of 32 bytes or more"}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	if err := mcpgofit.Install(s, g, nil); err != nil {
		log.Fatal(err)
	}

	// A client, in process for the example.
	ctx := context.Background()
	c, _ := client.NewInProcessClient(s)
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		log.Fatal(err)
	}

	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "list_bookings"}}
	items, calls := 0, 0
	for {
		res, err := c.CallTool(ctx, req)
		if err != nil {
			log.Fatal(err)
		}
		calls++
		var page struct {
			Items      []json.RawMessage `json:"items"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &page); err != nil {
			log.Fatal(err)
		}
		items += len(page.Items)
		if calls == 1 {
			guidance := res.Content[1].(mcp.TextContent).Text
			fmt.Println(regexp.MustCompile(`1-[0-9]+ of`).ReplaceAllString(guidance[:strings.Index(guidance, " (")], "1-… of")) // the page size varies with the cursor's tokens
		}
		if page.NextCursor == "" {
			break
		}
		req = mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "ctxfit_next", Arguments: map[string]any{"cursor": page.NextCursor}}}
	}
	fmt.Println("items:", items, "in more than 5 calls:", calls > 5)
	// Output:
	// Showing items 1-… of 500
	// items: 500 in more than 5 calls: true
}
