package mcpfittest

import (
	"encoding/json"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// MalformedCall is a call of one of ctxfit's tools whose arguments
// are wrong. Both MCP adapters answer each with the same tool result (see
// [WantMalformed]); their tests share this table.
type MalformedCall struct {
	Name string         // says what is wrong
	Tool string         // the continuation or details tool
	Args map[string]any // the arguments sent
}

// MalformedCalls returns the malformed calls every adapter is tested with.
func MalformedCalls() []MalformedCall {
	return []MalformedCall{
		{"a missing cursor", mcpcore.DefaultNextTool, map[string]any{}},
		{"a cursor that is not a string", mcpcore.DefaultNextTool, map[string]any{"cursor": 5}},
		{"an unknown argument", mcpcore.DefaultNextTool, map[string]any{"cursor": "x", "limit": 5}},
		{"details without fields", mcpcore.DefaultDetailsTool, map[string]any{"cursor": "x"}},
		{"details with the arguments of old", mcpcore.DefaultDetailsTool, map[string]any{"tool": "get_booking", "fields": "all"}},
		{"details without a cursor", mcpcore.DefaultDetailsTool, map[string]any{"fields": "all"}},
		{"search without a pattern", mcpcore.DefaultSearchTool, map[string]any{"cursor": "x"}},
		{"search with context that is not a number", mcpcore.DefaultSearchTool, map[string]any{"cursor": "x", "pattern": "a", "context": "two"}},
		{"query without an expression", mcpcore.DefaultQueryTool, map[string]any{"cursor": "x"}},
		{"query with a blank expression", mcpcore.DefaultQueryTool, map[string]any{"cursor": "x", "expression": "  "}},
	}
}

// WantMalformed returns the structured error an adapter with the default
// tool names answers c with, as the structuredContent of a tool result with
// isError set and, as its text, [mcpcore.Error.Text].
func WantMalformed(c MalformedCall) mcpcore.Error {
	args, err := json.Marshal(c.Args)
	if err != nil {
		panic(err)
	}
	names := mcpcore.Names{}.WithDefaults()
	var bad *mcpcore.Error
	switch c.Tool {
	case names.Next:
		_, bad = names.NextInput(args)
	case names.Search:
		_, bad = names.SearchInput(args)
	case names.Query:
		_, bad = names.QueryInput(args)
	default:
		_, bad = names.DetailsInput(args)
	}
	if bad == nil {
		panic("mcpfittest: " + c.Name + " is not malformed")
	}
	return *bad
}
