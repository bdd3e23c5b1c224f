package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// generatedDocument is an OpenAPI document of n resources, each with a
// get, an update and a delete operation (operationIds get_widget_7 and so
// on, tagged with the resource's kind), for the API at base.
func generatedDocument(t *testing.T, n int, base string) *gateway.Document {
	t.Helper()
	kinds := []string{"widgets", "gadgets", "orders", "invoices", "teams"}
	paths := map[string]any{}
	for i := range n {
		kind := kinds[i%len(kinds)]
		one := strings.TrimSuffix(kind, "s")
		param := []any{map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "string"}}}
		ok := map[string]any{"200": map[string]any{"description": "OK", "content": map[string]any{"application/json": map[string]any{
			"schema": map[string]any{"type": "object"}}}}}
		op := func(verb string) map[string]any {
			return map[string]any{"operationId": fmt.Sprintf("%s_%s_%d", verb, one, i), "tags": []string{kind},
				"summary":     fmt.Sprintf("%s %s %d", verb, one, i),
				"description": fmt.Sprintf("%s the %s number %d of the account, with every field it has.", verb, one, i),
				"parameters":  param, "responses": ok}
		}
		upd := op("update")
		upd["requestBody"] = map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "description": "The new name."},
				"size": map[string]any{"type": "integer"}}}}}}
		paths[fmt.Sprintf("/%s/%d/{id}", kind, i)] = map[string]any{"get": op("get"), "patch": upd, "delete": op("delete")}
	}
	raw, err := json.Marshal(map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "generated", "version": "1"},
		"servers": []any{map[string]any{"url": base}}, "paths": paths})
	require.NoError(t, err)
	doc, err := gateway.Parse(context.Background(), raw)
	require.NoError(t, err)
	return doc
}

// listRecorder is a client transport that keeps the raw result of every
// tools/list answer.
type listRecorder struct {
	mcp.Transport
	mu    sync.Mutex
	lists []json.RawMessage
}

type listRecordingConn struct {
	mcp.Connection
	r *listRecorder
}

func (r *listRecorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	return listRecordingConn{c, r}, err
}

func (c listRecordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && strings.Contains(string(resp.Result), `"tools":[`) {
		c.r.mu.Lock()
		c.r.lists = append(c.r.lists, append(json.RawMessage(nil), resp.Result...))
		c.r.mu.Unlock()
	}
	return msg, err
}

func (r *listRecorder) last() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lists[len(r.lists)-1]
}

// connectRecorded is connect with a client that records its lists and
// signals changed on notifications/tools/list_changed.
func connectRecorded(t *testing.T, doc *gateway.Document, g *ctxfit.Guard, changed chan<- struct{}) (*mcp.ClientSession, *listRecorder) {
	t.Helper()
	return connectRecordedAt(t, doc, g, changed, "2025-11-25")
}

// connectRecordedAt is connectRecorded at that protocol version.
func connectRecordedAt(t *testing.T, doc *gateway.Document, g *ctxfit.Guard, changed chan<- struct{}, version string) (*mcp.ClientSession, *listRecorder) {
	t.Helper()
	gw, err := gateway.New(doc, g, nil)
	require.NoError(t, err)
	t.Cleanup(func() { gw.Close() })
	ct, st := mcp.NewInMemoryTransports()
	ss, err := gw.Server().Connect(context.Background(), st, nil)
	require.NoError(t, err)
	rec := &listRecorder{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}}).Connect(context.Background(), rec, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs, rec
}

func listedNames(res *mcp.ListToolsResult) []string {
	var out []string
	for _, t := range res.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestAGatewayWithinTheCatalogBudgetListsEveryTool(t *testing.T) {
	api := newFakeAPI(t, jsonReply(200, `{}`))
	cs, _ := connectRecorded(t, generatedDocument(t, 5, api.URL), newGuard(t, ctxfit.Config{}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	names := listedNames(res)
	assert.Len(t, names, 15+4, "every operation and ctxfit's four tools")
	assert.NotContains(t, names, "ctxfit_find_tools", "no catalog under the budget")
}

func TestALargeGeneratedAPIIsServedAsABudgetedCatalog(t *testing.T) {
	api := newFakeAPI(t, jsonReply(200, `{"ok":true}`))
	changed := make(chan struct{}, 1)
	cs, rec := connectRecorded(t, generatedDocument(t, 200, api.URL), newGuard(t, ctxfit.Config{}), changed)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	assert.Greater(t, len(listedNames(res)), 20, "with some of the API's tools")
	mcpfittest.CheckCatalog(t, cs, mcpfittest.CatalogWalk{
		Budget: 12000, LastList: func() string { return string(rec.last()) }, Changed: changed,
		Hidden: "delete_order_172", Query: "delete order 172", Arguments: map[string]any{"id": "o-1"},
		CheckCall: func(t *testing.T, got *mcp.CallToolResult) {
			require.False(t, got.IsError, mcpfittest.Texts(t, got))
			reqs := api.requests()
			require.NotEmpty(t, reqs)
			assert.Equal(t, http.MethodDelete, reqs[len(reqs)-1].Method)
			assert.Equal(t, "/orders/172/o-1", reqs[len(reqs)-1].Path, "the call went to the operation")
		},
	})
}

func TestTheBudgetedCatalogHoldsForTheResultAsSentWithTheSDKsEnvelope(t *testing.T) {
	// At protocol 2026-07-28 the SDK adds the server's name and version
	// (_meta) and resultType to the result: the budget is for those bytes.
	api := newFakeAPI(t, jsonReply(200, `{}`))
	doc := generatedDocument(t, 60, api.URL)
	doc.Title = strings.Repeat("A long API title ", 20)
	for _, budget := range []int{2500, 3000, 4000} {
		t.Run(fmt.Sprintf("within %d tokens", budget), func(t *testing.T) {
			cs, rec := connectRecordedAt(t, doc, newGuard(t, ctxfit.Config{CatalogBudget: budget}), nil, "2026-07-28")
			res, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			require.Contains(t, listedNames(res), "ctxfit_find_tools", "a budgeted catalog")
			require.Contains(t, string(rec.last()), "io.modelcontextprotocol/serverInfo", "the SDK's envelope was sent")
			assert.LessOrEqual(t, mcpfittest.Count(string(rec.last())), budget, "the result as sent is within the budget")
		})
	}
}
