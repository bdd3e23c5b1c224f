package proxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/proxy"
)

const loggedSecret = "hunter2-do-not-log"

func TestLoggedArgumentsKeepSecretsOutByPattern(t *testing.T) {
	f := newFixture(t, inProcess(), ctxfit.Config{Threshold: 1000, HardCap: 3000}, proxy.Options{LogArguments: true})
	cs := f.connect(nil)
	cases := []struct {
		name string
		args map[string]any
	}{
		{"access_token", map[string]any{"access_token": loggedSecret}},
		{"refresh-token", map[string]any{"refresh-token": loggedSecret}},
		{"client_secret", map[string]any{"client_secret": loggedSecret}},
		{"secretKey", map[string]any{"secretKey": loggedSecret}},
		{"X-API-KEY", map[string]any{"X-API-KEY": loggedSecret}},
		{"private_key", map[string]any{"private_key": loggedSecret}},
		{"passwd", map[string]any{"passwd": loggedSecret}},
		{"credentials", map[string]any{"credentials": map[string]any{"user": "u", "value": loggedSecret}}},
		{"cookie", map[string]any{"cookie": "sid=" + loggedSecret}},
		{"auth", map[string]any{"auth": loggedSecret}},
		{"sessionId", map[string]any{"sessionId": loggedSecret}},
		{"signature", map[string]any{"signature": loggedSecret}},
		{"a nested PASSWORD", map[string]any{"db": []any{map[string]any{"PASSWORD": loggedSecret}}}},
		{"a password inside a connection string", map[string]any{"dsn": "postgres://app:" + loggedSecret + "@db:5432/x"}},
		{"a key=value connection string", map[string]any{"conn": "host=db user=app password=" + loggedSecret}},
		{"an api_key in a URL", map[string]any{"url": "https://api.example.com/v1?q=1&api_key=" + loggedSecret}},
		{"a bearer credential in a header value", map[string]any{"header": "Authorization: Bearer " + loggedSecret}},
	}
	for _, tt := range cases {
		t.Run("the value of "+tt.name+" is not logged", func(t *testing.T) {
			before := len(f.logs.calls(t))
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: tt.args})
			require.NoError(t, err)
			calls := f.logs.calls(t)
			require.Len(t, calls, before+1)
			args, _ := calls[before]["arguments"].(string)
			assert.NotEmpty(t, args)
			assert.NotContains(t, args, loggedSecret)
		})
	}
	t.Run("a cursor is logged as a short digest", func(t *testing.T) {
		next := call(t, cs, "big", nil).Meta[mcpcore.MetaNextCursor].(string)
		call(t, cs, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
		calls := f.logs.calls(t)
		args := calls[len(calls)-1]["arguments"].(string)
		assert.NotContains(t, args, next)
		assert.Regexp(t, `^\{"cursor":"sha256:[0-9a-f]{12}"\}$`, args)
	})
	t.Run("a long argument is cut", func(t *testing.T) {
		call(t, cs, "echo", map[string]any{"text": strings.Repeat("word ", 20000)}) // 100 KB: the log keeps under 1 KiB
		calls := f.logs.calls(t)
		assert.Less(t, len(calls[len(calls)-1]["arguments"].(string)), 1024)
	})
	t.Run("nothing secret is hidden", func(t *testing.T) {
		call(t, cs, "echo", map[string]any{"text": "plain words"})
		calls := f.logs.calls(t)
		assert.Equal(t, `{"text":"plain words"}`, calls[len(calls)-1]["arguments"])
	})
}
