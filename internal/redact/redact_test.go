package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/redact"
)

const secret = "s3cr3t-value"

func TestSecretNamesAreFoundByPatternWhateverTheirCase(t *testing.T) {
	for _, name := range []string{
		"password", "token", "secret", "apiKey", "api_key", "authorization",
		"access_token", "refresh-token", "client_secret", "secretKey", "X-API-KEY", "private_key",
		"passwd", "credentials", "cookie", "auth", "Set-Cookie", "sessionId", "signature", "PWD", "AWS_SECRET_ACCESS_KEY",
	} {
		t.Run(name+" is secret", func(t *testing.T) {
			assert.True(t, redact.SecretName(name))
		})
	}
	for _, name := range []string{"query", "limit", "path", "text", "id", "name", "url"} {
		t.Run(name+" is not", func(t *testing.T) {
			assert.False(t, redact.SecretName(name))
		})
	}
	assert.True(t, redact.SecretName("Text", "text"), "an extra name counts, in any case")
}

func TestSecretsInsideStringsAreRedacted(t *testing.T) {
	for _, tt := range []struct{ name, in, keep string }{
		{"a password in a postgres URL", "postgres://app:" + secret + "@db:5432/x", "postgres://app:[redacted]@db:5432/x"},
		{"a key=value connection string", "host=db user=app password=" + secret + " dbname=x", "host=db user=app password=[redacted] dbname=x"},
		{"a semicolon connection string", "Server=db;User Id=app;Password=" + secret + ";", "Server=db;User Id=app;Password=[redacted];"},
		{"an api_key in a URL's query", "https://api.example.com/v1?q=1&api_key=" + secret + "&x=2", "https://api.example.com/v1?q=1&api_key=[redacted]&x=2"},
		{"a token in a quoted value", `token="` + secret + `"`, `token=[redacted]`},
		{"a bearer credential", "Authorization: Bearer " + secret, "[redacted]"},
		{"a header line", "X-API-KEY: " + secret, "X-API-KEY: [redacted]"},
		{"nothing secret", "select * from t where id=3", "select * from t where id=3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := redact.String(tt.in)
			assert.NotContains(t, got, secret)
			assert.Contains(t, got, tt.keep)
		})
	}
	assert.Equal(t, "text=[redacted]", redact.String("text="+secret, "text"))
}

func TestJSONRedactsSecretMembersAtAnyDepthAndDigestsCursors(t *testing.T) {
	names := []string{"access_token", "refresh-token", "client_secret", "secretKey", "X-API-KEY", "private_key",
		"passwd", "credentials", "cookie", "auth", "session", "signature", "password", "token", "secret", "apiKey",
		"api_key", "authorization"}
	args := map[string]any{
		"query":  "ok",
		"nested": []any{map[string]any{"PASSWORD": secret}},
		"dsn":    "postgres://app:" + secret + "@db/x",
		"url":    "https://x.example/?api_key=" + secret,
		"cursor": "eyJhIjoxfQ.c2ln",
	}
	for _, n := range names {
		args[n] = secret
	}
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	out := string(redact.JSON(raw, 0))
	assert.NotContains(t, out, secret)
	assert.NotContains(t, out, "eyJhIjoxfQ.c2ln", "a cursor is logged as a digest")
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	for _, n := range names {
		assert.Equal(t, redact.Redacted, got[n], n)
	}
	assert.Equal(t, "ok", got["query"])
	assert.Equal(t, redact.Digest("eyJhIjoxfQ.c2ln"), got["cursor"])
	assert.Equal(t, `{}`, string(redact.JSON(nil, 0)))
	assert.Equal(t, `"[not JSON]"`, string(redact.JSON(json.RawMessage(`{`), 0)))
}

func TestJSONCutsLongStrings(t *testing.T) {
	raw, err := json.Marshal(map[string]string{"text": strings.Repeat("é", 10000)})
	require.NoError(t, err)
	out := redact.JSON(raw, 100)
	assert.Less(t, len(out), 200)
	assert.True(t, json.Valid(out))
}

func TestBoundCutsOnARuneBoundaryAndSaysHowLongItWas(t *testing.T) {
	assert.Equal(t, "short", redact.Bound("short", 10))
	got := redact.Bound(strings.Repeat("é", 10), 5)
	assert.Equal(t, "éé…(20 bytes)", got)
}

func TestDigestIsShortAndStable(t *testing.T) {
	d := redact.Digest("a cursor")
	assert.Equal(t, d, redact.Digest("a cursor"))
	assert.NotEqual(t, d, redact.Digest("another cursor"))
	assert.Len(t, d, len("sha256:")+12)
}

func TestEndpointRedactsEverythingThatMayBeACredential(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"user, password, query values and fragment", "https://alice:hunter2@h/mcp?token=s3cret&v=1#frag", "https://redacted@h/mcp?token=redacted&v=redacted#redacted"},
		{"a plain address stays", "http://127.0.0.1:9/sse", "http://127.0.0.1:9/sse"},
		{"a connection string loses its user and every parameter, whatever its name", "redis://user:" + secret + "@localhost:6379/0?access_token=" + secret + "&sig=" + secret,
			"redis://redacted@localhost:6379/0?access_token=redacted&sig=redacted"},
		{"an unparsable URL is not echoed", "http://[::1", "(an unparsable URL)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, redact.Endpoint(c.in))
		})
	}
}
