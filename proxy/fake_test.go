package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fake upstream is this test binary run again with
// CTXFIT_FAKE_UPSTREAM=1: a tiny MCP server over stdio whose tools
// misbehave on demand.
const fakeEnv = "CTXFIT_FAKE_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		runFakeUpstream()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// bigItems is the structured content of the fake's "big" tool: more than
// fits the test budget, with integers beyond float64's precision and
// characters that HTML escaping would change, in an order that is not
// sorted, so that a proxy that re-encodes the upstream's JSON is caught.
func bigItems() string {
	var items []string
	for i := range 400 {
		items = append(items, fmt.Sprintf(`{"zeta":"item %d <&> \u00e9","id":%d,"alpha":%d.50}`, i, 9007199254740993+i, i))
	}
	return `{"total":400,"items":[` + strings.Join(items, ",") + `]}`
}

type emptyInput struct{}

type echoInput struct {
	Text string `json:"text"`
}

func runFakeUpstream() {
	s := mcp.NewServer(&mcp.Implementation{Name: "fake-upstream", Version: "1"}, &mcp.ServerOptions{
		Instructions: "a fake upstream for tests",
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoInput) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "The process id."},
		func(context.Context, *mcp.CallToolRequest, emptyInput) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(os.Getpid())}}}, nil, nil
		})
	s.AddTool(&mcp.Tool{
		Name: "big", Description: "A large structured result.",
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"total":{"type":"integer"},"items":{"type":"array"}}}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw := bigItems()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: raw}}, StructuredContent: json.RawMessage(raw)}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit in the middle of the call."},
		func(context.Context, *mcp.CallToolRequest, emptyInput) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answer (until canceled)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ emptyInput) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "garbage", Description: "Write something that is not JSON-RPC to stdout."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ emptyInput) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stdout, "this is not JSON-RPC")
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Add the tool late, which changes the tool list."},
		func(context.Context, *mcp.CallToolRequest, emptyInput) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "late", Description: "Added at run time."},
				func(context.Context, *mcp.CallToolRequest, emptyInput) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added"}}}, nil, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}
