package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// manyToolsServerEnv makes the test binary an MCP server on stdio (see
// TestMain) of 500 generated tools (list_invoice_0, get_invoice_1, ...,
// each answering "called NAME with ARGUMENTS"), listed 100 a page.
const manyToolsServerEnv = "E2E_MANY_TOOLS_SERVER"

func runManyToolsServer() {
	verbs := []string{"list", "get", "create", "update", "delete"}
	nouns := []string{"invoice", "customer", "repository", "issue", "booking", "payment", "webhook", "label", "comment", "team"}
	s := mcp.NewServer(&mcp.Implementation{Name: "many-tools", Version: "1"}, &mcp.ServerOptions{PageSize: 100})
	handler := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("called %s with %s", req.Params.Name, req.Params.Arguments)}}}, nil
	}
	for i := range 500 {
		verb, noun := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("%s_%s_%d", verb, noun, i),
			Description: fmt.Sprintf("%s a %s of the account (generated tool %d).", verb, noun, i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The ID."},"limit":{"type":"integer"}}}`)}, handler)
	}
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// rawLists is a client transport that keeps the raw result of every
// tools/list answer, as it came over the wire.
type rawLists struct {
	mcp.Transport
	mu    sync.Mutex
	lists []json.RawMessage
}

type rawListsConn struct {
	mcp.Connection
	r *rawLists
}

func (r *rawLists) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return rawListsConn{c, r}, err
}

func (c rawListsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && strings.Contains(string(resp.Result), `"tools":[`) {
		c.r.mu.Lock()
		c.r.lists = append(c.r.lists, append(json.RawMessage(nil), resp.Result...))
		c.r.mu.Unlock()
	}
	return msg, err
}

func (r *rawLists) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.lists[len(r.lists)-1])
}

// TestTheProxyServesA500ToolServerAsABudgetedCatalog runs the built
// `ctxfit proxy` in front of a server of 500 tools (paginated): tools/list
// is within the catalog budget by exact count, a tool found with
// ctxfit_find_tools is called through ctxfit_call_tool, and, after the
// list_changed notification, by its name.
func TestTheProxyServesA500ToolServerAsABudgetedCatalog(t *testing.T) {
	bins := binaries(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins["ctxfit"], "proxy", "--catalog-budget", "5000", "--", "env", manyToolsServerEnv+"=1", exe)
	cmd.Env = cleanEnv()
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	changed := make(chan struct{}, 1)
	rec := &rawLists{Transport: &mcp.CommandTransport{Command: cmd}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}}).Connect(ctx, rec, nil)
	require.NoError(t, err, "stderr: %s", stderr)
	defer cs.Close()
	defer func() {
		if t.Failed() {
			t.Logf("proxy stderr:\n%s", stderr)
		}
	}()

	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Less(t, len(res.Tools), 200, "not every tool")
	mcpfittest.CheckCatalog(t, cs, mcpfittest.CatalogWalk{
		Budget: 5000, LastList: rec.last, Changed: changed,
		Hidden: "delete_webhook_34", Query: "delete webhook 34", Arguments: map[string]any{"id": "w1"},
		CheckCall: func(t *testing.T, got *mcp.CallToolResult) {
			assert.Equal(t, `called delete_webhook_34 with {"id":"w1"}`, mcpfittest.Texts(t, got)[0])
		},
	})
}

// TestTheTypeScriptClientAcceptsTheBudgetedCatalog runs
// e2e/ts/catalog.test.mjs (node --test): the TypeScript SDK client in
// front of `ctxfit gateway` serving a generated document of 601
// operations. It needs Node 20 or later and the npm dependencies (cd
// e2e/ts && npm ci); without node it is skipped, except under CI=true,
// where it fails.
func TestTheTypeScriptClientAcceptsTheBudgetedCatalog(t *testing.T) {
	node, dir := nodeAndTS(t)
	bins := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "catalog.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "CTXFIT_E2E_CTXFIT="+bins["ctxfit"])
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", out)
	t.Logf("node --test:\n%s", out)
}
