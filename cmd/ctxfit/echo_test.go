package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
)

func TestTheGatewayOverHTTPEchoesAMalformedMessageBounded(t *testing.T) {
	api, _ := exampleAPI(t)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	stderr := &syncbuf.Buffer{}
	go func() {
		done <- serveGateway(ctx, []string{"--openapi", api.URL + "/openapi.json", "--listen", "127.0.0.1:0"},
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
