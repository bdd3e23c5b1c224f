package mcpcore_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// TestEveryOwnToolNamesTheArgumentAtFault holds every tool ctxfit adds to
// one rule: a missing, empty, unknown or mistyped argument is reported
// under its own name, with what it should hold and what to pass.
func TestEveryOwnToolNamesTheArgumentAtFault(t *testing.T) {
	names := mcpcore.Names{}.WithDefaults()
	cat, _ := catalogOf(newShaper(t, ctxfit.Config{}), 3, nil)
	decode := map[string]func(string) *mcpcore.Error{
		names.Next: func(a string) *mcpcore.Error { _, bad := names.NextInput(json.RawMessage(a)); return bad },
		names.Details: func(a string) *mcpcore.Error {
			_, bad := names.DetailsInput(json.RawMessage(a))
			return bad
		},
		names.Search: func(a string) *mcpcore.Error { _, bad := names.SearchInput(json.RawMessage(a)); return bad },
		names.Query:  func(a string) *mcpcore.Error { _, bad := names.QueryInput(json.RawMessage(a)); return bad },
		mcpcore.FindTool: func(a string) *mcpcore.Error {
			_, bad := cat.FindInput(json.RawMessage(a))
			return bad
		},
		mcpcore.CallTool: func(a string) *mcpcore.Error {
			_, _, bad := cat.CallInput(json.RawMessage(a))
			return bad
		},
	}
	for _, tc := range []struct {
		name, tool, args, argument, says string
	}{
		{"next without a cursor", names.Next, `{}`, "cursor", `needs the argument "cursor"`},
		{"next with an empty cursor", names.Next, `{"cursor":""}`, "cursor", "nextCursor"},
		{"next with a cursor that is a number", names.Next, `{"cursor":7}`, "cursor", "is a JSON number, not a string"},
		{"next with a part that is not an integer", names.Next, `{"cursor":"abc","part":"two"}`, "part", "is a JSON string, not an integer"},
		{"next with a fractional part", names.Next, `{"cursor":"abc","part":1.5}`, "part", "not an integer"},
		{"next with a negative part", names.Next, `{"cursor":"abc","part":-1}`, "part", "1 or more"},
		{"next with an unknown argument", names.Next, `{"cursor":"abc","page":2}`, "page", `takes no argument "page"`},
		{"next with no arguments at all", names.Next, ``, "cursor", "needs"},
		{"details without a cursor", names.Details, `{"fields":"all"}`, "cursor", `needs the argument "cursor"`},
		{"details without fields", names.Details, `{"cursor":"abc"}`, "fields", `needs the argument "fields"`},
		{"details with fields as a list", names.Details, `{"cursor":"abc","fields":["id"]}`, "fields", "is a JSON array, not a string"},
		{"details with the tool's own arguments", names.Details, `{"tool":"get_booking","cursor":"abc","fields":"all"}`, "tool", `takes no argument "tool"`},
		{"search without a cursor", names.Search, `{"pattern":"x"}`, "cursor", `needs the argument "cursor"`},
		{"search without a pattern", names.Search, `{"cursor":"abc"}`, "pattern", `needs the argument "pattern"`},
		{"search with literal as a string", names.Search, `{"cursor":"abc","pattern":"x","literal":"yes"}`, "literal", "not a boolean"},
		{"search with context as a string", names.Search, `{"cursor":"abc","pattern":"x","context":"2"}`, "context", "not an integer"},
		{"query without a cursor", names.Query, `{"expression":".a"}`, "cursor", `needs the argument "cursor"`},
		{"query with a blank expression", names.Query, `{"cursor":"abc","expression":"  "}`, "expression", `needs the argument "expression"`},
		{"query with an expression that is an object", names.Query, `{"cursor":"abc","expression":{}}`, "expression", "is a JSON object, not a string"},
		{"find without a query", mcpcore.FindTool, `{"limit":3}`, "query", `needs the argument "query"`},
		{"find with a limit out of range", mcpcore.FindTool, `{"query":"x","limit":99}`, "limit", "1 to 50"},
		{"find with a limit that is a string", mcpcore.FindTool, `{"query":"x","limit":"3"}`, "limit", "not an integer"},
		{"call without a name", mcpcore.CallTool, `{"arguments":{}}`, "name", `needs the argument "name"`},
		{"call with arguments that are not an object", mcpcore.CallTool, `{"name":"get_invoice_1","arguments":"id=1"}`, "arguments", "not a JSON object"},
		{"call with arguments that are an array", mcpcore.CallTool, `[1]`, "arguments", "not a JSON object"},
		{"query with arguments that are not JSON", names.Query, `{"cursor":`, "arguments", "not valid JSON"},
	} {
		t.Run(tc.name+" names "+tc.argument, func(t *testing.T) {
			bad := decode[tc.tool](tc.args)
			require.NotNil(t, bad)
			assert.Equal(t, tc.argument, bad.Data.Parameter)
			assert.Equal(t, "parameter_invalid", bad.Code)
			assert.Contains(t, bad.Text(), tc.says)
			assert.Contains(t, bad.Text(), tc.tool)
			assert.NotEmpty(t, bad.Data.Suggestion, "it says what to pass")
		})
	}
}
