// Package mcpcore holds what ctxfit's two MCP adapters share and what does
// not depend on an MCP SDK: the one-line guidance a shaped tool result
// carries, canonical tool arguments, the structured error payload, the input
// schemas of the continuation and drill-down tools and the strict decoding
// of their arguments, the output-schema rewrite, and the _meta keys.
//
// Both mcpfit (modelcontextprotocol/go-sdk) and mcpgofit (mark3labs/mcp-go)
// build their results from these functions, so a model sees the same text,
// errors and schemas whichever SDK serves it.
//
// Everything here is safe for concurrent use, and all but [GuidanceFit]
// (which caches a token counter) is a pure function of its arguments. Functions that return JSON return a fresh slice the caller
// may keep and modify.
//
// # The protocol
//
// Package [github.com/ctxfit/ctxfit/mcpfit] describes, once, what a model
// sees: the shaped result's blocks (see [Shaper]), its _meta ([Meta]), the
// continuation, details, search and query tools ([DefaultNextTool] and the
// others) and the errors ([ErrorOf]).
package mcpcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/jsonwire"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Default names of the tools an adapter registers.
const (
	// DefaultNextTool continues a shaped result: input {"cursor": "..."}.
	DefaultNextTool = "ctxfit_next"
	// DefaultDetailsTool drills into a summarized object: input
	// {"cursor": "<the summary's details cursor>", "fields": "..."}.
	DefaultDetailsTool = "ctxfit_details"
	// DefaultSearchTool finds what matches a pattern in a shaped result:
	// input {"cursor": "...", "pattern": "...", ...} ([SearchInput]).
	DefaultSearchTool = "ctxfit_search"
	// DefaultQueryTool runs a jq expression over a shaped JSON result:
	// input {"cursor": "...", "expression": "..."}.
	DefaultQueryTool = "ctxfit_query"
)

// Descriptions of the two tools, for their tools/list entries.
const (
	NextDescription = "Continue a tool result that was too large for the context window: " +
		"pass the nextCursor of a shaped result (a page, chunk or part) unchanged to get the next one. " +
		"Following every cursor returns the whole original result."
	DetailsDescription = "Get the fields a summarized tool result left out: pass the summary's details cursor " +
		`unchanged, and fields as "all" or a comma-separated list of fields (the summary's meta.detailsAvailable ` +
		"lists them; dotted paths such as guest.address.city work too). It opens only results ctxfit summarized, " +
		"for the session they were given to."
	SearchDescription = "Find what matches a pattern in a tool result that was too large for the context window, " +
		"instead of reading it page by page: pass any cursor of the result and an RE2 regular expression (or a " +
		"literal). A text answers its matching lines with their line numbers (and context lines if asked); a list, " +
		"its matching items with their indexes (or match one field of each item with path). The total number of " +
		"matches is always given; continue with the result's nextCursor."
	QueryDescription = "Answer a question about a large JSON tool result in one call: pass any cursor of the result " +
		"and a jq expression (for example [.items[] | select(.status == \"open\") | .id] or .items | length). " +
		"The results come as a JSON array, in pages with a nextCursor when they are large."
)

// Keys of the _meta map of a shaped result. The values are JSON numbers
// and strings; an adapter sets only the keys that apply.
const (
	// MetaNextCursor is the cursor that continues the result (string);
	// absent on the last page or chunk and on summaries.
	MetaNextCursor = "dev.ctxfit/nextCursor"
	// MetaStrategy is what was done: "pagination", "summary", "chunking",
	// "cut" or "passthrough" (string; the telemetry Strategy constants).
	MetaStrategy = "dev.ctxfit/strategy"
	// MetaTokens is the token count of the shaped body (number).
	MetaTokens = "dev.ctxfit/tokens"
	// MetaOriginalTokens is the token count of the tool's own result (number).
	MetaOriginalTokens = "dev.ctxfit/originalTokens"
	// MetaHardCap is the token count no shaped result exceeds (number).
	MetaHardCap = "dev.ctxfit/hardCap"
	// MetaDetailsCursor is a summary's details cursor (string), for the
	// details tool.
	MetaDetailsCursor = "dev.ctxfit/detailsCursor"
	// MetaPartCursor is the cursor that opens the values the result holds
	// back (string), with the "ctxfit:part" number of a placeholder;
	// absent when it holds none.
	MetaPartCursor = "dev.ctxfit/partCursor"
)

// Meta returns a fresh _meta map for a shaped result: the strategy, the
// token counts and hard cap from res.Record, and the next cursor if any.
// The map is new on every call: SDKs write into a result's _meta after
// middleware runs, so results must never share one.
func Meta(res ctxfit.Result) map[string]any {
	m := map[string]any{
		MetaStrategy:       string(res.Strategy),
		MetaTokens:         res.Record.TokensAfter,
		MetaOriginalTokens: res.Record.TokensBefore,
	}
	if res.Record.HardCap > 0 {
		m[MetaHardCap] = res.Record.HardCap
	}
	if res.Next != "" {
		m[MetaNextCursor] = res.Next
	}
	if res.PartCursor != "" {
		m[MetaPartCursor] = res.PartCursor
	}
	if res.Details != "" {
		m[MetaDetailsCursor] = res.Details
	}
	return m
}

// Call identifies the tool call a result answers: the tool's name and its
// canonical arguments (see [CanonicalArguments]), and who made it: the
// subject cursors are bound to, and the request ID telemetry records.
type Call struct {
	Tool      string
	Arguments json.RawMessage
	Subject   string
	RequestID string
	// CacheHit says whether the result came from a response cache (nil:
	// no cache was consulted), for telemetry.
	CacheHit *bool
	// Unrepeatable says the tool must not run again to continue its
	// result (see [Repeatable]): its continuations come from the store
	// even in replay mode.
	Unrepeatable bool

	// read: the result is a resources/read's or a prompts/get's, which
	// the client can ask for again itself (no link to its original).
	read bool
}

// Repeatable reports whether a tool with these annotation hints may run
// again with the same arguments without changing anything more: it is
// read-only, or idempotent. Only such tools are replayed to continue a
// result, and only read-only ones served from a response cache. A tool
// without annotations is neither.
func Repeatable(readOnly, idempotent bool) bool { return readOnly || idempotent }

// Names are the names under which an adapter registers its tools. Empty
// fields mean [DefaultNextTool], [DefaultDetailsTool], [DefaultSearchTool]
// and [DefaultQueryTool].
type Names struct {
	Next    string
	Details string
	Search  string
	Query   string
}

func (n Names) search() string {
	if n.Search == "" {
		return DefaultSearchTool
	}
	return n.Search
}

func (n Names) query() string {
	if n.Query == "" {
		return DefaultQueryTool
	}
	return n.Query
}

// All returns the four tool names, defaults filled in.
func (n Names) All() []string { return []string{n.next(), n.details(), n.search(), n.query()} }

func (n Names) next() string {
	if n.Next == "" {
		return DefaultNextTool
	}
	return n.Next
}

func (n Names) details() string {
	if n.Details == "" {
		return DefaultDetailsTool
	}
	return n.Details
}

// Guidance returns the one line that tells the model what a shaped result
// holds and how to get more, built from res.Guidance, res.Next and the tool
// names, for example:
//
//	Showing items 1-37 of 500 (3,912 tokens; budget 4,000). For the next page call ctxfit_next with {"cursor":"..."}.
//	Showing a summary (812 of 3,204 tokens; budget 2,000). For the left-out fields call ctxfit_details with {"cursor":"...","fields":"amenities,policies"} (or "fields":"all"; dotted paths such as a.b work too).
//
// Guidance returns "" for a result that was not shaped (res.Guidance is
// empty).
func Guidance(res ctxfit.Result, names Names) string {
	if res.Guidance == "" {
		return ""
	}
	line := res.Guidance
	if res.Strategy == telemetry.StrategySummary {
		// The engine's own drill-down sentence speaks HTTP; replace it.
		if i := strings.Index(line, " For the left-out fields"); i >= 0 {
			line = line[:i]
		} else if i := strings.Index(line, " fields were left out:"); i >= 0 {
			line = line[:strings.LastIndex(line[:i], ".")+1]
		}
		if res.Details != "" {
			fields := detailsFields(res.Body)
			if fields == "" {
				fields = "all"
			}
			in, _ := marshal(DetailsInput{Cursor: res.Details, Fields: fields})
			line += fmt.Sprintf(` For the left-out fields call %s with %s (or "fields":"all"; dotted paths such as a.b work too).`, names.details(), in)
		}
		return line
	}
	line = renderingGuidance(line, res, names)
	if res.Strategy == telemetry.StrategyFormat {
		return line
	}
	what := ""
	switch res.Strategy {
	case telemetry.StrategyPagination:
		what = "page"
	case telemetry.StrategyChunking:
		what = "chunk"
	case telemetry.StrategyCut:
		what = "part"
	}
	if what == "" {
		return line
	}
	if res.Next == "" {
		line += " This is the last " + what + "."
	} else {
		in, _ := marshal(map[string]string{"cursor": res.Next})
		line += fmt.Sprintf(" For the next %s call %s with %s.", what, names.next(), in)
	}
	if res.PartCursor != "" {
		cur := "that cursor"
		if res.PartCursor != res.Next {
			in, _ := marshal(res.PartCursor)
			cur = string(in)
		}
		line += fmt.Sprintf(` To open a held-back value ({"ctxfit:part":N,...}) call %s with {"cursor":%s,"part":N}.`, names.next(), cur)
	}
	return line
}

// detailsFields reads meta.detailsAvailable.parameters.fields of a summary
// body; "" when absent.
func detailsFields(body []byte) string {
	var s struct {
		Meta struct {
			DetailsAvailable *struct {
				Parameters map[string]string `json:"parameters"`
			} `json:"detailsAvailable"`
		} `json:"meta"`
	}
	if json.Unmarshal(body, &s) != nil || s.Meta.DetailsAvailable == nil {
		return ""
	}
	return s.Meta.DetailsAvailable.Parameters["fields"]
}

// CanonicalArguments returns tool arguments in a canonical form, for
// [ctxfit.Request.Filters] (cursors are bound to it, so the same arguments
// must always give the same bytes): object keys sorted, no insignificant
// whitespace, numbers as written, no HTML escaping. Absent or null
// arguments give {}. Arguments that are not valid JSON are an error.
func CanonicalArguments(args json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("mcpcore: tool arguments are not valid JSON: %w", err)
	}
	if len(bytes.TrimSpace(args[dec.InputOffset():])) != 0 {
		return nil, errors.New("mcpcore: tool arguments hold more than one JSON value")
	}
	if v == nil {
		return json.RawMessage("{}"), nil
	}
	return marshal(v)
}

// marshal encodes v compactly without HTML escaping (maps sort their
// keys), with the same bytes on every Go release.
func marshal(v any) (json.RawMessage, error) {
	return jsonwire.MarshalUnescaped(v)
}
