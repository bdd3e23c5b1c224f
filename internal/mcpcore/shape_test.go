package mcpcore_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/hostile"
)

// modelTokens counts a result's wire JSON as a client does
// ([hostile.Tokens]).
func modelTokens(t testing.TB, raw json.RawMessage) int {
	t.Helper()
	n, err := hostile.Tokens(raw)
	require.NoError(t, err)
	return n
}

// reach follows a shaped result through the Shaper as a client would,
// with rerun standing for the tool: every continuation and every read
// within hardCap, and returns the rebuilt blocks and the bytes behind the
// link to the original (nil when it has none).
func reach(t *testing.T, s *mcpcore.Shaper, shaped json.RawMessage, hardCap int, rerun mcpcore.Rerun) ([]follow.Block, json.RawMessage, []byte) {
	t.Helper()
	ctx := context.Background()
	call := func(cursor string, part int64) ([]byte, error) {
		args, _ := json.Marshal(map[string]any{"cursor": cursor, "part": part})
		if part == 0 {
			args, _ = json.Marshal(map[string]any{"cursor": cursor})
		}
		res := s.Next(ctx, "subject", args, rerun)
		require.LessOrEqual(t, modelTokens(t, res), hardCap, "a continuation within the hard cap")
		var r struct {
			IsError bool `json:"isError"`
		}
		require.NoError(t, json.Unmarshal(res, &r))
		if r.IsError {
			return nil, fmt.Errorf("%s", res)
		}
		return follow.ResultBody(res)
	}
	read := func(uri string) ([]byte, error) { return readWhole(t, s, uri, rerun) }
	blocks, structured, err := follow.Blocks(shaped, call, read)
	require.NoError(t, err)
	var original []byte
	var r struct {
		Content []struct {
			URI  string         `json:"uri"`
			Meta map[string]any `json:"_meta"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(shaped, &r))
	for _, c := range r.Content {
		if c.Meta[mcpcore.MetaOriginal] == true {
			original, err = readWhole(t, s, c.URI, rerun)
			require.NoError(t, err)
		}
	}
	return blocks, structured, original
}

// readWhole reads a ctxfit:// resource in ranges of 2,000 bytes, as a client
// that reads a large original in parts.
func readWhole(t *testing.T, s *mcpcore.Shaper, uri string, rerun mcpcore.Rerun) ([]byte, error) {
	t.Helper()
	var out []byte
	for at := 0; ; at += 2000 {
		raw, err := s.ReadResource(context.Background(), "subject", fmt.Sprintf("%s?bytes=%d-%d", uri, at, at+1999), rerun)
		if err != nil {
			if at > 0 && strings.Contains(err.Error(), "range") {
				return out, nil // past the end
			}
			return nil, err
		}
		var r struct {
			Contents []struct {
				Text *string `json:"text"`
				Blob string  `json:"blob"`
			} `json:"contents"`
		}
		require.NoError(t, json.Unmarshal(raw, &r))
		require.Len(t, r.Contents, 1)
		piece := []byte(r.Contents[0].Blob)
		if r.Contents[0].Text != nil {
			piece = []byte(*r.Contents[0].Text)
		} else {
			piece, err = base64.StdEncoding.DecodeString(r.Contents[0].Blob)
			require.NoError(t, err)
		}
		out = append(out, piece...)
		if len(piece) < 2000 {
			return out, nil
		}
	}
}

// checkResult shapes raw and holds the result to both promises: within
// the hard cap as a client counts it, true figures in _meta, isError
// kept, every block rebuilt in its place, and the whole result byte for
// byte behind its link.
func checkResult(t *testing.T, s *mcpcore.Shaper, raw json.RawMessage, hardCap int) mcpcore.Shaped {
	t.Helper()
	rerun := func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return raw, nil }
	got, err := s.ShapeResult(context.Background(), mcpcore.Call{Tool: "t", Arguments: json.RawMessage(`{}`), Subject: "subject"}, raw)
	require.NoError(t, err)
	tokens := modelTokens(t, got.Result)
	require.LessOrEqual(t, tokens, hardCap, "the result within the hard cap as a client counts it")
	var in, out struct {
		Content    json.RawMessage `json:"content"`
		IsError    bool            `json:"isError"`
		Meta       map[string]any  `json:"_meta"`
		Structured json.RawMessage `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(raw, &in))
	require.NoError(t, json.Unmarshal(got.Result, &out))
	assert.Equal(t, in.IsError, out.IsError, "isError kept")
	if !got.Shaped {
		assert.Equal(t, raw, got.Result)
		return got
	}
	assert.EqualValues(t, tokens, out.Meta[mcpcore.MetaTokens], "_meta tokens: the whole result, exactly")
	assert.EqualValues(t, modelTokens(t, raw), out.Meta[mcpcore.MetaOriginalTokens], "_meta originalTokens: the whole original, exactly")
	blocks, structured, original := reach(t, s, got.Result, hardCap, rerun)
	assert.Equal(t, string(raw), string(original), "the whole result behind its link, byte for byte")
	if structured != nil {
		assert.Equal(t, string(in.Structured), string(structured), "the structured content rebuilt byte for byte")
		return got
	}
	assert.Empty(t, follow.SameBlocks(blocks, in.Content), "every block rebuilt, in its place")
	return got
}

func TestEveryHostileResultFitsAndIsRebuilt(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		s := newShaper(t, ctxfit.Config{Threshold: 1000, HardCap: 2000, Mode: mode})
		for _, c := range hostile.Cases() {
			t.Run(fmt.Sprintf("%s in %s mode", c.Tool, mode), func(t *testing.T) {
				got := checkResult(t, s, c.Result, 2000)
				assert.True(t, got.Shaped)
			})
		}
	}
}

func TestAHugeMetaIsHeldBackBehindALink(t *testing.T) {
	s := newShaper(t, ctxfit.Config{Threshold: 1000, HardCap: 2000})
	raw := hostile.Cases()[4].Result
	require.Contains(t, string(raw), "example/trace")
	got := checkResult(t, s, raw, 2000)
	var out struct {
		Meta map[string]any `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(got.Result, &out))
	uri, _ := out.Meta[mcpcore.MetaHeldMeta].(string)
	require.True(t, strings.HasPrefix(uri, mcpcore.ResourcePrefix), "the _meta is a link: %v", out.Meta)
	held, err := readWhole(t, s, uri, nil)
	require.NoError(t, err)
	var in struct {
		Meta json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(raw, &in))
	assert.Equal(t, string(in.Meta), string(held), "the tool's _meta, byte for byte")
}

func TestImagesKeepTheirPlaceAmongShapedTexts(t *testing.T) {
	s := newShaper(t, ctxfit.Config{Threshold: 4000, HardCap: 12000})
	r := rand.New(rand.NewPCG(3, 4))
	blocks := []string{
		`{"type":"text","text":` + mustQuote(strings.Repeat("page one of the report\n", 2000)) + `}`,
		hostile.Image(r, 200, 100),
		`{"type":"text","text":"caption"}`,
		hostile.Image(r, 100, 200),
		`{"type":"text","text":` + mustQuote(strings.Repeat("page two of the report\n", 2000)) + `}`,
	}
	raw := json.RawMessage(`{"content":[` + strings.Join(blocks, ",") + `]}`)
	got := checkResult(t, s, raw, 12000)
	var types []string
	for _, b := range content(t, got.Result) {
		if m, _ := b["_meta"].(map[string]any); m[mcpcore.MetaGuidance] == true || m[mcpcore.MetaOriginal] == true {
			continue
		}
		types = append(types, b["type"].(string))
	}
	assert.Equal(t, []string{"text", "image", "text", "image", "text"}, types, "no text joined, every image in its place")
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestGeneratedMultiBlockResultsKeepBothPromises(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 2026))
	n := 24
	if testing.Short() {
		n = 8 // under -race (test.sh); 24 without -race
	}
	for i := range n {
		raw := hostile.Generate(r, 40)
		th := 500 + r.IntN(4000)
		hc := th + r.IntN(8000)
		mode := []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay}[r.IntN(2)]
		t.Run(fmt.Sprintf("result %d of %d bytes, threshold %d, hard cap %d, %s mode", i, len(raw), th, hc, mode), func(t *testing.T) {
			s := newShaper(t, ctxfit.Config{Threshold: th, HardCap: hc, Mode: mode})
			checkResult(t, s, raw, hc)
		})
	}
}

// TestATimeOutAnswersValidResultsNeverAnError shapes generated results
// under a shaping time limit too short for anything (a nanosecond): each
// answer, after the gate, is a valid result within the hard cap, never an
// error, and following it rebuilds the original.
func TestATimeOutAnswersValidResultsNeverAnError(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 1))
	n := 16
	if testing.Short() {
		n = 4
	}
	for i := range n {
		raw := hostile.Generate(r, 40)
		th := 500 + r.IntN(4000)
		hc := th + r.IntN(8000)
		mode := []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay}[r.IntN(2)]
		t.Run(fmt.Sprintf("result %d of %d bytes, threshold %d, hard cap %d, %s mode", i, len(raw), th, hc, mode), func(t *testing.T) {
			s := newShaper(t, ctxfit.Config{Threshold: th, HardCap: hc, Mode: mode, ShapeTimeout: 1})
			got := checkResult(t, s, raw, hc)
			call := mcpcore.Call{Tool: "t", Arguments: json.RawMessage(`{}`), Subject: "subject"}
			out, err := s.Gate(context.Background(), call, raw, got.Result)
			require.NoError(t, err)
			assert.Equal(t, string(got.Result), string(out), "the gate passes what shaping answered")
		})
	}
}
