package mcpgofit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/mcpgofit"
)

func TestSmallResultsPassThroughUntouched(t *testing.T) {
	f := guarded(t, ctxfit.Config{}, nil)
	for _, tc := range []struct {
		name, tool string
		args       any
	}{
		{"a short structured search", "search_bookings", map[string]any{"query": "lovelace", "limit": 2}},
		{"a tool error", "get_booking", map[string]any{"id": ""}},
		{"a short list", "list_bookings", map[string]any{"status": "nosuchstatus"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := call(t, f.client, tc.tool, tc.args), call(t, f.raw, tc.tool, tc.args)
			assert.Equal(t, want.IsError, got.IsError)
			assert.Equal(t, want.Content, got.Content)
			assert.Equal(t, string(want.RawStructuredContent), string(got.RawStructuredContent))
			assert.NotContains(t, metaOf(got), mcpcore.MetaStrategy)
		})
	}
}

func TestAPagedListFollowedToTheEndIsTheRawList(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		for _, status := range []string{"", "confirmed"} {
			t.Run(string(mode)+" mode, status "+status, func(t *testing.T) {
				f := guarded(t, ctxfit.Config{Mode: mode}, nil)
				args := map[string]any{"status": status}
				results := followAll(t, f.client, "list_bookings", args, ctxfit.DefaultHardCap)
				require.Greater(t, len(results), 2, "the list is paged")
				assert.Equal(t, bodyOf(t, call(t, f.raw, "list_bookings", args)), mcpfittest.JoinItems(t, bodies(t, results), "items"))
			})
		}
	}
}

func TestReplayModeRunsTheToolAgainForEveryContinuation(t *testing.T) {
	for _, tc := range []struct {
		mode ctxfit.Mode
		runs func(pages int) int64
	}{
		{ctxfit.ModeStore, func(int) int64 { return 1 }},
		{ctxfit.ModeReplay, func(pages int) int64 { return int64(pages) }},
	} {
		t.Run(string(tc.mode)+" mode", func(t *testing.T) {
			f := guarded(t, ctxfit.Config{Mode: tc.mode}, nil)
			results := followAll(t, f.client, "list_bookings", nil, ctxfit.DefaultHardCap)
			assert.Equal(t, tc.runs(len(results)), f.calls.of("list_bookings"))
		})
	}
}

func TestAShapedResultSaysWhatItHoldsAndHowToContinue(t *testing.T) {
	f := guarded(t, ctxfit.Config{}, nil)
	res := call(t, f.client, "list_bookings", nil)
	lines := texts(t, res)
	require.Len(t, lines, 2)
	assert.Regexp(t, `^Showing items 1-\d+ of 500 \(.* tokens; budget 4,000\)\. For the next page call ctxfit_next with \{"cursor":"[^"]+"\}\. To find something, call ctxfit_search \(cursor, pattern\) or ctxfit_query \(cursor, jq expression\) with that cursor\.$`, lines[1])
	meta := metaOf(res)
	assert.Equal(t, "pagination", meta[mcpcore.MetaStrategy])
	assert.NotEmpty(t, meta[mcpcore.MetaNextCursor])
	assert.InDelta(t, ctxfit.DefaultHardCap, meta[mcpcore.MetaHardCap], 0)
	assert.Nil(t, res.StructuredContent, "a tool without structured content gets none")
}

func TestAShapedResultKeepsTheToolsMeta(t *testing.T) {
	f := guarded(t, ctxfit.Config{}, nil)
	res := call(t, f.client, "read_log", nil)
	assert.Equal(t, "kept", metaOf(res)["example/tool"])
	assert.Equal(t, "chunking", metaOf(res)[mcpcore.MetaStrategy])
}

func TestAStructuredSearchIsPagedInsideItsObject(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode), func(t *testing.T) {
			f := guarded(t, ctxfit.Config{Mode: mode}, nil)
			args := map[string]any{"query": ""}
			results := followAll(t, f.client, "search_bookings", args, ctxfit.DefaultHardCap)
			require.Greater(t, len(results), 2)
			require.NotEmpty(t, results[0].RawStructuredContent, "a tool with structured content keeps it")
			assert.Equal(t, texts(t, results[0])[0], string(results[0].RawStructuredContent), "the text is the structured content")
			for _, res := range results[1:] {
				assert.Empty(t, res.RawStructuredContent, "ctxfit_next has no output schema: its results are text")
			}
			want := bodyOf(t, call(t, f.raw, "search_bookings", args))
			assert.Equal(t, want, rebuild(t, f.client, results[0], ctxfit.DefaultHardCap), "every page and part gives the result back byte for byte")
			var page struct {
				Outline struct {
					Total int `json:"total"`
				} `json:"outline"`
			}
			require.NoError(t, json.Unmarshal([]byte(texts(t, results[0])[0]), &page))
			assert.Equal(t, 500, page.Outline.Total, "the first page shows the object's other fields")
		})
	}
}

func TestOutputSchemasAcceptShapedResults(t *testing.T) {
	f := guarded(t, ctxfit.Config{}, nil)
	schemaJSON := listedOutputSchema(t, f.server, "search_bookings")
	assert.Contains(t, string(schemaJSON), `"anyOf"`, "tools/list shows the rewritten schema")

	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	require.NoError(t, err)
	comp := jsonschema.NewCompiler()
	require.NoError(t, comp.AddResource("out.json", doc))
	schema, err := comp.Compile("out.json")
	require.NoError(t, err)

	// The server validates output (WithOutputSchemaValidation): a shaped
	// result that did not match would come back as an error.
	results := followAll(t, f.client, "search_bookings", map[string]any{"query": ""}, ctxfit.DefaultHardCap)[:1]
	results = append(results, call(t, f.client, "search_bookings", map[string]any{"query": "lovelace", "limit": 1}))
	for _, res := range results {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.RawStructuredContent))
		require.NoError(t, err)
		assert.NoError(t, schema.Validate(v), "structured content %.200s", res.RawStructuredContent)
	}
}

func TestLogChunksReproduceTheTextByteForByte(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode), func(t *testing.T) {
			f := guarded(t, ctxfit.Config{Mode: mode}, nil)
			results := followAll(t, f.client, "read_log", nil, ctxfit.DefaultHardCap)
			require.Greater(t, len(results), 10)
			assert.Equal(t, bodyOf(t, call(t, f.raw, "read_log", nil)), mcpfittest.JoinChunks(t, bodies(t, results)))
		})
	}
}

func TestEveryResultIsWithinASmallHardCapByExactCount(t *testing.T) {
	cfg := ctxfit.Config{Threshold: 1000, HardCap: 1500, ChunkTokens: 800}
	f := guarded(t, cfg, nil)
	results := followAll(t, f.client, "read_log", nil, cfg.HardCap)
	assert.Equal(t, bodyOf(t, call(t, f.raw, "read_log", nil)), mcpfittest.JoinChunks(t, bodies(t, results)))
	results = followAll(t, f.client, "list_bookings", nil, cfg.HardCap)
	assert.Equal(t, bodyOf(t, call(t, f.raw, "list_bookings", nil)), mcpfittest.JoinItems(t, bodies(t, results), "items"))
	results = followAll(t, f.client, "search_bookings", map[string]any{"query": ""}, cfg.HardCap)
	assert.Greater(t, len(results), 2)
}

func TestALargeObjectIsSummarizedAndDrillsDown(t *testing.T) {
	cfg := ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "get_booking", Threshold: 2000}}}
	f := guarded(t, cfg, nil)
	args := map[string]any{"id": "BK00042"}
	res := call(t, f.client, "get_booking", args)
	require.False(t, res.IsError)
	assert.Equal(t, "summary", metaOf(res)[mcpcore.MetaStrategy])
	lines := texts(t, res)
	require.Len(t, lines, 2)
	details, _ := metaOf(res)[mcpcore.MetaDetailsCursor].(string)
	require.NotEmpty(t, details)
	assert.Contains(t, lines[1], `For the left-out fields call ctxfit_details with {"cursor":"`+details+`","fields":"`)
	assert.Less(t, tokensOf(t, res), 2000+200)

	t.Run("fields all returns the whole object", func(t *testing.T) {
		full := call(t, f.client, mcpcore.DefaultDetailsTool, map[string]any{"cursor": details, "fields": "all"})
		require.False(t, full.IsError, "%v", texts(t, full))
		assert.Equal(t, bodyOf(t, call(t, f.raw, "get_booking", args)), texts(t, full)[0])
	})
	t.Run("named fields return those fields", func(t *testing.T) {
		part := call(t, f.client, mcpcore.DefaultDetailsTool, map[string]any{"cursor": details, "fields": "policies"})
		require.False(t, part.IsError, "%v", texts(t, part))
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(texts(t, part)[0]), &got))
		assert.Contains(t, got, "policies")
		assert.NotContains(t, got, "description")
	})
	t.Run("an unknown field is a tool error with a suggestion", func(t *testing.T) {
		e := errorOf(t, call(t, f.client, mcpcore.DefaultDetailsTool, map[string]any{"cursor": details, "fields": "nope"}))
		assert.Equal(t, "fields_invalid", e.Code)
		assert.Equal(t, "fields", e.Data.Parameter)
		assert.NotEmpty(t, e.Data.Suggestion)
	})
	t.Run("no tool can be named: the details tool opens only what was summarized", func(t *testing.T) {
		e := errorOf(t, call(t, f.client, mcpcore.DefaultDetailsTool, map[string]any{"tool": "get_booking", "arguments": args, "fields": "all"}))
		assert.Equal(t, "parameter_invalid", e.Code)
	})
}

func TestBadCursorsAreToolErrorsWithASuggestion(t *testing.T) {
	f := guarded(t, ctxfit.Config{}, nil)
	next := metaOf(call(t, f.client, "list_bookings", nil))[mcpcore.MetaNextCursor].(string)
	mid := len(next) / 2
	tampered := []byte(next)
	tampered[mid] = "AB"[boolIndex(next[mid] == 'A')]
	for _, tc := range []struct{ name, cursor, code string }{
		{"garbage", "garbage", "cursor_invalid"},
		{"a tampered cursor", string(tampered), "cursor_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, f.client, mcpcore.DefaultNextTool, map[string]any{"cursor": tc.cursor})
			e := errorOf(t, res)
			assert.Equal(t, tc.code, e.Code)
			assert.Equal(t, "cursor", e.Data.Parameter)
			assert.NotEmpty(t, e.Data.Suggestion)
			assert.Contains(t, texts(t, res)[0], e.Data.Suggestion)
		})
	}
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestACursorOfAnotherSessionIsRejected(t *testing.T) {
	f := guarded(t, ctxfit.Config{}, nil)
	other := connect(t, f.server)
	next := metaOf(call(t, f.client, "list_bookings", nil))[mcpcore.MetaNextCursor].(string)

	e := errorOf(t, call(t, other, mcpcore.DefaultNextTool, map[string]any{"cursor": next}))
	assert.Equal(t, "cursor_mismatch", e.Code)
	assert.NotEmpty(t, e.Data.Suggestion)

	assert.False(t, call(t, f.client, mcpcore.DefaultNextTool, map[string]any{"cursor": next}).IsError, "the owner may continue")
}

func TestOptionsSubjectBindsCursorsToAPrincipal(t *testing.T) {
	s, _ := newServer()
	require.NoError(t, mcpgofit.Install(s, newGuard(t, ctxfit.Config{}), &mcpgofit.Options{
		Subject: func(context.Context, mcp.CallToolRequest) string { return "the same user" },
	}))
	alice, alsoAlice := connect(t, s), connect(t, s)
	next := metaOf(call(t, alice, "list_bookings", nil))[mcpcore.MetaNextCursor].(string)
	assert.False(t, call(t, alsoAlice, mcpcore.DefaultNextTool, map[string]any{"cursor": next}).IsError,
		"another session of the same subject may continue")
}

func TestMalformedArgumentsOfTheCtxfitToolsAreToolErrors(t *testing.T) {
	f := guarded(t, ctxfit.Config{}, nil)
	for _, tc := range mcpfittest.MalformedCalls() {
		t.Run(tc.Name+" is a tool result with isError and the structured error, as mcpfit answers", func(t *testing.T) {
			res := call(t, f.client, tc.Tool, tc.Args)
			want := mcpfittest.WantMalformed(tc)
			assert.Equal(t, want, errorOf(t, res))
			assert.Equal(t, []string{want.Text()}, texts(t, res))
		})
	}
}

func TestAMixedResultIsShapedBlockByBlockAndKeepsItsOtherBlocks(t *testing.T) {
	f := guarded(t, ctxfit.Config{}, nil)
	got, want := call(t, f.client, "big_image", nil), call(t, f.raw, "big_image", nil)
	require.False(t, got.IsError)
	assert.Equal(t, "chunking", metaOf(got)[mcpcore.MetaStrategy], "the large text beside an image is shaped")
	require.NotNil(t, original(got))
	assert.Equal(t, *original(got), got.Content[len(got.Content)-1], "the link to the whole result closes it")
	assert.Equal(t, want.Content[len(want.Content)-1], got.Content[len(got.Content)-2], "the image keeps its place after the text")
	text, ok := got.Content[0].(mcp.TextContent)
	require.True(t, ok)
	assert.LessOrEqual(t, exact.Count(text.Text), ctxfit.DefaultHardCap)
}

func TestADisabledToolPassesThroughAndKeepsItsSchema(t *testing.T) {
	cfg := ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "read_log", Disabled: true}, {Match: "search_bookings", Disabled: true}}}
	f := guarded(t, cfg, nil)
	got, want := call(t, f.client, "read_log", nil), call(t, f.raw, "read_log", nil)
	assert.Equal(t, want.Content, got.Content)
	assert.NotContains(t, metaOf(got), mcpcore.MetaStrategy)

	raw, _ := newServer()
	assert.JSONEq(t, string(listedOutputSchema(t, raw, "search_bookings")), string(listedOutputSchema(t, f.server, "search_bookings")),
		"a disabled tool keeps its schema")
}

func TestADrillDownCannotRunAToolTheServerHides(t *testing.T) {
	hidden := server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool {
		return slices.DeleteFunc(tools, func(t mcp.Tool) bool { return t.Name == "get_booking" })
	})
	s, c := newServer(hidden)
	require.NoError(t, mcpgofit.Install(s, newGuard(t, ctxfit.Config{}), nil))
	cl := connect(t, s)
	e := errorOf(t, call(t, cl, mcpcore.DefaultDetailsTool, map[string]any{"tool": "get_booking", "arguments": map[string]any{"id": "BK1"}, "fields": "all"}))
	assert.Equal(t, "parameter_invalid", e.Code, "the details tool names no tool: it takes a summary's cursor")
	assert.Zero(t, c.of("get_booking"), "a hidden tool is not run")
}

func TestInputValidationAppliesToTheCtxfitTools(t *testing.T) {
	s, _ := newServer(server.WithInputSchemaValidation())
	require.NoError(t, mcpgofit.Install(s, newGuard(t, ctxfit.Config{}), nil))
	cl := connect(t, s)
	res := call(t, cl, mcpcore.DefaultNextTool, map[string]any{"cursor": 5})
	require.True(t, res.IsError)
	assert.Contains(t, strings.Join(texts(t, res), "\n"), "input schema validation failed")
	results := followAll(t, cl, "list_bookings", nil, ctxfit.DefaultHardCap)
	assert.Greater(t, len(results), 2, "valid continuations pass")
}

func TestCustomToolNamesAreUsedEverywhere(t *testing.T) {
	f := guarded(t, ctxfit.Config{}, &mcpgofit.Options{NextTool: "more", DetailsTool: "expand"})
	res := call(t, f.client, "list_bookings", nil)
	lines := texts(t, res)
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], "call more with")
	next := metaOf(res)[mcpcore.MetaNextCursor].(string)
	assert.False(t, call(t, f.client, "more", map[string]any{"cursor": next}).IsError)
}

func TestInstallRefusesBadInput(t *testing.T) {
	g := newGuard(t, ctxfit.Config{})
	s, _ := newServer()
	assert.ErrorContains(t, mcpgofit.Install(nil, g, nil), "mcpgofit:")
	assert.ErrorContains(t, mcpgofit.Install(s, nil, nil), "mcpgofit:")
	assert.ErrorContains(t, mcpgofit.Install(s, g, &mcpgofit.Options{NextTool: "x", DetailsTool: "x"}), "two of ctxfit's tools are named")
	require.NoError(t, mcpgofit.Install(s, g, nil))
	assert.ErrorContains(t, mcpgofit.Install(s, g, nil), "installed twice")
}

// listedOutputSchema returns the outputSchema tools/list shows for the tool
// named name, as sent on the wire (mcp-go's client keeps only part of it).
func listedOutputSchema(t *testing.T, s *server.MCPServer, name string) json.RawMessage {
	t.Helper()
	resp := s.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	b, err := json.Marshal(resp)
	require.NoError(t, err)
	var list struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(b, &list))
	for _, tool := range list.Result.Tools {
		if tool.Name == name {
			return tool.OutputSchema
		}
	}
	t.Fatalf("tools/list has no tool %q", name)
	return nil
}
