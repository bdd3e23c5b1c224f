package mcpcore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/config/settings"
)

// WithDefaults returns n with empty names replaced by the defaults.
func (n Names) WithDefaults() Names {
	return Names{Next: n.next(), Details: n.details(), Search: n.search(), Query: n.query()}
}

// Own reports whether tool is one of the tools the adapter registers.
func (n Names) Own(tool string) bool {
	return tool == n.next() || tool == n.details() || tool == n.search() || tool == n.query()
}

// Distinct reports an error when two of the tools have the same name.
func (n Names) Distinct() error {
	seen := map[string]bool{}
	for _, name := range n.All() {
		if seen[name] {
			return fmt.Errorf("two of ctxfit's tools are named %q", name)
		}
		seen[name] = true
	}
	return nil
}

// SearchInput decodes the arguments of the search tool (see
// [DecodeArguments]); arguments that do not decode, or lack the cursor or
// the pattern, give the [ArgumentError] to report instead, which names the
// argument at fault.
func (n Names) SearchInput(args json.RawMessage) (SearchInput, *Error) {
	var in SearchInput
	spec := n.searchArguments()
	if bad := spec.decode(args, &in); bad != nil {
		return SearchInput{}, bad
	}
	switch {
	case in.Cursor == "":
		return SearchInput{}, spec.missing("cursor")
	case in.Pattern == "":
		return SearchInput{}, spec.missing("pattern")
	}
	return in, nil
}

// QueryInput decodes the arguments of the query tool (see
// [DecodeArguments]); arguments that do not decode, or lack the cursor or
// the expression, give the [ArgumentError] to report instead, which names
// the argument at fault.
func (n Names) QueryInput(args json.RawMessage) (QueryInput, *Error) {
	var in QueryInput
	spec := n.queryArguments()
	if bad := spec.decode(args, &in); bad != nil {
		return QueryInput{}, bad
	}
	switch {
	case in.Cursor == "":
		return QueryInput{}, spec.missing("cursor")
	case strings.TrimSpace(in.Expression) == "":
		return QueryInput{}, spec.missing("expression")
	}
	return in, nil
}

// Guards reports whether a call of tool is shaped under cfg: tool is not
// one of the adapter's own tools ([Names.Own]), and its [ctxfit.Endpoint]
// (Match = tool name), if any, is not Disabled.
func (n Names) Guards(cfg ctxfit.Config, tool string) bool {
	if n.Own(tool) {
		return false
	}
	for _, ep := range cfg.Endpoints {
		if ep.Match == tool {
			return !ep.Disabled
		}
	}
	return true
}

// NextInput decodes the arguments of the continuation tool (see
// [DecodeArguments]). Arguments that do not decode, hold no cursor, or a
// part below 1, give the [ArgumentError] to report instead, which names
// the argument at fault.
func (n Names) NextInput(args json.RawMessage) (NextInput, *Error) {
	var in NextInput
	spec := n.nextArguments()
	if bad := spec.decode(args, &in); bad != nil {
		return NextInput{}, bad
	}
	if in.Cursor == "" {
		return NextInput{}, spec.missing("cursor")
	}
	if in.Part < 0 {
		return NextInput{}, spec.invalid("part", fmt.Sprintf(`"part" is %d; it needs a part of 1 or more`, in.Part))
	}
	return in, nil
}

// DetailsInput decodes the arguments of the details tool (see
// [DecodeArguments]): the details cursor of a summary and the fields to
// drill into. Arguments that do not decode, or lack the cursor or the
// fields, give the [ArgumentError] to report instead, which names the
// argument at fault.
func (n Names) DetailsInput(args json.RawMessage) (DetailsInput, *Error) {
	var in DetailsInput
	spec := n.detailsArguments()
	if bad := spec.decode(args, &in); bad != nil {
		return DetailsInput{}, bad
	}
	switch {
	case in.Cursor == "":
		return DetailsInput{}, spec.missing("cursor")
	case in.Fields == "":
		return DetailsInput{}, spec.missing("fields")
	}
	return in, nil
}

// MetaMaxResultSizeChars is the tools/list _meta key that tells Claude
// Code how large a tool's results may be before it truncates or diverts
// them.
const MetaMaxResultSizeChars = "anthropic/maxResultSizeChars"

// MaxResultSizeChars is what a guarded tool tells clients of its largest
// result (cfg.MaxResultSizeChars, or 8 characters a token of the tool's
// hard cap), 0 when it is to be left out.
func MaxResultSizeChars(cfg ctxfit.Config, tool string) int {
	switch {
	case cfg.MaxResultSizeChars < 0:
		return 0
	case cfg.MaxResultSizeChars > 0:
		return cfg.MaxResultSizeChars
	}
	hardCap := cfg.HardCap
	for _, ep := range cfg.Endpoints {
		if ep.Match == tool {
			if ep.HardCap != 0 {
				hardCap = ep.HardCap
			}
			break
		}
	}
	return settings.ResultSizeCharsPerToken * hardCap
}

// DecodeArguments decodes tool arguments into v strictly: unknown fields
// are an error. Absent, blank or null arguments decode as {}.
func DecodeArguments(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ToolFailed returns the [Error] of a tool that the continuation or details
// tool ran and that failed with a protocol error, message: code
// "tool_failed", status 500, with the suggestion to call the tool directly.
func ToolFailed(tool, message string) Error {
	return Error{Code: "tool_failed", Message: message, Data: ErrorData{
		Parameter: "tool", Suggestion: "Call the tool " + tool + " directly.", Status: 500}}
}

// IsObject reports whether a shaped body is a JSON object, and so can be a
// result's structured content.
func IsObject(body []byte) bool {
	body = bytes.TrimSpace(body)
	return len(body) > 0 && body[0] == '{' && json.Valid(body)
}

// GuidanceFit decides whether the guidance line of a shaped result can go
// beside its body within the hard cap. It keeps the exact counter of the
// last encoding it was asked about.
//
// The zero GuidanceFit is ready to use. It is safe for concurrent use and
// must not be copied after first use.
type GuidanceFit struct {
	mu       sync.Mutex
	counter  budget.Counter
	encoding string
}

// Fits reports whether line can go beside the body of res within
// res.Record.HardCap: always when there is no hard cap; else when the
// body's tokens, the line's tokens by exact count of encoding and one for
// the separating newline are at most the cap. For an encoding without an
// exact counter, the line's length in bytes stands for its tokens and the
// newline is not counted.
func (f *GuidanceFit) Fits(res ctxfit.Result, encoding, line string) bool {
	hardCap := res.Record.HardCap
	if hardCap <= 0 {
		return true
	}
	c := f.exact(encoding)
	if c == nil {
		return len(line)+res.Record.TokensAfter <= hardCap
	}
	return res.Record.TokensAfter+c.Count(line)+1 <= hardCap
}

// exact returns the exact counter of encoding, nil if there is none.
func (f *GuidanceFit) exact(encoding string) budget.Counter {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counter == nil || f.encoding != encoding {
		c, err := budget.Exact(encoding)
		if err != nil {
			return nil
		}
		f.counter, f.encoding = c, encoding
	}
	return f.counter
}

// OwnTool is one of the tools an adapter adds, as every adapter describes
// it: read-only, idempotent and closed-world, whatever the SDK.
type OwnTool struct {
	Name, Title, Description string
	InputSchema              json.RawMessage
}

// Tools are ctxfit's tools under these names (with the defaults for empty
// ones), in the order adapters list them: next, details, search, query.
func (n Names) Tools() []OwnTool {
	return []OwnTool{
		{Name: n.next(), Title: "Continue a large tool result", Description: NextDescription, InputSchema: NextInputSchema()},
		{Name: n.details(), Title: "Drill into a summarized tool result", Description: DetailsDescription, InputSchema: DetailsInputSchema()},
		{Name: n.search(), Title: "Search a large tool result", Description: SearchDescription, InputSchema: SearchInputSchema()},
		{Name: n.query(), Title: "Query a large JSON tool result with jq", Description: QueryDescription, InputSchema: QueryInputSchema()},
	}
}
