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

type chatterInput struct {
	Count int `json:"count"`
	Size  int `json:"size"`
}

type echoInput struct {
	Text string `json:"text"`
}

func runFakeUpstream() {
	_ = fakeServer().Run(context.Background(), &mcp.StdioTransport{})
}

// bigText is the text of the fake's large resource and prompt: numbered
// lines, more than fits the test budget.
func bigText() string {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "line %d of a long text <&>\n", i)
	}
	return b.String()
}

// fakeServer is the fake upstream: tools that misbehave on demand, a
// large resource and prompt, progress, sampling, logging and roots.
func fakeServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fake-upstream", Version: "1"}, &mcp.ServerOptions{
		Instructions: "a fake upstream for tests",
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{req.Params.Argument.Value + "-done"}}}, nil
		},
	})
	s.AddResource(&mcp.Resource{URI: "fake://big", Name: "big", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: bigText()}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "fake://small", Name: "small", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "small"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "fake://item/{id}", Name: "item"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "big_prompt", Arguments: []*mcp.PromptArgument{{Name: "topic"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "a long prompt about " + req.Params.Arguments["topic"], Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Read this:"}},
				{Role: "assistant", Content: &mcp.TextContent{Text: bigText()}},
				{Role: "user", Content: &mcp.TextContent{Text: "Done."}},
			}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Report progress three times."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ emptyInput) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for i := range 3 {
				if token != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i + 1), Total: 3})
				}
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "progress done"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Ask the client's model."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ emptyInput) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "model said: " + res.Content.(*mcp.TextContent).Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "List the client's roots."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ emptyInput) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, ",")}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "The CTXFIT_ variables the process sees."},
		func(context.Context, *mcp.CallToolRequest, emptyInput) (*mcp.CallToolResult, any, error) {
			var vars []string
			for _, kv := range os.Environ() {
				if strings.HasPrefix(kv, "CTXFIT_") && !strings.HasPrefix(kv, fakeEnv) {
					vars = append(vars, kv)
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(vars, ",")}}}, nil, nil
		})
	var counter int
	mcp.AddTool(s, &mcp.Tool{Name: "count", Description: "Count the calls of this session's server."},
		func(context.Context, *mcp.CallToolRequest, emptyInput) (*mcp.CallToolResult, any, error) {
			counter++
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(counter)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoInput) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "chatter", Description: "Log count messages of size bytes each, then answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, in chatterInput) (*mcp.CallToolResult, any, error) {
			data := strings.Repeat("x", in.Size)
			for range in.Count {
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: data}); err != nil {
					return nil, nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "chattered"}}}, nil, nil
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
	return s
}
