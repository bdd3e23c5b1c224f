package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheGatewayOverHTTPEchoesAMalformedMessageBounded(t *testing.T) {
	api, _ := exampleAPI(t)
	base, stderr := listenGateway(t, nil, "--openapi", api.URL+"/openapi.json")
	req, err := http.NewRequest(http.MethodPost, base+"/mcp",
		strings.NewReader(`{"jsonrpc":"`+strings.Repeat("v", 1<<20)+`","id":1,"method":"initialize"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, resp.StatusCode, 400)
	assert.Less(t, len(body), 2048, "the error repeats a bounded part of the value")
	assert.Less(t, len(stderr.String()), 64<<10, "and so does the log")
}
