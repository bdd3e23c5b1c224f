package mcpfit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

const testSecret = "0123456789abcdef0123456789abcdef-test"

type listInput struct {
	Status string `json:"status,omitempty"`
}
type getInput struct {
	ID string `json:"id"`
}
type logInput struct {
	Name string `json:"name,omitempty"`
}
type searchInput struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

// shortLog keeps the unit tests fast: the engine counts the whole text on
// every continuation. The end-to-end test reads the full 10,000-line log.
var shortLog = corpus.Log(1500)

// toolMeta is the _meta of a test tool's result, a new map per result (the
// SDK writes into it).
func toolMeta() mcp.Meta { return mcp.Meta{"example/tool": "kept"} }

// addTools registers the example tools (the same as examples/mcpserver)
// and two for edge cases.
func addTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "list_bookings", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, any, error) {
		return jsonResult(bookingtools.ListBookings(in.Status))
	})
	mcp.AddTool(s, &mcp.Tool{Name: "get_booking", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, in getInput) (*mcp.CallToolResult, any, error) {
		b, err := bookingtools.GetBooking(in.ID)
		if err != nil {
			return nil, nil, err
		}
		return jsonResult(b)
	})
	mcp.AddTool(s, &mcp.Tool{Name: "read_log", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, in logInput) (*mcp.CallToolResult, any, error) {
		text, err := bookingtools.ReadLog(in.Name)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, Meta: toolMeta()}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "search_bookings", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, bookingtools.SearchResult, error) {
		return nil, bookingtools.SearchBookings(in.Query, in.Limit), nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "read_short_log", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: shortLog}}, Meta: toolMeta()}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "big_image", Annotations: readOnly}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: shortLog},
			&mcp.ImageContent{Data: []byte("not really a png"), MIMEType: "image/png"},
		}}, nil, nil
	})
}

// readOnly annotates the test tools: they change nothing, so a response
// cache may stand in for them and replay mode may run them again.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true}

func jsonResult(v any) (*mcp.CallToolResult, any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
}

// connect serves s over in-memory transports and returns a client session.
func connect(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return connectAs(t, s, "test-client")
}

// connectAs is connect with the client named name.
func connectAs(t *testing.T, s *mcp.Server, name string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// newGuard returns a guard with cfg (and a fixed secret).
func newGuard(t *testing.T, cfg ctxfit.Config) *ctxfit.Guard {
	t.Helper()
	if cfg.Secret == "" {
		cfg.Secret = testSecret
	}
	if cfg.ShapeTimeout == 0 {
		cfg.ShapeTimeout = ctxfit.Duration(time.Hour) // not a test of timing: a loaded machine must not time out
	}
	if cfg.AdmissionWait == 0 {
		cfg.AdmissionWait = ctxfit.Duration(time.Hour) // nor wait too little for room to shape
	}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

// guarded returns a session of a server with the test tools behind ctxfit,
// and one of a raw server with the same tools.
func guarded(t *testing.T, cfg ctxfit.Config, opts *mcpfit.Options) (guardedSession, rawSession *mcp.ClientSession) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	addTools(s)
	require.NoError(t, mcpfit.Install(s, newGuard(t, cfg), opts))
	raw := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "1"}, nil)
	addTools(raw)
	return connect(t, s), connect(t, raw)
}

// bodyOf is what ctxfit measures of a raw result: its structured content as
// JSON, else its text.
func bodyOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		return string(b)
	}
	return strings.Join(mcpfittest.Texts(t, res), "\n")
}

// follow calls tool and then ctxfit_next with every cursor until the end
// ([mcpfittest.Follow]), checking every result against the hard cap and its
// cursor in _meta against the one in its body, and returns the shaped
// bodies (the first text block of each result).
func follow(t *testing.T, cs *mcp.ClientSession, tool string, args any, hardCap int) []string {
	t.Helper()
	results := mcpfittest.Follow(t, cs, tool, args, hardCap)
	bodies := mcpfittest.Bodies(t, results)
	for i, res := range results {
		next := mcpfittest.NextCursor(res)
		if next == "" {
			continue
		}
		var b struct {
			NextCursor string `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal([]byte(bodies[i]), &b))
		assert.Equal(t, next, b.NextCursor, "the cursor in _meta is the one in the body")
	}
	return bodies
}
