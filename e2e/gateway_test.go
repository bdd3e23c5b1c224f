package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// buildHTTPServer builds examples/httpserver once per run, beside the
// binaries of build.
var buildHTTPServer = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "httpserver")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ctxfit/ctxfit/examples/httpserver").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build examples/httpserver: %v\n%s", err, out)
	}
	return bin, nil
})

var listening = regexp.MustCompile(`listening" addr=(http://127\.0\.0\.1:[0-9]+)`)

// startHTTPServer runs examples/httpserver on a free port of 127.0.0.1 and
// returns its base URL; it stops with the test.
func startHTTPServer(t *testing.T) string {
	t.Helper()
	bin, err := buildHTTPServer()
	require.NoError(t, err)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	url := startListening(t, cmd, listening)
	t.Cleanup(func() { // before startListening's kill: a graceful stop
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	return url
}

// TestGatewayServesTheExampleHTTPServerFromItsOwnDocument runs `ctxfit
// gateway` over stdio in front of examples/httpserver (its API behind
// ctxfit's HTTP middleware), with a threshold low enough that the gateway
// shapes the API's own pages again: every booking stays reachable by
// following the gateway's cursors within each API page, and the API's
// cursors from page to page.
func TestGatewayServesTheExampleHTTPServerFromItsOwnDocument(t *testing.T) {
	bins := binaries(t)
	base := startHTTPServer(t)
	const hardCap = 3000
	cs, _ := connect(t, bins["ctxfit"], "gateway", "--openapi", base+"/openapi.json", "--threshold", "1000", "--hard-cap", fmt.Sprint(hardCap))

	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, []string{"listBookings", "getBooking", "getLog", "health",
		"ctxfit_next", "ctxfit_details", "ctxfit_search", "ctxfit_query"}, names)

	var all []json.RawMessage
	args := map[string]any{}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100, "too many API pages")
		first := mcpfittest.Call(t, cs, "listBookings", args)
		require.False(t, first.IsError, mcpfittest.Texts(t, first))
		require.Equal(t, "pagination", first.Meta["dev.ctxfit/strategy"], "an API page of ~3,900 tokens is over the gateway's threshold")
		var page struct {
			Items      []json.RawMessage `json:"items"`
			NextCursor *string           `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal([]byte(mcpfittest.Rebuild(t, cs, first, hardCap)), &page))
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			break
		}
		args = map[string]any{"cursor": *page.NextCursor}
	}
	var got []bookings.Booking
	require.NoError(t, json.Unmarshal(mustMarshal(t, all), &got))
	assert.Equal(t, bookings.Bookings(), got, "every booking, once, in order")

	t.Run("invalid arguments are refused before the call", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "getBooking", map[string]any{"id": "42"})
		require.True(t, res.IsError)
		assert.Contains(t, mcpfittest.Texts(t, res)[0], `Argument "id" (got "42") should be a string that matches the pattern ^BK[0-9]{5}$`)
	})
	t.Run("a missing booking is the API's 404", func(t *testing.T) {
		res := mcpfittest.Call(t, cs, "getBooking", map[string]any{"id": "BK99999"})
		require.True(t, res.IsError)
		assert.Contains(t, mcpfittest.Texts(t, res)[0], "Error api_error: GET /api/v1/bookings/{id} answered 404 Not Found")
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestGatewayToolsAreAcceptedByTheTypeScriptClient runs e2e/ts/gateway.test.mjs
// (node --test): the TypeScript SDK client in front of `ctxfit gateway`
// serving examples/httpserver's own document, in front of a Stoplight
// Prism mock server (pinned in e2e/ts/package.json) of a document the test
// writes and of a Swagger 2.0 one, and in front of a mock of GitHub's API
// serving its real document (@octokit/openapi). It needs Node 20 or later and the npm dependencies (cd e2e/ts &&
// npm ci); without node it is skipped, except under CI=true, where it fails.
func TestGatewayToolsAreAcceptedByTheTypeScriptClient(t *testing.T) {
	node, dir := nodeAndTS(t)
	bins := binaries(t)
	base := startHTTPServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "gateway.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(),
		"CTXFIT_E2E_CTXFIT="+bins["ctxfit"],
		"CTXFIT_E2E_OPENAPI_URL="+base+"/openapi.json",
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", out)
	t.Logf("node --test:\n%s", out)
}

// TestGatewayServesGitHubsWholeDocument runs `ctxfit gateway` over stdio on
// GitHub's REST API document (api.github.com, from the @octokit/openapi
// npm package pinned in e2e/ts; about 1,100 operations, 13 MB), which it
// refused before (two path templates differing only in parameter names):
// initialize and every page of tools/list are answered, one tool per
// operation. How fast is BenchmarkRealDocumentStartup's question.
func TestGatewayServesGitHubsWholeDocument(t *testing.T) {
	_, dir := nodeAndTS(t)
	doc := filepath.Join(dir, "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")
	if _, err := os.Stat(doc); err != nil {
		t.Fatalf("%s: run npm ci in e2e/ts", doc)
	}
	bins := binaries(t)
	cs, _ := connect(t, bins["ctxfit"], "gateway", "--openapi", doc, "--base-url", "http://127.0.0.1:1", "--catalog-budget=-1")
	names := map[string]bool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		names[tool.Name] = true
	}
	assert.Greater(t, len(names), 1000)
	for _, name := range []string{"repos_get", "issues_list-for-repo", "orgs_list-attestations", "ctxfit_next"} {
		assert.True(t, names[name], name)
	}
}
