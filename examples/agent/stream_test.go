package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/conversation"
)

func TestReadingAProvidersStream(t *testing.T) {
	chunk := func(delta string) string {
		return `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	finish := func(reason string) string {
		return `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}` + "\n\n"
	}
	const done = "data: [DONE]\n\n"
	for _, tc := range []struct {
		name    string
		stream  string
		want    conversation.Message
		finish  string
		relayed []string // pieces of the client's stream
		err     string
	}{
		{
			name:    "content deltas add up, and keep-alive comments and event names are skipped",
			stream:  ": keep-alive\n\n" + chunk(`{"role":"assistant","content":""}`) + "event: message\n" + chunk(`{"content":"Hel"}`) + ": keep-alive\n\n" + chunk(`{"content":"lo"}`) + finish("stop") + done,
			want:    conversation.Message{Role: conversation.RoleAssistant, Content: "Hello"},
			finish:  "stop",
			relayed: []string{`"content":"Hel"`, `"content":"lo"`},
		},
		{
			name: "tool calls in pieces at two indices are put together, under the client's indices after earlier turns",
			stream: chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":""}}]}`) +
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}`) +
				chunk(`{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"echo","arguments":"{\"n\":"}}]}`) +
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"th\":1}"}}]}`) +
				chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"7}"}}]}`) + finish("tool_calls") + done,
			want: conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
				{ID: "c1", Type: "function", Function: conversation.FunctionCall{Name: "read", Arguments: `{"path":1}`}},
				{ID: "c2", Type: "function", Function: conversation.FunctionCall{Name: "echo", Arguments: `{"n":7}`}},
			}},
			finish:  "tool_calls",
			relayed: []string{`"index":3,"type":"function"`, `"index":4,"type":"function"`, `"arguments":"7}"},"index":4`},
		},
		{
			name: "a tool call's id and name repeated on each delta are not added up",
			stream: chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"{"}}]}`) +
				chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"}"}}]}`) + finish("tool_calls") + done,
			want: conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
				{ID: "c1", Type: "function", Function: conversation.FunctionCall{Name: "read", Arguments: `{}`}},
			}},
			finish: "tool_calls",
		},
		{
			name:   "a stream that ends with its finish reason and no [DONE] is whole",
			stream: chunk(`{"content":"Hi"}`) + finish("stop"),
			want:   conversation.Message{Role: conversation.RoleAssistant, Content: "Hi"},
			finish: "stop",
		},
		{
			name:   "a stream that ends before its turn is broken",
			stream: chunk(`{"content":"Hi"}`),
			err:    "ended before the turn did",
		},
		{
			name:   "an error event breaks the stream with the provider's message",
			stream: chunk(`{"content":"Hi"}`) + `data: {"error":{"message":"overloaded","type":"server_error"}}` + "\n\n",
			err:    "overloaded",
		},
		{
			name:   "a tool call without its id is refused",
			stream: chunk(`{"tool_calls":[{"index":0,"function":{"name":"read","arguments":"{}"}}]}`) + finish("tool_calls") + done,
			err:    "without its id or name",
		},
		{
			name:   "an event that is not a chunk is refused",
			stream: "data: {not json\n\n",
			err:    "not a chat.completion.chunk",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			st := &streamer{w: rec, id: "chatcmpl-1", model: "m", toolIndex: 3}
			p := &provider{name: "a"}
			lines := 0
			resp, err := p.readStream(strings.NewReader(tc.stream), st.turn(), func() { lines++ })
			assert.Positive(t, lines, "each line keeps the attempt alive")
			if tc.err != "" {
				var se *streamError
				require.True(t, errors.As(err, &se), "%v", err)
				assert.Contains(t, err.Error(), tc.err)
				assert.True(t, retryable(err), "a broken stream is retried when none of it reached the client")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, resp.Choices[0].Message)
			assert.Equal(t, tc.finish, resp.Choices[0].FinishReason)
			for _, r := range tc.relayed {
				assert.Contains(t, rec.Body.String(), r)
			}
		})
	}
}

func TestAProviderThatDoesNotStreamIsRelayedAsOneTurn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`))
	}))
	defer srv.Close()
	rec := httptest.NewRecorder()
	st := &streamer{w: rec, id: "chatcmpl-1", model: "m"}
	ts := st.turn()
	p := newProvider("a", srv.URL, "", time.Minute, retryPolicy{})
	resp, err := p.attempt(t.Context(), []byte(`{}`), ts)
	require.NoError(t, err)
	assert.Equal(t, "Hi", resp.Choices[0].Message.Content)
	assert.True(t, ts.sent)
	assert.Contains(t, rec.Body.String(), `"content":"Hi"`)
	assert.Contains(t, rec.Body.String(), `"arguments":"{}"`)
	assert.Equal(t, 1, st.toolIndex, "the next turn's tool calls come after it")
}
