package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/proxy"
)

var (
	verbs = []string{"list", "get", "create", "update", "delete"}
	nouns = []string{"invoice", "customer", "repository", "issue", "booking", "payment", "webhook", "label", "comment", "team"}
)

// hugeSchema is an input schema of about 20,000 tokens.
func hugeSchema() map[string]any {
	props := map[string]any{}
	for i := range 60 {
		nested := map[string]any{}
		for j := range 10 {
			nested[fmt.Sprintf("field_%d", j)] = map[string]any{"type": "string",
				"description": strings.Repeat(fmt.Sprintf("Nested field %d of property %d. ", j, i), 4)}
		}
		props[fmt.Sprintf("prop_%d", i)] = map[string]any{"type": "object", "description": "Property " + fmt.Sprint(i), "properties": nested}
	}
	return map[string]any{"type": "object", "properties": props}
}

// manyTools is an upstream of n generated tools (create_invoice_2 and so
// on; each answers "called NAME with ARGUMENTS"), and one tool of about
// 20,000 tokens, update_repository_settings, listed pageSize tools a page.
func manyTools(n, pageSize int) proxy.Upstream {
	return proxy.Upstream{Dial: func(ctx context.Context) (mcp.Connection, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "many-tools", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
		handler := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("called %s with %s", req.Params.Name, req.Params.Arguments)}}}, nil
		}
		for i := range n {
			verb, noun := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
			s.AddTool(&mcp.Tool{Name: fmt.Sprintf("%s_%s_%d", verb, noun, i),
				Description: fmt.Sprintf("%s a %s of the account (generated tool %d).", verb, noun, i),
				InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"limit":{"type":"integer"}}}`)}, handler)
		}
		if n >= 100 {
			s.AddTool(&mcp.Tool{Name: "update_repository_settings", Description: "Update a repository's settings. " +
				strings.Repeat("Every setting of the repository can be changed here. ", 100), InputSchema: hugeSchema()}, handler)
		}
		st, ct := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct.Connect(ctx)
	}}
}

// recorder is a client transport that keeps the raw result of every
// tools/list answer.
type recorder struct {
	mcp.Transport
	mu    sync.Mutex
	lists []json.RawMessage
}

type recordingConn struct {
	mcp.Connection
	r *recorder
}

func (r *recorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return recordingConn{c, r}, err
}

func (c recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && strings.Contains(string(resp.Result), `"tools":[`) {
		c.r.mu.Lock()
		c.r.lists = append(c.r.lists, append(json.RawMessage(nil), resp.Result...))
		c.r.mu.Unlock()
	}
	return msg, err
}

func (r *recorder) last() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lists[len(r.lists)-1]
}

// connectRecorded connects a client to the proxy, recording its lists,
// with changed receiving notifications/tools/list_changed.
func (f *fixture) connectRecorded(changed chan<- struct{}) (*mcp.ClientSession, *recorder) {
	f.t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	conn, err := st.Connect(context.Background())
	require.NoError(f.t, err)
	go func() { _ = f.p.Serve(context.Background(), conn) }()
	rec := &recorder{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}}).Connect(context.Background(), rec, nil)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { cs.Close() })
	return cs, rec
}

func toolNames(res *mcp.ListToolsResult) []string {
	var out []string
	for _, t := range res.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestAToolListWithinTheCatalogBudgetPassesUnchangedPageByPage(t *testing.T) {
	f := newFixture(t, manyTools(20, 7), ctxfit.Config{}, proxy.Options{})
	cs, rec := f.connectRecorded(nil)
	ctx := context.Background()
	var names []string
	cursor := ""
	for range 10 {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		require.NoError(t, err)
		names = append(names, toolNames(res)...)
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	assert.Len(t, names, 24, "the upstream's 20 tools, page by page, and ctxfit's four")
	assert.NotContains(t, names, mcpcore.FindTool, "no catalog tools under the budget")
	assert.Equal(t, mcpcore.DefaultNextTool, names[7], "ctxfit's tools follow the first page, as before")
	assert.Contains(t, string(rec.lists[0]), `"nextCursor"`, "the upstream's pagination is kept")

	// Byte for byte what the proxy answers without a catalog.
	plain := newFixture(t, manyTools(20, 7), ctxfit.Config{CatalogBudget: -1}, proxy.Options{})
	pcs, prec := plain.connectRecorded(nil)
	cursor = ""
	for range 10 {
		res, err := pcs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		require.NoError(t, err)
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	require.Len(t, prec.lists, len(rec.lists))
	for i := range rec.lists {
		assert.Equal(t, string(prec.lists[i]), string(rec.lists[i]), "page %d is unchanged", i+1)
	}
}

func TestAToolListOverTheCatalogBudgetIsBudgetedAndFoundToolsCanBeCalled(t *testing.T) {
	f := newFixture(t, manyTools(500, 100), ctxfit.Config{CatalogBudget: 4000}, proxy.Options{})
	changed := make(chan struct{}, 1)
	cs, rec := f.connectRecorded(changed)
	ctx := context.Background()

	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	names := toolNames(res)
	assert.Equal(t, "create_booking_122", names[6], "then the upstream's first tools (the SDK lists them by name)")
	mcpfittest.CheckCatalog(t, cs, mcpfittest.CatalogWalk{
		Budget: 4000, LastList: func() string { return string(rec.last()) }, Changed: changed,
		Hidden: "delete_webhook_34", Query: "delete webhook 34", Arguments: map[string]any{"id": "w1"},
		CheckCall: func(t *testing.T, got *mcp.CallToolResult) {
			assert.Equal(t, `called delete_webhook_34 with {"id":"w1"}`, text(t, got))
		},
	})
	bad := call(t, cs, mcpcore.CallTool, map[string]any{"name": "delete_webhook"})
	require.True(t, bad.IsError)
	assert.Contains(t, text(t, bad), "Did you mean")

	t.Run("a trimmed definition's link reads the whole, byte for byte", func(t *testing.T) {
		found := call(t, cs, mcpcore.FindTool, map[string]any{"query": "update_repository_settings", "limit": 1})
		var body struct {
			Tools []struct {
				Name string         `json:"name"`
				Meta map[string]any `json:"_meta"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal([]byte(text(t, found)), &body))
		require.Len(t, body.Tools, 1)
		uri, _ := body.Tools[0].Meta[mcpcore.MetaDefinition].(string)
		require.NotEmpty(t, uri)
		var whole strings.Builder
		for i := 0; uri != ""; i++ {
			require.Less(t, i, 100)
			r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			require.NoError(t, err)
			whole.WriteString(r.Contents[0].Text)
			uri, _ = r.Meta[mcpcore.MetaNextRange].(string)
		}
		assert.Equal(t, string(wholeDefinition(t, "update_repository_settings")), whole.String(),
			"the definition as the whole list serves it")
	})
}

// wholeDefinition is the raw definition of the tool named name in the
// proxy's whole tools/list (no catalog budget).
func wholeDefinition(t *testing.T, name string) json.RawMessage {
	t.Helper()
	f := newFixture(t, manyTools(500, 100), ctxfit.Config{CatalogBudget: -1}, proxy.Options{})
	cs, rec := f.connectRecorded(nil)
	cursor := ""
	for range 10 {
		res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: cursor})
		require.NoError(t, err)
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(rec.last(), &page))
		for _, d := range page.Tools {
			var h struct {
				Name string `json:"name"`
			}
			require.NoError(t, json.Unmarshal(d, &h))
			if h.Name == name {
				return d
			}
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	t.Fatalf("no tool %s in the whole list", name)
	return nil
}
