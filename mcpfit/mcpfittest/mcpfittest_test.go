package mcpfittest_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// recorder is a testing.TB that records failures instead of reporting them.
// FailNow ends the calling goroutine, as testing.T's does, so a helper is
// run on a recorder with [run]. Only the methods the helpers and testify
// call are implemented: the embedded nil TB makes any other call panic.
type recorder struct {
	testing.TB

	mu       sync.Mutex
	failed   bool
	messages []string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.messages = append(r.messages, fmt.Sprintf(format, args...))
}

func (r *recorder) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.Errorf("%s", fmt.Sprint(args...))
	r.FailNow()
}

// outcome is what a helper did on a recorder.
type outcome struct {
	failed   bool // the helper reported a failure
	returned bool // the helper returned (no FailNow)
	log      string
}

// run calls f with a recorder on its own goroutine and waits for it to
// return or to stop at FailNow.
func run(f func(t testing.TB)) outcome {
	r := &recorder{}
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
		returned = true
	}()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return outcome{failed: r.failed, returned: returned, log: strings.Join(r.messages, "\n")}
}

// assertStopped checks that a helper failed the test and stopped it
// (FailNow), saying log.
func assertStopped(t *testing.T, got outcome, log string) {
	t.Helper()
	assert.True(t, got.failed, "the helper did not fail the test")
	assert.False(t, got.returned, "the helper did not stop the test")
	assert.Contains(t, got.log, log)
}

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func result(texts ...string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	for _, s := range texts {
		res.Content = append(res.Content, text(s))
	}
	return res
}

func TestCountIsTheExactO200KBaseCount(t *testing.T) {
	cl100k, err := budget.Exact(budget.CL100KBase)
	require.NoError(t, err)
	tests := []struct {
		name string
		text string
		want int
	}{
		{"empty text has no tokens", "", 0},
		{"two English words are two tokens", "hello world", 2},
		{"a newline is a token of its own", "hello\nworld", 3},
		{"Japanese is counted by o200k_base, not cl100k_base", "こんにちは世界", 2},
		{"Russian is counted by o200k_base, not cl100k_base", "Привет мир, как дела?", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mcpfittest.Count(tt.text))
		})
	}
	// The last two cases would pass with the wrong encoding otherwise.
	require.NotEqual(t, 2, cl100k.Count("こんにちは世界"))
	require.NotEqual(t, 7, cl100k.Count("Привет мир, как дела?"))
}

func TestTokensCountsTheTextBlocksJoinedByNewlines(t *testing.T) {
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want int
	}{
		{"a result without content has no tokens", &mcp.CallToolResult{}, 0},
		{"one block is counted alone", result("hello world"), 2},
		// "hello\nworld" is 3 tokens; "helloworld" or a sum per block is 2.
		{"two blocks are counted with the newline between them", result("hello", "world"), 3},
		{"an empty block still adds its newline", result("hello", "", "world"), mcpfittest.Count("hello\n\nworld")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mcpfittest.Tokens(t, tt.res))
		})
	}
}

func TestTextsReturnsTheTextBlocksInOrder(t *testing.T) {
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want []string
	}{
		{"a result without content has no texts", &mcp.CallToolResult{}, nil},
		{"an empty content list has no texts", &mcp.CallToolResult{Content: []mcp.Content{}}, nil},
		{"one block is returned as is", result(`{"items":[]}`), []string{`{"items":[]}`}},
		{"blocks keep their order, duplicates and empty ones", result("b", "a", "", "a"), []string{"b", "a", "", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mcpfittest.Texts(t, tt.res))
		})
	}
}

func TestTextsFailsOnContentThatIsNotText(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		text("body"),
		&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"},
	}}
	got := run(func(t testing.TB) { mcpfittest.Texts(t, res) })
	assertStopped(t, got, "*mcp.ImageContent is not text")
}

func TestNextCursorReadsTheCursorFromMeta(t *testing.T) {
	tests := []struct {
		name string
		meta mcp.Meta
		want string
	}{
		{"a result without _meta has no cursor", nil, ""},
		{"an empty _meta has no cursor", mcp.Meta{}, ""},
		{"other _meta keys are not a cursor", mcp.Meta{"cursor": "x", "nextCursor": "y", mcpcore.MetaStrategy: "pagination"}, ""},
		{"a cursor that is not a string is no cursor", mcp.Meta{mcpcore.MetaNextCursor: 42}, ""},
		{"an empty cursor is no cursor", mcp.Meta{mcpcore.MetaNextCursor: ""}, ""},
		{"the cursor is returned as is", mcp.Meta{mcpcore.MetaNextCursor: "v1.abc-_=", mcpcore.MetaStrategy: "chunk"}, "v1.abc-_="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := result("body")
			res.Meta = tt.meta
			assert.Equal(t, tt.want, mcpfittest.NextCursor(res))
		})
	}
}

func TestBodiesReturnsTheFirstTextBlockOfEachResult(t *testing.T) {
	tests := []struct {
		name    string
		results []*mcp.CallToolResult
		want    []string
	}{
		{"no results have no bodies", nil, []string{}},
		{"a result without a guidance line is its body", []*mcp.CallToolResult{result("only")}, []string{"only"}},
		{
			"the guidance lines are dropped and the order is kept",
			[]*mcp.CallToolResult{result("page 2", "call next"), result("page 1", "call next"), result("page 2")},
			[]string{"page 2", "page 1", "page 2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mcpfittest.Bodies(t, tt.results))
		})
	}
}

func TestBodiesFailsOnAResultWithoutTextBody(t *testing.T) {
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		log  string
	}{
		{"a result without content fails", &mcp.CallToolResult{}, "result 1 has no content"},
		{"a result whose body is an image fails", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png"}}}, "is not text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(func(t testing.TB) { mcpfittest.Bodies(t, []*mcp.CallToolResult{result("page 1"), tt.res}) })
			assertStopped(t, got, tt.log)
		})
	}
}

func TestJoinItemsConcatenatesThePagesByteForByte(t *testing.T) {
	tests := []struct {
		name   string
		bodies []string
		key    string
		want   string
	}{
		{"no pages join to an empty array", nil, "items", "[]"},
		{"empty pages join to an empty array", []string{`{"items":[]}`, `{"items":[]}`}, "items", "[]"},
		{"one page is its array", []string{`{"items":[1,2,3],"next":"c"}`}, "items", "[1,2,3]"},
		{
			"pages keep their order, an empty page in the middle adds nothing",
			[]string{`{"items":[3,1]}`, `{"items":[]}`, `{"items":[2]}`},
			"items", "[3,1,2]",
		},
		{
			"duplicates across pages are kept, so a comparison catches them",
			[]string{`{"items":[{"id":"a"},{"id":"b"}]}`, `{"items":[{"id":"b"},{"id":"c"}]}`},
			"items", `[{"id":"a"},{"id":"b"},{"id":"b"},{"id":"c"}]`,
		},
		{
			"items keep their bytes: key order, spacing, number forms and escapes",
			[]string{`{"items": [ {"z":1.50, "a":"\u00e9"} , 1e3 ]}`, `{"items":["<\/b>",null,-0]}`},
			"items", `[{"z":1.50, "a":"\u00e9"},1e3,"<\/b>",null,-0]`,
		},
		{
			"only the array at key is joined",
			[]string{`{"items":["x"],"results":[1]}`, `{"results":[2,3],"items":["y"]}`},
			"results", "[1,2,3]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mcpfittest.JoinItems(t, tt.bodies, tt.key))
		})
	}
}

func TestJoinItemsFailsOnAPageWithoutTheArray(t *testing.T) {
	tests := []struct {
		name string
		body string
		log  string
	}{
		{"malformed JSON fails", `{"items":[1,`, "unexpected end of JSON input"},
		{"a body that is not an object fails", `[1,2]`, "cannot unmarshal array"},
		{"a page without the key fails", `{"results":[1]}`, `page has no "items" array`},
		{"a key that holds an object fails", `{"items":{"a":1}}`, `page has no "items" array`},
		{"a key that holds a string fails", `{"items":"[1]"}`, `page has no "items" array`},
		{"a key that holds null fails", `{"items":null}`, `page has no "items" array (null or missing)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(func(t testing.TB) { mcpfittest.JoinItems(t, []string{`{"items":[0]}`, tt.body}, "items") })
			assertStopped(t, got, tt.log)
		})
	}
}

func TestJoinChunksReproducesTheTextByteForByte(t *testing.T) {
	tests := []struct {
		name   string
		bodies []string
		want   string
	}{
		{"no chunks join to an empty text", nil, ""},
		{"one chunk is its content", []string{`{"content":"line 1\n","chunk":1,"of":1}`}, "line 1\n"},
		{
			"chunks are joined in order without a separator",
			[]string{`{"content":"ab"}`, `{"content":"c\nd"}`, `{"content":"\n"}`},
			"abc\nd\n",
		},
		{"an empty chunk adds nothing", []string{`{"content":"a"}`, `{"content":""}`, `{"content":"b"}`}, "ab"},
		{
			"escapes are decoded: quotes, tabs, unicode and surrogate pairs",
			[]string{`{"content":"say \"hi\"\t"}`, `{"content":"caf\u00e9 \ud83d\ude00"}`, `{"content":"日本"}`},
			"say \"hi\"\tcafé 😀日本",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mcpfittest.JoinChunks(t, tt.bodies))
		})
	}
}

func TestJoinChunksFailsOnABodyThatIsNotAChunk(t *testing.T) {
	tests := []struct {
		name string
		body string
		log  string
	}{
		{"malformed JSON fails", `{"content":"a`, "unexpected end of JSON input"},
		{"a body without content fails", `{"items":[]}`, "body 1 is not a chunk"},
		{"a null content fails", `{"content":null}`, "body 1 is not a chunk"},
		{"a content that is not a string fails", `{"content":42}`, "cannot unmarshal number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(func(t testing.TB) { mcpfittest.JoinChunks(t, []string{`{"content":"a"}`, tt.body}) })
			assertStopped(t, got, tt.log)
		})
	}
}

// pager is an in-memory MCP server with a tool "pages" that returns page 0
// of pages and a continuation tool (mcpcore.DefaultNextTool) that returns
// the page its cursor names. Every page but the last has a cursor.
type pager struct {
	pages   int  // pages <= 0 means endless
	isError bool // "pages" returns an error result

	mu      sync.Mutex
	cursors []string // the cursors the continuation tool received
}

type pagesInput struct {
	Prefix string `json:"prefix,omitempty"`
}

type nextInput struct {
	Cursor string `json:"cursor"`
}

func (p *pager) page(prefix string, n int) *mcp.CallToolResult {
	res := result(fmt.Sprintf("%spage %d", prefix, n), "call ctxfit_next for more")
	if p.pages <= 0 || n+1 < p.pages {
		res.Meta = mcp.Meta{mcpcore.MetaNextCursor: prefix + "|" + strconv.Itoa(n+1)}
	}
	return res
}

// connect serves p in memory and returns a client session on it.
func (p *pager) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "pager", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "pages"}, func(_ context.Context, _ *mcp.CallToolRequest, in pagesInput) (*mcp.CallToolResult, any, error) {
		if p.isError {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text("no pages today")}}, nil, nil
		}
		return p.page(in.Prefix, 0), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: mcpcore.DefaultNextTool}, func(_ context.Context, _ *mcp.CallToolRequest, in nextInput) (*mcp.CallToolResult, any, error) {
		p.mu.Lock()
		p.cursors = append(p.cursors, in.Cursor)
		p.mu.Unlock()
		prefix, n, ok := strings.Cut(in.Cursor, "|")
		if !ok {
			return nil, nil, fmt.Errorf("bad cursor %q", in.Cursor)
		}
		i, err := strconv.Atoi(n)
		if err != nil {
			return nil, nil, err
		}
		return p.page(prefix, i), nil, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func (p *pager) received() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cursors...)
}

func TestCallReturnsTheToolResult(t *testing.T) {
	cs := (&pager{pages: 2}).connect(t)
	res := mcpfittest.Call(t, cs, "pages", map[string]any{"prefix": "a/"})
	assert.Equal(t, []string{"a/page 0", "call ctxfit_next for more"}, mcpfittest.Texts(t, res))
	assert.Equal(t, "a/|1", mcpfittest.NextCursor(res))
	assert.False(t, res.IsError)
}

func TestCallFailsWhenTheCallFails(t *testing.T) {
	cs := (&pager{pages: 2}).connect(t)
	got := run(func(t testing.TB) { mcpfittest.Call(t, cs, "no_such_tool", nil) })
	assertStopped(t, got, "no_such_tool")
}

func TestFollowCallsTheContinuationToolUntilTheEnd(t *testing.T) {
	tests := []struct {
		name        string
		pages       int
		wantBodies  []string
		wantCursors []string
	}{
		{"a result without a cursor is the only one", 1, []string{"page 0"}, nil},
		{"every cursor is followed in order", 3, []string{"page 0", "page 1", "page 2"}, []string{"|1", "|2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pager{pages: tt.pages}
			results := mcpfittest.Follow(t, p.connect(t), "pages", nil, 100)
			assert.Equal(t, tt.wantBodies, mcpfittest.Bodies(t, results))
			assert.Equal(t, tt.wantCursors, p.received())
			assert.Empty(t, mcpfittest.NextCursor(results[len(results)-1]))
		})
	}
}

func TestFollowChecksEveryResult(t *testing.T) {
	t.Run("an error result fails the test", func(t *testing.T) {
		cs := (&pager{pages: 3, isError: true}).connect(t)
		got := run(func(t testing.TB) { mcpfittest.Follow(t, cs, "pages", nil, 100) })
		assertStopped(t, got, "no pages today")
	})
	t.Run("a result over the hard cap fails the test but the pages are still followed", func(t *testing.T) {
		p := &pager{pages: 3}
		cs := p.connect(t)
		// A page reads "page N\ncall ctxfit_next for more".
		tokens := mcpfittest.Tokens(t, mcpfittest.Call(t, cs, "pages", nil))
		require.Positive(t, tokens)
		var results []*mcp.CallToolResult
		got := run(func(t testing.TB) { results = mcpfittest.Follow(t, cs, "pages", nil, tokens-1) })
		assert.True(t, got.failed)
		assert.True(t, got.returned)
		assert.Contains(t, got.log, "a result exceeds the hard cap")
		assert.Len(t, results, 3)
	})
	t.Run("a result at the hard cap passes", func(t *testing.T) {
		cs := (&pager{pages: 3}).connect(t)
		tokens := mcpfittest.Tokens(t, mcpfittest.Call(t, cs, "pages", nil))
		got := run(func(t testing.TB) { mcpfittest.Follow(t, cs, "pages", nil, tokens) })
		assert.False(t, got.failed, got.log)
		assert.True(t, got.returned)
	})
	t.Run("endless cursors fail the test", func(t *testing.T) {
		if testing.Short() {
			t.Skip("makes two thousand calls")
		}
		p := &pager{pages: 0}
		cs := p.connect(t)
		got := run(func(t testing.TB) { mcpfittest.Follow(t, cs, "pages", nil, 100) })
		assertStopped(t, got, "too many continuations")
		assert.NotEmpty(t, p.received())
	})
}

func TestSessionBindsTheHelpersToATest(t *testing.T) {
	s := mcpfittest.Session{T: t, CS: (&pager{pages: 3}).connect(t)}
	assert.Equal(t, "x/|1", mcpfittest.NextCursor(s.Call("pages", map[string]any{"prefix": "x/"})))
	assert.Equal(t, []string{"y/page 0", "y/page 1", "y/page 2"}, s.Follow("pages", map[string]any{"prefix": "y/"}, 100))
}
