package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	ctx := t.Context()
	base, stderr := listenGateway(t, nil, "--openapi", api.URL+"/openapi.json", "--ui", "--ui-listen", "127.0.0.1:0")
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
	t.Run("each credential sees its own sessions with their calls, and the API's health", func(t *testing.T) {
		// bob's session, with no call.
		other, err := mcp.NewClient(&mcp.Implementation{Name: "bob", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport("bob")}}, nil)
		require.NoError(t, err)
		defer other.Close()
		type view struct {
			Sessions []struct {
				Session, State             string
				Calls, Shaped, TokensSaved int
			}
			Health struct {
				Status, Upstream              string
				Sessions, APICalls, APIErrors int
			}
		}
		read := func(token string) (view, string) {
			code, body := getAs(t, page+"/api/sessions", token)
			require.Equal(t, http.StatusOK, code, body)
			var v view
			require.NoError(t, json.Unmarshal([]byte(body), &v))
			return v, body
		}
		alice, body := read("alice")
		require.Len(t, alice.Sessions, 1, body)
		s := alice.Sessions[0]
		assert.Regexp(t, `^s-[0-9a-f]{8}$`, s.Session, "a digest, never the session's ID")
		assert.NotContains(t, body, cs.ID())
		assert.Equal(t, "open", s.State)
		assert.Equal(t, 1, s.Calls)
		assert.Equal(t, 1, s.Shaped)
		assert.Equal(t, c.TokensBefore-c.TokensAfter, s.TokensSaved)
		assert.Equal(t, "ok", alice.Health.Status)
		assert.Equal(t, "openapi: "+api.URL+"/openapi.json", alice.Health.Upstream)
		assert.Equal(t, 2, alice.Health.Sessions, "the count of every session, not theirs alone")
		assert.Equal(t, 1, alice.Health.APICalls)

		bob, body := read("bob")
		require.Len(t, bob.Sessions, 1, body)
		assert.NotEqual(t, s.Session, bob.Sessions[0].Session)
		assert.Zero(t, bob.Sessions[0].Calls)
		assert.NotContains(t, body, cs.ID())
		assert.NotContains(t, body, other.ID(), "a digest of bob's own session too")

		nobody, body := read("")
		assert.Empty(t, nobody.Sessions, body)
	})
}
