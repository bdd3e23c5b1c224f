package mcpfit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

func TestSmallResultsPassThroughUntouched(t *testing.T) {
	cs, raw := guarded(t, ctxfit.Config{}, nil)
	for _, tc := range []struct {
		name, tool string
		args       any
	}{
		{"a short structured search", "search_bookings", map[string]any{"query": "lovelace", "limit": 2}},
		{"a tool error", "get_booking", map[string]any{"id": ""}},
		{"an error of input validation", "search_bookings", map[string]any{"query": 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := mcpfittest.Call(t, cs, tc.tool, tc.args), mcpfittest.Call(t, raw, tc.tool, tc.args)
			assert.Equal(t, want.IsError, got.IsError)
			assert.Equal(t, want.Content, got.Content)
			assert.Equal(t, want.StructuredContent, got.StructuredContent)
			assert.NotContains(t, got.Meta, mcpcore.MetaStrategy)
		})
	}
}

func TestAPagedListFollowedToTheEndIsTheRawList(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		for _, status := range []string{"", "confirmed"} {
			t.Run(string(mode)+" mode, status "+status, func(t *testing.T) {
				cs, raw := guarded(t, ctxfit.Config{Mode: mode}, nil)
				args := map[string]any{"status": status}
				bodies := follow(t, cs, "list_bookings", args, ctxfit.DefaultHardCap)
				require.Greater(t, len(bodies), 2, "the list is paged")
				assert.Equal(t, bodyOf(t, mcpfittest.Call(t, raw, "list_bookings", args)), mcpfittest.JoinItems(t, bodies, "items"))
			})
		}
	}
}

func TestAShapedResultSaysWhatItHoldsAndHowToContinue(t *testing.T) {
	cs, _ := guarded(t, ctxfit.Config{}, nil)
	res := mcpfittest.Call(t, cs, "list_bookings", nil)
	lines := mcpfittest.Texts(t, res)
	require.Len(t, lines, 2)
	assert.Regexp(t, `^Showing items 1-\d+ of 500 \(.* tokens; budget [\d,]+\)\. For the next page call ctxfit_next with \{"cursor":"[^"]+"\}\. To find something, call ctxfit_search \(cursor, pattern\) or ctxfit_query \(cursor, jq expression\) with that cursor\.$`, lines[1])
	assert.Equal(t, "pagination", res.Meta[mcpcore.MetaStrategy])
	assert.NotEmpty(t, res.Meta[mcpcore.MetaNextCursor])
	assert.InDelta(t, ctxfit.DefaultHardCap, res.Meta[mcpcore.MetaHardCap], 0)
	assert.Nil(t, res.StructuredContent, "a tool without structured content gets none")
}

func TestAStructuredSearchIsPagedInsideItsObject(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode), func(t *testing.T) {
			cs, raw := guarded(t, ctxfit.Config{Mode: mode}, nil)
			args := map[string]any{"query": ""}
			first := mcpfittest.Call(t, cs, "search_bookings", args)
			require.NotNil(t, first.StructuredContent, "a tool with structured content keeps it")
			assert.JSONEq(t, mcpfittest.Texts(t, first)[0], string(mustJSON(t, first.StructuredContent)))

			want := bodyOf(t, mcpfittest.Call(t, raw, "search_bookings", args))
			assert.Equal(t, want, mcpfittest.Rebuild(t, cs, first, ctxfit.DefaultHardCap), "every page and part gives the result back byte for byte")
			var page struct {
				Outline struct {
					Total int `json:"total"`
				} `json:"outline"`
				Meta struct {
					Path string `json:"path"`
				} `json:"meta"`
			}
			require.NoError(t, json.Unmarshal([]byte(mcpfittest.Texts(t, first)[0]), &page))
			assert.Equal(t, 500, page.Outline.Total, "the first page shows the object's other fields")
			assert.Equal(t, "results", page.Meta.Path)
		})
	}
}

func TestLogChunksReproduceTheTextByteForByte(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode), func(t *testing.T) {
			cs, raw := guarded(t, ctxfit.Config{Mode: mode}, nil)
			bodies := follow(t, cs, "read_short_log", nil, ctxfit.DefaultHardCap)
			require.Greater(t, len(bodies), 10)
			assert.Equal(t, bodyOf(t, mcpfittest.Call(t, raw, "read_short_log", nil)), mcpfittest.JoinChunks(t, bodies))
		})
	}
}

func TestEveryResultIsWithinASmallHardCap(t *testing.T) {
	cfg := ctxfit.Config{Threshold: 1000, HardCap: 1500, ChunkTokens: 800}
	cs, raw := guarded(t, cfg, nil)
	bodies := follow(t, cs, "read_short_log", nil, cfg.HardCap)
	assert.Equal(t, bodyOf(t, mcpfittest.Call(t, raw, "read_short_log", nil)), mcpfittest.JoinChunks(t, bodies))
	bodies = follow(t, cs, "list_bookings", nil, cfg.HardCap)
	assert.Equal(t, bodyOf(t, mcpfittest.Call(t, raw, "list_bookings", nil)), mcpfittest.JoinItems(t, bodies, "items"))
}

func TestALargeObjectIsSummarizedAndDrillsDown(t *testing.T) {
	cfg := ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "get_booking", Threshold: 2000}}}
	cs, raw := guarded(t, cfg, nil)
	args := map[string]any{"id": "BK00042"}
	res := mcpfittest.Call(t, cs, "get_booking", args)
	require.False(t, res.IsError)
	assert.Equal(t, "summary", res.Meta[mcpcore.MetaStrategy])
	lines := mcpfittest.Texts(t, res)
	require.Len(t, lines, 2)
	details := mcpfittest.DetailsCursor(res)
	require.NotEmpty(t, details)
	assert.Contains(t, lines[1], `For the left-out fields call ctxfit_details with {"cursor":"`+details+`","fields":"`)
	assert.Less(t, mcpfittest.Tokens(t, res), 2000+200)

	t.Run("fields all returns the whole object", func(t *testing.T) {
		full := mcpfittest.Call(t, cs, mcpcore.DefaultDetailsTool, map[string]any{"cursor": details, "fields": "all"})
		require.False(t, full.IsError, "%v", mcpfittest.Texts(t, full))
		assert.Equal(t, bodyOf(t, mcpfittest.Call(t, raw, "get_booking", args)), mcpfittest.Texts(t, full)[0])
	})
	t.Run("named fields return those fields", func(t *testing.T) {
		part := mcpfittest.Call(t, cs, mcpcore.DefaultDetailsTool, map[string]any{"cursor": details, "fields": "policies,guest.address.city"})
		require.False(t, part.IsError, "%v", mcpfittest.Texts(t, part))
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(mcpfittest.Texts(t, part)[0]), &got))
		assert.Contains(t, got, "policies")
		assert.Contains(t, got, "guest", "dotted paths drill into nested fields")
		assert.NotContains(t, got, "description")
	})
	t.Run("no tool can be named: the details tool opens only what was summarized", func(t *testing.T) {
		bad := mcpfittest.Call(t, cs, mcpcore.DefaultDetailsTool, map[string]any{"tool": "get_booking", "arguments": args, "fields": "all"})
		require.True(t, bad.IsError)
		bad = mcpfittest.Call(t, cs, mcpcore.DefaultDetailsTool, map[string]any{"cursor": "forged", "fields": "all"})
		require.True(t, bad.IsError)
	})
	t.Run("an unknown field is a tool error with a suggestion", func(t *testing.T) {
		bad := mcpfittest.Call(t, cs, mcpcore.DefaultDetailsTool, map[string]any{"cursor": details, "fields": "nope"})
		require.True(t, bad.IsError)
		var e mcpcore.Error
		require.NoError(t, json.Unmarshal(mustJSON(t, bad.StructuredContent), &e))
		assert.Equal(t, "fields_invalid", e.Code)
		assert.Equal(t, "fields", e.Data.Parameter)
		assert.NotEmpty(t, e.Data.Suggestion)
	})
}

func TestBadCursorsAreToolErrorsWithASuggestion(t *testing.T) {
	cs, _ := guarded(t, ctxfit.Config{}, nil)
	first := mcpfittest.Call(t, cs, "list_bookings", nil)
	next := first.Meta[mcpcore.MetaNextCursor].(string)
	tampered := []byte(next)
	tampered[len(tampered)/2] ^= 1
	if tampered[len(tampered)/2] == next[len(next)/2] || !isB64(tampered[len(tampered)/2]) {
		tampered[len(tampered)/2] = 'A' + (next[len(next)/2]-'A'+1)%26
	}
	for _, tc := range []struct{ name, cursor, code string }{
		{"garbage", "garbage", "cursor_invalid"},
		{"a tampered cursor", string(tampered), "cursor_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mcpfittest.Call(t, cs, mcpcore.DefaultNextTool, map[string]any{"cursor": tc.cursor})
			require.True(t, res.IsError)
			var e mcpcore.Error
			require.NoError(t, json.Unmarshal(mustJSON(t, res.StructuredContent), &e))
			assert.Equal(t, tc.code, e.Code)
			assert.Equal(t, "cursor", e.Data.Parameter)
			assert.NotEmpty(t, e.Data.Suggestion)
			assert.Contains(t, mcpfittest.Texts(t, res)[0], e.Data.Suggestion)
		})
	}
}

func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func TestMalformedArgumentsOfTheCtxfitToolsAreToolErrors(t *testing.T) {
	cs, _ := guarded(t, ctxfit.Config{}, nil)
	for _, tc := range mcpfittest.MalformedCalls() {
		t.Run(tc.Name+" is a tool result with isError and the structured error, as mcpgofit answers", func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.Tool, Arguments: tc.Args})
			require.NoError(t, err, "not a JSON-RPC error")
			require.True(t, res.IsError)
			want := mcpfittest.WantMalformed(tc)
			var got mcpcore.Error
			b, err := json.Marshal(res.StructuredContent)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, want, got)
			assert.Equal(t, "parameter_invalid", got.Code)
			assert.NotEmpty(t, got.Data.Parameter)
			assert.NotEmpty(t, got.Data.Expected)
			assert.NotEmpty(t, got.Data.Suggestion)
			assert.Equal(t, []string{want.Text()}, mcpfittest.Texts(t, res))
		})
	}
}

func TestACursorOfAnotherSubjectIsRejected(t *testing.T) {
	// In-memory sessions have no ID: bind cursors to the client's name.
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	addTools(s)
	require.NoError(t, mcpfit.Install(s, newGuard(t, ctxfit.Config{}), &mcpfit.Options{
		Subject: func(_ context.Context, req *mcp.CallToolRequest) string {
			return req.Session.InitializeParams().ClientInfo.Name
		},
	}))
	alice, bob := connectAs(t, s, "alice"), connectAs(t, s, "bob")
	first := mcpfittest.Call(t, alice, "list_bookings", nil)
	next := first.Meta[mcpcore.MetaNextCursor].(string)

	res := mcpfittest.Call(t, bob, mcpcore.DefaultNextTool, map[string]any{"cursor": next})
	require.True(t, res.IsError)
	var e mcpcore.Error
	require.NoError(t, json.Unmarshal(mustJSON(t, res.StructuredContent), &e))
	assert.Equal(t, "cursor_mismatch", e.Code)

	assert.False(t, mcpfittest.Call(t, alice, mcpcore.DefaultNextTool, map[string]any{"cursor": next}).IsError, "the owner may continue")
}

func TestAMixedResultIsShapedBlockByBlockAndKeepsItsOtherBlocks(t *testing.T) {
	cs, raw := guarded(t, ctxfit.Config{}, nil)
	got, want := mcpfittest.Call(t, cs, "big_image", nil), mcpfittest.Call(t, raw, "big_image", nil)
	require.False(t, got.IsError)
	assert.Equal(t, "chunking", got.Meta[mcpcore.MetaStrategy], "1 MB of text beside an image is shaped")
	assert.LessOrEqual(t, mcpfittest.TokensWithMedia(t, got), ctxfit.DefaultHardCap)
	require.NotNil(t, mcpfittest.Original(got))
	assert.Equal(t, mcpfittest.Original(got), got.Content[len(got.Content)-1], "the link to the whole result closes it")
	assert.Equal(t, want.Content[1], got.Content[len(got.Content)-2], "the image keeps its place after the text")
	text := got.Content[0].(*mcp.TextContent)
	assert.True(t, strings.HasPrefix(shortLog, text.Text), "the text block is chunked in its place, its chunk as it is")
	assert.Contains(t, text.Meta, mcpcore.MetaChunk, "the chunk's place in the block's _meta")
}

func TestADisabledToolPassesThrough(t *testing.T) {
	cfg := ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "read_log", Disabled: true}, {Match: "search_bookings", Disabled: true}}}
	cs, raw := guarded(t, cfg, nil)
	got, want := mcpfittest.Call(t, cs, "read_log", nil), mcpfittest.Call(t, raw, "read_log", nil)
	assert.Equal(t, want.Content, got.Content)
	assert.NotContains(t, got.Meta, mcpcore.MetaStrategy)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range tools.Tools {
		if tool.Name == "search_bookings" {
			assert.NotContains(t, string(mustJSON(t, tool.OutputSchema)), "anyOf", "a disabled tool keeps its schema")
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
