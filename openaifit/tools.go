package openaifit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxfit/ctxfit/conversation"
)

// MCPTool is an MCP tool definition as tools/list sends it: the members a
// function definition is made of. Its JSON names are MCP's, so the tools
// of either Go MCP SDK convert with [MCPTools].
//
// The zero value is a tool with no name. An MCPTool is a plain value.
type MCPTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// MCPTools converts tools, any value that marshals to a JSON array of MCP
// tool definitions (the []*mcp.Tool of the official Go SDK or of
// mark3labs/mcp-go, a tools/list result's "tools"), to MCPTools.
func MCPTools(tools any) ([]MCPTool, error) {
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, fmt.Errorf("openaifit: the tools do not marshal: %w", err)
	}
	var out []MCPTool
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("openaifit: the tools are not MCP tool definitions: %w", err)
	}
	return out, nil
}

// FunctionTool is a tool of an OpenAI chat-completions request: a function
// definition.
//
// The zero value has no type and no function. A FunctionTool is a plain
// value.
type FunctionTool struct {
	Type     string   `json:"type"` // "function"
	Function Function `json:"function"`
}

// Function is the definition of a function a model may call.
//
// The zero value names no function. A Function is a plain value.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// MaxFunctionName is the longest function name OpenAI accepts; a name is
// also limited to ASCII letters, digits, '_' and '-'.
const MaxFunctionName = 64

// FunctionName returns the OpenAI function name of an MCP tool named tool:
// tool itself when it is a valid function name (1 to 64 of a-z, A-Z, 0-9,
// '_' and '-'); otherwise tool with every other character replaced by '_',
// cut to 55 characters, and '_' and 8 hex digits of its SHA-256 appended,
// so that distinct tools keep distinct names.
func FunctionName(tool string) string {
	valid := len(tool) > 0 && len(tool) <= MaxFunctionName
	var b strings.Builder
	for _, r := range tool {
		if r < 0x80 && (r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
			valid = false
		}
	}
	if valid {
		return tool
	}
	sum := sha256.Sum256([]byte(tool))
	s := b.String()
	if len(s) > MaxFunctionName-9 {
		s = s[:MaxFunctionName-9]
	}
	return s + "_" + hex.EncodeToString(sum[:4])
}

// ToFunction returns the OpenAI function definition of an MCP tool: its
// name ([FunctionName]), its description (its title when it has none), and
// its input schema as the parameters, with "type":"object" and an empty
// "properties" added when the schema lacks them (an MCP input schema is
// always an object; some providers reject an object schema without
// properties). A missing or null schema is {"type":"object","properties":{}}.
func ToFunction(t MCPTool) (FunctionTool, error) {
	params, err := parameters(t.InputSchema)
	if err != nil {
		return FunctionTool{}, fmt.Errorf("openaifit: tool %q: %w", t.Name, err)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return FunctionTool{Type: "function", Function: Function{Name: FunctionName(t.Name), Description: desc, Parameters: params}}, nil
}

// FromFunction returns the MCP tool a function definition stands for: the
// name, description and parameters as the input schema, as they are. A
// function of a [Toolset] converts back to its own tool with
// [Toolset.MCPTool], which knows the original name.
func FromFunction(f FunctionTool) MCPTool {
	return MCPTool{Name: f.Function.Name, Description: f.Function.Description, InputSchema: f.Function.Parameters}
}

// parameters returns an input schema as function parameters.
func parameters(schema json.RawMessage) (json.RawMessage, error) {
	if s := bytes.TrimSpace(schema); len(s) == 0 || string(s) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil {
		return nil, errors.New("the input schema is not a JSON object")
	}
	if _, ok := m["type"]; ok {
		if _, ok := m["properties"]; ok {
			return schema, nil
		}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = json.RawMessage(`"object"`)
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = json.RawMessage(`{}`)
	}
	return json.Marshal(m)
}

// A Toolset is a set of MCP tools as OpenAI function definitions, with the
// names that lead from one to the other.
//
// A Toolset is immutable once built and safe for concurrent use. The zero
// Toolset is empty.
type Toolset struct {
	tools     []MCPTool
	functions []FunctionTool
	byFunc    map[string]int
	byTool    map[string]int
}

// NewToolset returns the Toolset of tools, in their order (the
// continuation and details tools of mcpclientfit.Guard.Tools among them,
// as any other). Tools must have distinct, non-empty names whose function
// names ([FunctionName]) are distinct too.
func NewToolset(tools []MCPTool) (*Toolset, error) {
	ts := &Toolset{byFunc: map[string]int{}, byTool: map[string]int{}}
	for _, t := range tools {
		if t.Name == "" {
			return nil, errors.New("openaifit: a tool has no name")
		}
		if _, dup := ts.byTool[t.Name]; dup {
			return nil, fmt.Errorf("openaifit: two tools are named %q", t.Name)
		}
		f, err := ToFunction(t)
		if err != nil {
			return nil, err
		}
		if other, dup := ts.byFunc[f.Function.Name]; dup {
			return nil, fmt.Errorf("openaifit: the tools %q and %q have the same function name %q", ts.tools[other].Name, t.Name, f.Function.Name)
		}
		ts.byTool[t.Name] = len(ts.tools)
		ts.byFunc[f.Function.Name] = len(ts.tools)
		ts.tools = append(ts.tools, t)
		ts.functions = append(ts.functions, f)
	}
	return ts, nil
}

// Functions returns the function definitions, in the order of the tools,
// for the "tools" of a chat-completions request. The slice is the
// Toolset's own: do not modify it.
func (ts *Toolset) Functions() []FunctionTool { return ts.functions }

// MCPTool returns the MCP tool a function name stands for.
func (ts *Toolset) MCPTool(function string) (MCPTool, bool) {
	i, ok := ts.byFunc[function]
	if !ok {
		return MCPTool{}, false
	}
	return ts.tools[i], true
}

// Function returns the function definition of the MCP tool named tool.
func (ts *Toolset) Function(tool string) (FunctionTool, bool) {
	i, ok := ts.byTool[tool]
	if !ok {
		return FunctionTool{}, false
	}
	return ts.functions[i], true
}

// ErrUnknownFunction: a tool call names a function the Toolset does not
// have.
var ErrUnknownFunction = errors.New("openaifit: the model called a function that is not among the tools")

// Call returns the MCP tool call a model's tool call stands for: the
// tool's name and its arguments, a JSON object ("" and null mean {}). It
// returns [ErrUnknownFunction] (wrapped) for a function the Toolset does
// not have, and an error for arguments that are not a JSON object.
func (ts *Toolset) Call(tc conversation.ToolCall) (string, json.RawMessage, error) {
	t, ok := ts.MCPTool(tc.Function.Name)
	if !ok {
		return "", nil, fmt.Errorf("%w: %q", ErrUnknownFunction, tc.Function.Name)
	}
	args := bytes.TrimSpace([]byte(tc.Function.Arguments))
	if len(args) == 0 || string(args) == "null" {
		return t.Name, json.RawMessage("{}"), nil
	}
	if args[0] != '{' || !json.Valid(args) {
		return "", nil, fmt.Errorf("openaifit: the arguments of %q are not a JSON object", tc.Function.Name)
	}
	return t.Name, json.RawMessage(args), nil
}
