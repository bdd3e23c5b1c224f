package openaifittest_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/openaifit/openaifittest"
)

// streamOf posts a streamed request with one user message and returns the
// data of its events.
func streamOf(t *testing.T, p *openaifittest.Provider, user string) (int, []string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "scripted", "stream": true, "stream_options": map[string]bool{"include_usage": true},
		"messages": []map[string]string{{"role": "user", "content": user}}})
	resp, err := http.Post(p.URL+"/chat/completions", "application/json", strings.NewReader(string(body)))
	require.NoError(t, err)
	defer resp.Body.Close()
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, data)
		}
	}
	require.NoError(t, sc.Err())
	return resp.StatusCode, events
}

func TestStreamedAnswers(t *testing.T) {
	script := func(user string) (string, string) {
		if user == "read" {
			return "read_doc", `{"path":"a/long/enough/path.txt"}`
		}
		return "", ""
	}
	t.Run("a tool call comes as its id and name, then its arguments in pieces that add up", func(t *testing.T) {
		p := openaifittest.New(script)
		defer p.Close()
		status, events := streamOf(t, p, "read")
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, "[DONE]", events[len(events)-1])
		var id, name, args string
		var pieces int
		var finish string
		var usage bool
		for _, e := range events[:len(events)-1] {
			var c struct {
				Object  string
				Choices []struct {
					Delta struct {
						ToolCalls []struct {
							Index    int
							ID       string
							Function struct{ Name, Arguments string }
						} `json:"tool_calls"`
					}
					FinishReason *string `json:"finish_reason"`
				}
				Usage *struct{ TotalTokens int } `json:"usage"`
			}
			require.NoError(t, json.Unmarshal([]byte(e), &c))
			assert.Equal(t, "chat.completion.chunk", c.Object)
			usage = usage || c.Usage != nil
			for _, ch := range c.Choices {
				for _, d := range ch.Delta.ToolCalls {
					assert.Equal(t, 0, d.Index)
					id += d.ID
					name += d.Function.Name
					args += d.Function.Arguments
					if d.Function.Arguments != "" {
						pieces++
					}
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
		}
		assert.Equal(t, "call_1", id)
		assert.Equal(t, "read_doc", name)
		assert.Equal(t, `{"path":"a/long/enough/path.txt"}`, args)
		assert.Greater(t, pieces, 1)
		assert.Equal(t, "tool_calls", finish)
		assert.True(t, usage, "stream_options.include_usage")
		require.Len(t, p.Requests(), 1)
		assert.True(t, p.Requests()[0].Stream)
	})
	t.Run("a failure mid-stream sends the first delta, then an error event and no [DONE]", func(t *testing.T) {
		p := openaifittest.New(script)
		defer p.Close()
		p.Fail(openaifittest.Failure{Status: 503, MidStream: true})
		status, events := streamOf(t, p, "hello")
		require.Equal(t, http.StatusOK, status)
		require.Len(t, events, 3, "the role, the first delta, the error: %q", events)
		assert.Contains(t, events[1], `"content":"Hello! "`)
		assert.JSONEq(t, `{"error":{"message":"openaifittest: a scripted failure mid-stream (503)","type":"server_error","param":null,"code":null}}`, events[2])
		assert.Equal(t, 503, p.Requests()[0].Status)
	})
	t.Run("a failure mid-stream of a request not streamed fails it with its status", func(t *testing.T) {
		p := openaifittest.New(script)
		defer p.Close()
		p.Fail(openaifittest.Failure{MidStream: true})
		resp, err := http.Post(p.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hello"}]}`))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	})
}
