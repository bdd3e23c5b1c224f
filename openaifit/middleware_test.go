package openaifit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/openaifit"
)

// sink is the next handler: it records the body and the fit it got.
type sink struct {
	body []byte
	fit  conversation.Result
	ok   bool
	hits int
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.hits++
	s.body, _ = io.ReadAll(r.Body)
	s.fit, s.ok = openaifit.FitFromContext(r.Context())
	w.WriteHeader(http.StatusOK)
}

// keeper keeps cleared results in memory.
type keeper struct{ kept []string }

func (k *keeper) Keep(_ context.Context, _, content string) (conversation.Recall, error) {
	k.kept = append(k.kept, content)
	return conversation.Recall{Tool: "ctxfit_next", Arguments: fmt.Sprintf(`{"cursor":"k%d","part":1}`, len(k.kept)-1)}, nil
}

func post(h http.Handler, body string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	r.RemoteAddr = "192.0.2.1:1234"
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// chat returns a request body with turns turns, each a user question, a
// tool call with a large result and an answer, then a last question.
func chat(turns, resultWords int) string {
	msgs := []map[string]any{{"role": "system", "content": "You read logs."}}
	for i := range turns {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			map[string]any{"role": "user", "content": fmt.Sprintf("question %d", i)},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"id": id, "type": "function",
				"function": map[string]any{"name": "read_log", "arguments": `{"name":"app.log"}`}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": strings.Repeat(fmt.Sprintf("line of turn %d ", i), resultWords/4)},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("answer %d", i)})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "and now?"}}})
	b, _ := json.Marshal(map[string]any{"model": "small-model", "messages": msgs, "temperature": 0.2, "stream": false,
		"tools": []map[string]any{{"type": "function", "function": map[string]any{"name": "read_log", "parameters": map[string]any{"type": "object"}}}}})
	return string(b)
}

func TestMiddlewareFitsTheMessagesToTheModelsWindow(t *testing.T) {
	exact, err := budget.Exact(budget.O200KBase)
	require.NoError(t, err)
	k := &keeper{}
	next := &sink{}
	h := openaifit.Middleware(&openaifit.Options{
		ContextTokens: func(model string) int {
			if model == "small-model" {
				return 6000
			}
			return 1 << 20
		},
		ReplyTokens: 1000,
		Fit:         conversation.Options{Keeper: k, MaxMessages: -1},
	})(next)

	body := chat(6, 2000)
	w := post(h, body)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.True(t, next.ok)

	var got struct {
		Model       string            `json:"model"`
		Temperature float64           `json:"temperature"`
		Messages    []json.RawMessage `json:"messages"`
		Tools       json.RawMessage   `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(next.body, &got))
	assert.Equal(t, "small-model", got.Model, "every other member goes on")
	assert.Equal(t, 0.2, got.Temperature)
	assert.Contains(t, string(next.body), `"stream":false`)
	assert.Equal(t, keysOf(t, body), keysOf(t, string(next.body)), "members keep their order")

	// The forwarded messages fit the window less the reply and the tools.
	var msgs []conversation.Message
	for _, m := range got.Messages {
		var cm struct {
			conversation.Message
			Content json.RawMessage `json:"content"`
		}
		require.NoError(t, json.Unmarshal(m, &cm))
		var text string
		if json.Unmarshal(cm.Content, &text) != nil && string(cm.Content) != "null" {
			text = "and now?" // the array content of the last question
		}
		cm.Message.Content = text
		msgs = append(msgs, cm.Message)
	}
	limit := 6000 - 1000 - exact.Count(string(got.Tools))
	assert.LessOrEqual(t, conversation.Tokens(exact, msgs), limit)
	assert.Equal(t, next.fit.TokensAfter, conversation.Tokens(exact, msgs))
	assert.Greater(t, next.fit.TokensBefore, 6000)

	// Cleared results carry a placeholder and are kept whole.
	require.NotEmpty(t, next.fit.Cleared)
	assert.Equal(t, fmt.Sprint(len(next.fit.Cleared)), w.Header().Get(openaifit.HeaderCleared))
	assert.Equal(t, fmt.Sprint(next.fit.TokensAfter), w.Header().Get(openaifit.HeaderTokensAfter))
	var orig struct{ Messages []conversation.Message }
	_ = json.Unmarshal([]byte(strings.Replace(body, `[{"text":"and now?","type":"text"}]`, `"x"`, 1)), &orig)
	for i, c := range next.fit.Cleared {
		assert.Equal(t, orig.Messages[c.Index].Content, k.kept[i])
	}
	assert.Contains(t, string(next.body), `[ctxfit] This result of read_log (`)
	assert.Contains(t, string(next.body), `"content":[{"text":"and now?","type":"text"}]`, "an array content goes on as it was")
}

// keysOf returns the member names of a JSON object, in order.
func keysOf(t *testing.T, obj string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(obj))
	_, err := dec.Token()
	require.NoError(t, err)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
	}
	return keys
}

func TestMiddlewarePassesWhatItNeedNotChange(t *testing.T) {
	next := &sink{}
	h := openaifit.Middleware(nil)(next)
	body := chat(1, 100)
	w := post(h, body)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, body, string(next.body), "byte for byte")
	assert.True(t, next.ok)
	assert.Empty(t, w.Header().Get(openaifit.HeaderTokensAfter))

	for _, bad := range []string{`not json`, `{"messages":"no"}`, `{"messages":[1]}`, `{"messages":[{"role":"user","content":5}]}`} {
		next.body = nil
		w := post(h, bad)
		assert.Equal(t, http.StatusOK, w.Code, "fails open: next answers %q", bad)
		assert.Equal(t, bad, string(next.body))
	}
	r := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code, "other routes pass")
}

func TestMiddlewareRefusesWhatCannotFit(t *testing.T) {
	next := &sink{}
	h := openaifit.Middleware(&openaifit.Options{ContextTokens: func(string) int { return 200 }, ReplyTokens: 100, MaxBodyBytes: 1 << 16})(next)
	for _, tt := range []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"a latest question over the window", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("word ", 500) + `"}]}`, 400, "context_length_exceeded"},
		{"a reply that leaves no room", `{"model":"m","max_tokens":300,"messages":[{"role":"user","content":"hi"}]}`, 400, "context_length_exceeded"},
		{"a body over the limit", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 1<<16) + `"}]}`, 413, "request_too_large"},
	} {
		t.Run(tt.name+" is answered "+fmt.Sprint(tt.status), func(t *testing.T) {
			w := post(h, tt.body)
			assert.Equal(t, tt.status, w.Code)
			var e openaifit.ErrorBody
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e), w.Body.String())
			assert.Equal(t, tt.code, e.Error.Code)
			assert.Equal(t, "invalid_request_error", e.Error.Type)
			assert.NotEmpty(t, e.Error.Message)
		})
	}
	assert.Zero(t, next.hits)
}

func TestMiddlewareLimitsEachClientWithATokenBucket(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	next := &sink{}
	h := openaifit.Middleware(&openaifit.Options{Rate: rate.Every(2 * time.Second), Now: func() time.Time { return now },
		ClientKey: openaifit.HeaderKey("X-Client")})(next)
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	for i := range 10 {
		require.Equal(t, http.StatusOK, post(h, body, "X-Client", "alice").Code, "request %d of the bucket of 10", i+1)
	}
	w := post(h, body, "X-Client", "alice")
	require.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "2", w.Header().Get("Retry-After"))
	assert.JSONEq(t, `{"error":{"message":"Rate limit reached for this client: 10 requests at once, refilled at 0.5 a second. Retry in 2 s.",
		"type":"requests","param":null,"code":"rate_limit_exceeded"}}`, w.Body.String())
	assert.Equal(t, http.StatusOK, post(h, body, "X-Client", "bob").Code, "another client has its own bucket")
	assert.Equal(t, http.StatusOK, post(h, body).Code, "without the header, the client's IP")

	now = now.Add(1 * time.Second)
	w = post(h, body, "X-Client", "alice")
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	now = now.Add(1 * time.Second)
	assert.Equal(t, http.StatusOK, post(h, body, "X-Client", "alice").Code, "refilled")
	assert.Equal(t, 13, next.hits)
}

func TestWriteErrorWritesNullForEmptyParamAndCode(t *testing.T) {
	w := httptest.NewRecorder()
	openaifit.WriteError(w, http.StatusNotFound, openaifit.ErrorDetail{Message: "no such session", Type: "invalid_request_error"})
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.JSONEq(t, `{"error":{"message":"no such session","type":"invalid_request_error","param":null,"code":null}}`, w.Body.String())
}
