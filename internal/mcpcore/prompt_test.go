package mcpcore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

func TestAPromptsLongMessageIsShapedInPlaceWithItsRole(t *testing.T) {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Threshold: 500, HardCap: 1500,
		Secret: "a prompt test secret of 32 bytes or more", ShapeTimeout: ctxfit.Duration(time.Minute), AdmissionWait: ctxfit.Duration(time.Minute)}})
	require.NoError(t, err)
	defer g.Close()
	var long strings.Builder
	for i := range 800 {
		fmt.Fprintf(&long, "line %d <&>\n", i)
	}
	first := `{"type":"text","text":"Read <this>:"}`
	last := `{"type":"text","text":"Done."}`
	raw := json.RawMessage(`{"description":"d","messages":[{"role":"user","content":` + first + `},` +
		`{"role":"assistant","content":` + string(mustJSON(t, map[string]string{"type": "text", "text": long.String()})) + `},` +
		`{"role":"user","content":` + last + `}]}`)
	args, err := mcpcore.PromptArguments("p", json.RawMessage(`{"b":"2","a":"1"}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"p","arguments":{"a":"1","b":"2"}}`, string(args))

	s := &mcpcore.Shaper{Guard: g}
	shaped, err := s.ShapePrompt(context.Background(), mcpcore.Call{Tool: mcpcore.GetPromptTool, Arguments: args, Subject: "s"}, raw)
	require.NoError(t, err)
	require.True(t, shaped.Shaped)
	var out struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Meta map[string]any `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(shaped.Result, &out))
	assert.Equal(t, "d", out.Description)
	// A link to the whole original is added only when the hard cap has room
	// for it, and whether it has depends by a token or two on the cursor's
	// bytes (its expiry and nonce): set it aside, then check the rest.
	out.Messages = slices.DeleteFunc(out.Messages, func(m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}) bool {
		return strings.Contains(string(m.Content), `"type":"resource_link"`)
	})
	require.Len(t, out.Messages, 4, "the shaped message is followed by its guidance line")
	assert.Equal(t, first, string(out.Messages[0].Content), "an unshaped message is as it came")
	assert.Equal(t, last, string(out.Messages[3].Content))
	assert.Equal(t, []string{"user", "assistant", "assistant", "user"},
		[]string{out.Messages[0].Role, out.Messages[1].Role, out.Messages[2].Role, out.Messages[3].Role})
	var guide struct {
		Type string          `json:"type"`
		Meta map[string]bool `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(out.Messages[2].Content, &guide))
	assert.Equal(t, "text", guide.Type)
	assert.True(t, guide.Meta[mcpcore.MetaGuidance], "the guidance line is marked as ctxfit's")
	assert.NotContains(t, string(out.Messages[1].Content), mcpcore.MetaGuidance, "the shaped message is not marked")
	assert.NotContains(t, string(shaped.Result), "ctxfit:message", "the tags are gone")
	assert.Equal(t, "chunking", out.Meta[mcpcore.MetaStrategy])

	// A rerun reads the same body back from the prompt's tool form.
	tool, err := mcpcore.PromptAsToolResult(raw)
	require.NoError(t, err)
	body, _, err := mcpcore.BlockBody(tool, 2)
	require.NoError(t, err)
	assert.Equal(t, long.String(), string(body))
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
