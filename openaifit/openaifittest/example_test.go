package openaifittest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/openaifit"
	"github.com/ctxfit/ctxfit/openaifit/openaifittest"
)

// ask is the agent under test, reduced to its loop: it sends the
// conversation to the provider at base, runs the tool calls the model asks
// for (here a stand-in tool), and repeats until the model answers.
func ask(base, user string) (string, []string, error) {
	msgs := []conversation.Message{{Role: conversation.RoleUser, Content: user}}
	var calls []string
	for {
		body, _ := json.Marshal(openaifit.ChatRequest{Model: "scripted", Messages: msgs})
		resp, err := http.Post(base+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			return "", nil, err
		}
		var cr openaifit.ChatResponse
		err = json.NewDecoder(resp.Body).Decode(&cr)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return "", calls, fmt.Errorf("the provider answered %d", resp.StatusCode)
		}
		m := cr.Choices[0].Message
		msgs = append(msgs, m)
		if len(m.ToolCalls) == 0 {
			return m.Content, calls, nil
		}
		for _, tc := range m.ToolCalls {
			calls = append(calls, tc.Function.Name+" "+tc.Function.Arguments)
			msgs = append(msgs, conversation.Message{Role: conversation.RoleTool, ToolCallID: tc.ID, Content: "the text of the document"})
		}
	}
}

// An agent's test: the provider asks for read_doc when the user says
// "read N", and the test checks the agent ran the call and passed the
// answer on; then a provider that fails.
func ExampleProvider() {
	p := openaifittest.New(func(user string) (string, string) {
		var n int
		if _, err := fmt.Sscanf(user, "read %d", &n); err == nil {
			return "read_doc", fmt.Sprintf(`{"n":%d}`, n)
		}
		return "", ""
	})
	defer p.Close()

	answer, calls, err := ask(p.URL, "read 7")
	fmt.Println(answer, calls, err)
	fmt.Println(len(p.Requests()), "requests; the last had", len(p.Requests()[1].Messages), "messages")

	p.Fail(openaifittest.Failure{Status: http.StatusTooManyRequests, RetryAfter: "1"})
	_, _, err = ask(p.URL, "hello")
	fmt.Println(err)
	answer, _, _ = ask(p.URL, "hello")
	fmt.Println(answer)
	// Output:
	// Done: I read it. [read_doc {"n":7}] <nil>
	// 2 requests; the last had 3 messages
	// the provider answered 429
	// Hello! Ask me to read something.
}

// A streamed answer held after its first delta: a test of an agent that
// streams from its provider sees the first delta reach the agent's client
// while the provider's turn has not ended, then lets the turn go on.
func ExampleProvider_Hold() {
	p := openaifittest.New(func(string) (string, string) { return "", "" })
	defer p.Close()
	held, release := p.Hold()
	defer release()

	// The agent's client, reduced to reading the provider's stream here.
	resp, err := http.Post(p.URL+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"scripted","stream":true,"messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var content []string
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue // a blank line, a keep-alive comment, the end
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content string }
			}
		}
		_ = json.Unmarshal([]byte(data), &c)
		if len(c.Choices) == 0 || c.Choices[0].Delta.Content == "" {
			continue
		}
		content = append(content, c.Choices[0].Delta.Content)
		if len(content) == 1 {
			select {
			case <-held:
				fmt.Printf("%q came while the provider held its turn\n", content[0])
			default:
				fmt.Println("the answer was not held")
			}
			release()
		}
	}
	fmt.Printf("%q\n", content)
	// Output:
	// "Hello! " came while the provider held its turn
	// ["Hello! " "Ask " "me " "to " "read " "something."]
}
