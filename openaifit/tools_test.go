package openaifit_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/mcpclientfit"
	"github.com/ctxfit/ctxfit/openaifit"
)

func TestFunctionName(t *testing.T) {
	tests := []struct {
		name, tool, want string
	}{
		{"a valid name stays", "read_text_file", "read_text_file"},
		{"dashes and digits stay", "get-env-2", "get-env-2"},
		{"a dot becomes an underscore, with a hash", "files.read", "files_read_"},
		{"a long name is cut, with a hash", strings.Repeat("a", 80), strings.Repeat("a", 55) + "_"},
		{"non-ASCII letters become underscores", "lire_été", "lire_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := openaifit.FunctionName(tt.tool)
			assert.True(t, strings.HasPrefix(got, tt.want), got)
			assert.LessOrEqual(t, len(got), openaifit.MaxFunctionName)
			for _, r := range got {
				assert.True(t, r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9', got)
			}
		})
	}
	assert.NotEqual(t, openaifit.FunctionName("a.b"), openaifit.FunctionName("a/b"), "distinct tools keep distinct names")
}

func TestToolsConvertToFunctionsAndBack(t *testing.T) {
	g, err := ctxfit.New(nil)
	require.NoError(t, err)
	defer g.Close()
	cg, err := mcpclientfit.New(g, nil)
	require.NoError(t, err)
	sdkTools := append([]*mcp.Tool{
		{Name: "read_text_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "files.list", Title: "List files", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}, cg.Tools()...)
	tools, err := openaifit.MCPTools(sdkTools)
	require.NoError(t, err)
	ts, err := openaifit.NewToolset(tools)
	require.NoError(t, err)
	fns := ts.Functions()
	require.Len(t, fns, 6)

	got, err := json.Marshal(fns[0])
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"function","function":{"name":"read_text_file","description":"Read a file.",
		"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}`, string(got))

	assert.Equal(t, "List files", fns[1].Function.Description, "the title when there is no description")
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(fns[1].Function.Parameters), "properties added")
	assert.NotEqual(t, "files.list", fns[1].Function.Name)

	assert.Equal(t, "ctxfit_next", fns[2].Function.Name, "the ctxfit tools are functions too")
	assert.Contains(t, string(fns[2].Function.Parameters), `"cursor"`)
	assert.Equal(t, "ctxfit_details", fns[3].Function.Name)

	// Back: a model's call of a function is a call of the MCP tool.
	tool, args, err := ts.Call(conversation.ToolCall{ID: "c1", Type: "function", Function: conversation.FunctionCall{Name: fns[1].Function.Name, Arguments: ""}})
	require.NoError(t, err)
	assert.Equal(t, "files.list", tool)
	assert.Equal(t, "{}", string(args))
	tool, args, err = ts.Call(conversation.ToolCall{Function: conversation.FunctionCall{Name: "ctxfit_next", Arguments: `{"cursor":"c"}`}})
	require.NoError(t, err)
	assert.Equal(t, "ctxfit_next", tool)
	assert.Equal(t, `{"cursor":"c"}`, string(args))
	_, _, err = ts.Call(conversation.ToolCall{Function: conversation.FunctionCall{Name: "nope"}})
	assert.ErrorIs(t, err, openaifit.ErrUnknownFunction)
	_, _, err = ts.Call(conversation.ToolCall{Function: conversation.FunctionCall{Name: "read_text_file", Arguments: `[1]`}})
	assert.Error(t, err)

	mt, ok := ts.MCPTool(fns[1].Function.Name)
	require.True(t, ok)
	assert.Equal(t, tools[1], mt)
	f, ok := ts.Function("files.list")
	require.True(t, ok)
	assert.Equal(t, fns[1], f)
	back := openaifit.FromFunction(fns[0])
	assert.Equal(t, "read_text_file", back.Name)
	assert.JSONEq(t, string(tools[0].InputSchema), string(back.InputSchema))
}

func TestNewToolsetRejectsAmbiguousTools(t *testing.T) {
	_, err := openaifit.NewToolset([]openaifit.MCPTool{{Name: "a"}, {Name: "a"}})
	assert.ErrorContains(t, err, "two tools")
	_, err = openaifit.NewToolset([]openaifit.MCPTool{{Name: ""}})
	assert.Error(t, err)
	_, err = openaifit.NewToolset([]openaifit.MCPTool{{Name: "a", InputSchema: json.RawMessage(`[1]`)}})
	assert.ErrorContains(t, err, "not a JSON object")
	_, err = openaifit.MCPTools(42)
	assert.Error(t, err)
}
