package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/gateway"
	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
)

// exampleAPI serves the example API and its OpenAPI document (the one
// examples/httpserver serves) on 127.0.0.1, recording the Authorization
// header of the last API call.
func exampleAPI(t *testing.T) (*httptest.Server, func() string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "examples", "httpserver", "openapi.json"))
	require.NoError(t, err)
	api := bookings.Handler()
	auth := make(chan string, 100)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	})
	mux.Handle("/api/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth <- r.Header.Get("Authorization")
		api.ServeHTTP(w, r)
	}))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	last := func() string {
		var a string
		for {
			select {
			case a = <-auth:
			default:
				return a
			}
		}
	}
	return ts, last
}

func gatewayEnv(extra map[string]string) func(string) string {
	return func(k string) string {
		switch k {
		case "CTXFIT_SECRET":
			return "a cmd gateway test secret of 32 bytes or more"
		case "CTXFIT_SHAPE_TIMEOUT", "CTXFIT_ADMISSION_WAIT":
			return "1m"
		}
		return extra[k]
	}
}

// gatewayInProcess runs `ctxfit gateway ARGS` in this process over pipes
// and connects a client to it.
func gatewayInProcess(t *testing.T, env map[string]string, args ...string) (*mcp.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	return inProcess(t, "the gateway", func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
		return serveGateway(ctx, args, stdin, stdout, stderr, gatewayEnv(env), nil)
	})
}

func TestGatewayServesAnAPIFromItsOpenAPIURLOverStdio(t *testing.T) {
	api, lastAuth := exampleAPI(t)
	cs, stderr := gatewayInProcess(t, map[string]string{"API_TOKEN": "Bearer t0ken"},
		"--openapi", api.URL+"/openapi.json", "--include", "bookings", "--header", "Authorization: env:API_TOKEN")

	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, []string{"listBookings", "getBooking", "ctxfit_next", "ctxfit_details", "ctxfit_search", "ctxfit_query"}, names,
		"--include bookings selects the operations tagged bookings")

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "listBookings", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Equal(t, "pagination", res.Meta[mcpcore.MetaStrategy], "the relative server URL / resolves against the document's URL")
	assert.Equal(t, "Bearer t0ken", lastAuth())
	assert.NotContains(t, stderr.String(), "t0ken", "header values are never logged")
	assert.Contains(t, stderr.String(), `"headers":["Authorization"]`)
}

func TestGatewayFlagsExcludeAndRenameOperations(t *testing.T) {
	api, _ := exampleAPI(t)
	cs, _ := gatewayInProcess(t, nil, "--openapi", api.URL+"/openapi.json", "--include", "bookings",
		"--exclude", "getBooking", "--name", "listBookings=bookings")
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, []string{"bookings", "ctxfit_next", "ctxfit_details", "ctxfit_search", "ctxfit_query"}, names)
}

func TestGatewayRouteMapsComeFromTheSettingsFileAndTheFlags(t *testing.T) {
	api, _ := exampleAPI(t)
	settings := filepath.Join(t.TempDir(), "ctxfit.yaml")
	require.NoError(t, os.WriteFile(settings, []byte("gateway:\n  include: [bookings, getLog]\n  exclude: [\"GET /api/v1/logs/*\"]\n"+
		"  resources: [getBooking]\n  names: {getBooking: booking}\n"), 0o600))
	cs, _ := gatewayInProcess(t, nil, "--openapi", api.URL+"/openapi.json", "--config", settings, "--name", "listBookings=bookings")

	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, []string{"bookings", "ctxfit_next", "ctxfit_details", "ctxfit_search", "ctxfit_query"}, names,
		"the file includes bookings and getLog, excludes the logs by path, maps getBooking to a resource; --name renames")

	templates, err := cs.ListResourceTemplates(t.Context(), nil)
	require.NoError(t, err)
	byName := map[string]string{}
	for _, rt := range templates.ResourceTemplates {
		byName[rt.Name] = rt.URITemplate
	}
	require.Equal(t, api.URL+"/api/v1/bookings/{id}", byName["booking"], "named by the file: %v", byName)
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: api.URL + "/api/v1/bookings/BK00042"})
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	assert.Contains(t, res.Contents[0].Text, "BK00042")
}

func TestGatewayServesStreamableHTTPWithAHealthReport(t *testing.T) {
	api, _ := exampleAPI(t)
	ctx := t.Context()
	base, _ := listenGateway(t, nil, "--openapi", api.URL+"/openapi.json")

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	require.NoError(t, err)
	_, err = cs.ListTools(ctx, nil)
	require.NoError(t, err)
	for range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getBooking", Arguments: map[string]any{"id": "BK00001"}})
		require.NoError(t, err)
		require.False(t, res.IsError)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getBooking", Arguments: map[string]any{"id": "nope"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)

	resp, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var report struct {
		Status     string
		Validation struct{ Successes, Failures int }
		Cache      struct{ Hits, Misses int }
		Sessions   struct{ Total, Current, Peak int }
		Discovery  struct{ Count int }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&report))
	assert.Equal(t, "ok", report.Status)
	assert.Equal(t, 1, report.Validation.Successes, "a call served from the cache is not validated again")
	assert.Equal(t, 1, report.Validation.Failures)
	assert.Equal(t, 1, report.Cache.Hits, "the second GET of the same booking")
	assert.Equal(t, 2, report.Cache.Misses, "the first GET, and the invalid one")
	assert.GreaterOrEqual(t, report.Sessions.Peak, 1)
	assert.GreaterOrEqual(t, report.Discovery.Count, 1)

	t.Run("/metrics serves the gateway's series and the guard's", func(t *testing.T) {
		// A result over the threshold, which the guard shapes and records.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "listBookings", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		want := []string{
			`ctxfit_gateway_validations_total{ctxfit_validation_result="failed",gen_ai_tool_name="getBooking"`,
			`ctxfit_gateway_cache_requests_total{ctxfit_cache_hit="true",gen_ai_tool_name="getBooking"`,
			`ctxfit_gateway_api_duration_seconds_count{`,
			`ctxfit_gateway_startup_duration_seconds_count`,
			`ctxfit_gateway_sessions`,
			`ctxfit_responses_total{`, // the guard's records of the results
		}
		var body string
		require.Eventually(t, func() bool { // the records reach the sink off the request path
			resp, err := http.Get(base + "/metrics")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
			for _, w := range want {
				if !strings.Contains(body, w) {
					return false
				}
			}
			return resp.StatusCode == http.StatusOK
		}, 5*time.Second, 10*time.Millisecond, "want %q in\n%s", want, &stringer{&body})
	})
	cs.Close()
}

func TestGatewayRefusesBadInvocations(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no document is a usage error", []string{"gateway"}, 2, "--openapi FILE_OR_URL"},
		{"a header without a colon is a usage error", []string{"gateway", "--openapi", "x.json", "--header", "Authorization"}, 2, "want NAME:VALUE"},
		{"an unknown mode is a usage error", []string{"gateway", "--openapi", "x.json", "--mode", "cache"}, 2, `mode "cache" must be one of`},
		{"no call at a time is a usage error", []string{"gateway", "--openapi", "x.json", "--max-calls", "0"}, 2, "--max-calls, --max-response-mib, --buffer-mib and --max-sessions must be >= 1"},
		{"no session is a usage error", []string{"gateway", "--openapi", "x.json", "--max-sessions", "0"}, 2, "must be >= 1"},
		{"a negative idle time-out is a usage error", []string{"gateway", "--openapi", "x.json", "--idle-timeout", "-1s"}, 2, "--idle-timeout >= 0"},
		{"a buffer smaller than one answer is a usage error", []string{"gateway", "--openapi", "x.json", "--max-response-mib", "32", "--buffer-mib", "16"}, 2,
			"--buffer-mib (16) must be at least --max-response-mib (32)"},
		{"a document that does not exist is a failure", []string{"gateway", "--openapi", "/nonexistent/openapi.json"}, 1, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tt.args...)
			assert.Equal(t, tt.wantCode, code, errOut)
			assert.Contains(t, errOut, tt.wantErr)
		})
	}
}

func TestGatewayHonoursMCPTransportAndMCPPort(t *testing.T) {
	for _, c := range []struct {
		name, transport, port string
		want, wantErr         string
	}{
		{"nothing set is stdio", "", "", "", ""},
		{"stdio is stdio", "stdio", "8080", "", ""},
		{"http with a port listens on the loopback", "http", "8080", "127.0.0.1:8080", ""},
		{"http-sse is served as streamable HTTP", "http-sse", "65535", "127.0.0.1:65535", ""},
		{"a port under 1024 is refused", "http", "80", "", "between 1024 and 65535"},
		{"a port over 65535 is refused", "streamable-http", "70000", "", "between 1024 and 65535"},
		{"a port that is not a number is refused", "http", "eighty", "", "between 1024 and 65535"},
		{"http without a port is refused", "http", "", "", "needs MCP_PORT"},
		{"websocket is not served", "websocket", "9000", "", `MCP_TRANSPORT="websocket"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := listenFromEnv(func(k string) string {
				return map[string]string{"MCP_TRANSPORT": c.transport, "MCP_PORT": c.port}[k]
			})
			if c.wantErr != "" {
				assert.ErrorContains(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
	t.Run("--listen wins over the environment", func(t *testing.T) {
		f, err := parseGatewayFlags([]string{"--openapi", "x.json", "--listen", "127.0.0.1:0"}, io.Discard,
			func(k string) string { return map[string]string{"MCP_TRANSPORT": "http", "MCP_PORT": "1"}[k] })
		require.NoError(t, err)
		assert.Equal(t, "127.0.0.1:0", f.guard.listen)
	})
}

// stringer prints a string that a check fills in later.
type stringer struct{ s *string }

func (s *stringer) String() string { return *s.s }

func TestTheHealthReportCountsWhatTheDocumentCouldNotServe(t *testing.T) {
	r := healthReport(gateway.Stats{SkippedOperations: 2, DocumentWarnings: 1, OutputMismatches: 3})
	assert.Equal(t, map[string]any{"skippedOperations": 2, "warnings": 1}, r["document"])
	assert.Equal(t, int64(3), r["api"].(map[string]any)["outputMismatches"])
}
