package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
)

func TestTheUIFlagsAreChecked(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"--ui over stdio is a usage error", []string{"proxy", "--ui", "--", "echo"}, "give --listen ADDR as well"},
		{"a --ui-* flag without --ui is a usage error", []string{"proxy", "--listen", "127.0.0.1:0", "--ui-show-arguments", "--", "echo"}, "add --ui"},
		{"an empty ring is a usage error", []string{"proxy", "--listen", "127.0.0.1:0", "--ui", "--ui-calls", "0", "--", "echo"}, "--ui-calls must be >= 1"},
		{"the gateway's --ui over stdio is a usage error", []string{"gateway", "--openapi", "x.json", "--ui"}, "give --listen ADDR as well"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tt.args...)
			assert.Equal(t, 2, code, errOut)
			assert.Contains(t, errOut, tt.wantErr)
		})
	}
}

func TestLoopbackNamesAreTold(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "localhost": true, "[::1]": true, "::1": true, "127.0.0.2": true,
		"0.0.0.0": false, "attacker.example": false, "10.0.0.1": false, "": false,
	} {
		assert.Equal(t, want, loopback(host), host)
	}
}

// uiURL is the UI's URL as the command logged it.
var uiURL = regexp.MustCompile(`serving the UI","url":"(http://[^"]+)"`)

func getAs(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestTheGatewayUIShowsEachCredentialItsOwnCalls(t *testing.T) {
	api, _ := exampleAPI(t)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	stderr := &syncbuf.Buffer{}
	go func() {
		done <- serveGateway(ctx, []string{"--openapi", api.URL + "/openapi.json", "--listen", "127.0.0.1:0", "--ui", "--ui-listen", "127.0.0.1:0"},
			nil, io.Discard, stderr, gatewayEnv(nil), func(a string) { addr <- a })
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("the gateway stopped: %v\n%s", err, stderr)
	}
	defer func() {
		cancel()
		assert.NoError(t, <-done)
	}()
	m := uiURL.FindStringSubmatch(stderr.String())
	require.NotNil(t, m, "the UI logs its URL before the MCP endpoint listens:\n%s", stderr)
	page := m[1]

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport("alice")}}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "listBookings", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError)

	var list struct {
		Calls []struct {
			ID                        int
			Tool, Strategy, Status    string
			TokensBefore, TokensAfter int
		}
	}
	code, body := getAs(t, page+"/api/calls", "alice")
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	require.Len(t, list.Calls, 1, body)
	c := list.Calls[0]
	assert.Equal(t, "listBookings", c.Tool)
	assert.NotEqual(t, "passthrough", c.Strategy, "the list of bookings is over the threshold")
	assert.Greater(t, c.TokensBefore, c.TokensAfter)

	t.Run("the shaped call opens with its original, its cursors hidden", func(t *testing.T) {
		code, detail := getAs(t, page+"/api/calls/1", "alice")
		require.Equal(t, http.StatusOK, code, detail)
		assert.Contains(t, detail, "[cursor]")
		code, original := getAs(t, page+"/api/calls/1/original", "alice")
		require.Equal(t, http.StatusOK, code, original)
		assert.Contains(t, original, "BK0")
	})
	t.Run("another credential sees none of it", func(t *testing.T) {
		_, body := getAs(t, page+"/api/calls", "bob")
		assert.Contains(t, body, `"calls":[]`)
		code, _ := getAs(t, page+"/api/calls/1", "bob")
		assert.Equal(t, http.StatusNotFound, code)
	})
	t.Run("the health of the gateway is shown", func(t *testing.T) {
		_, body := getAs(t, page+"/api/sessions", "alice")
		assert.Contains(t, body, `"health"`)
	})
}
