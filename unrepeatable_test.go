package ctxfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
)

// counting is a handler that counts its runs.
type counting struct {
	runs int
	body []byte
}

func (c *counting) fetch(context.Context) (ctxfit.Response, error) {
	c.runs++
	return ctxfit.Response{Body: c.body, ContentType: "application/json"}, nil
}

func TestAnUnrepeatableHandlerNeverRunsAgainInReplayMode(t *testing.T) {
	h := &counting{body: bookings(t)}
	g, _ := newGuard(t, ctxfit.Config{Mode: ctxfit.ModeReplay})
	req := ctxfit.Request{Endpoint: "create_report", Path: "create_report", Unrepeatable: true}
	res, err := g.Handle(context.Background(), req, h.fetch)
	require.NoError(t, err)
	require.NotEmpty(t, res.Next)
	pages := 1
	for res.Next != "" {
		req.Cursor = res.Next
		res, err = g.Handle(context.Background(), req, h.fetch)
		require.NoError(t, err)
		pages++
	}
	assert.Greater(t, pages, 2)
	assert.Equal(t, 1, h.runs, "the continuations came from the store, not from running the handler again")

	// The same response, repeatable: replay runs the handler per page.
	h.runs = 0
	req = ctxfit.Request{Endpoint: "list", Path: "list"}
	res, err = g.Handle(context.Background(), req, h.fetch)
	require.NoError(t, err)
	req.Cursor = res.Next
	_, err = g.Handle(context.Background(), req, h.fetch)
	require.NoError(t, err)
	assert.Equal(t, 2, h.runs)
}

func TestAResponseThatCannotBeContinuedSaysSoWithinTheCap(t *testing.T) {
	body := bookings(t)
	for _, tc := range []struct {
		name   string
		cfg    ctxfit.Config
		req    ctxfit.Request
		advice bool // the note suggests repeating the request
	}{
		{"an unrepeatable handler and no room in the store",
			ctxfit.Config{Mode: ctxfit.ModeReplay, StoreMaxBytes: 1024},
			ctxfit.Request{Endpoint: "create_report", Unrepeatable: true}, false},
		{"arguments too large for a cursor and no room in the store",
			ctxfit.Config{Mode: ctxfit.ModeReplay, StoreMaxBytes: 1024},
			ctxfit.Request{Endpoint: "search", Filters: []byte(`{"q":"` + strings.Repeat("x", 5000) + `"}`)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := newGuard(t, tc.cfg)
			h := &counting{body: body}
			res, err := g.Handle(context.Background(), tc.req, h.fetch)
			require.NoError(t, err, "what fits is sent")
			assert.True(t, res.Shaped)
			assert.Empty(t, res.Next)
			assert.Empty(t, res.PartCursor)
			assert.LessOrEqual(t, exact.Count(string(res.Body)), g.Config().HardCap)
			assert.Contains(t, res.Guidance, "The rest cannot be continued")
			assert.Equal(t, tc.advice, strings.Contains(res.Guidance, "repeat the request"), res.Guidance)
		})
	}
}

// bytesCounter counts exactly and adds up the bytes it was asked to count.
type bytesCounter struct{ n atomic.Int64 }

func (c *bytesCounter) Count(text string) int {
	c.n.Add(int64(len(text)))
	return exact.Count(text)
}

func (c *bytesCounter) CountUpTo(text string, limit int) int {
	c.n.Add(int64(min(len(text), 16*(limit+1)))) // about what it reads: it stops past the limit
	return budget.CountUpTo(exact, text, limit)
}

func TestTheSameTextAskedForAgainCostsOnlyTheChunkItSends(t *testing.T) {
	text := []byte(strings.Repeat("2026-11-24T08:00:00Z INFO request served in 3 ms for /api/v1/bookings\n", 25_000)) // 1.75 MB, planned
	c := &bytesCounter{}
	// A test of what is counted, not of when: planning 1.75 MB under -race on
	// a loaded machine must not run into the shape timeout.
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Hour),
		AdmissionWait: ctxfit.Duration(time.Hour)}, Counter: c})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	handle := func(subject string) (ctxfit.Result, int64) {
		before := c.n.Load()
		res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "log", Subject: subject}, serve(text, "text/plain"))
		require.NoError(t, err)
		return res, c.n.Load() - before
	}
	first, counted := handle("alice")
	assert.GreaterOrEqual(t, counted, int64(len(text)), "the first response plans every chunk")
	again, counted := handle("bob")
	assert.Less(t, counted, int64(len(text)/5), "the plan is kept: the same text costs its first chunk")
	assert.Equal(t, string(first.Body[:200]), string(again.Body[:200]), "the same chunk")

	before := c.n.Load()
	req := ctxfit.Request{Endpoint: "log", Subject: "bob", Cursor: again.Next}
	next, err := g.Handle(context.Background(), req, serve(text, "text/plain"))
	require.NoError(t, err)
	assert.Less(t, c.n.Load()-before, int64(len(text)/5), "a continuation costs its chunk")
	assert.Contains(t, string(next.Body), `"chunkIndex":1,`)
}

// hugeLog returns a text log of at least n bytes, each line different.
func hugeLog(n int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2026-11-24T08:%02d:%02dZ INFO request %d served in %d ms for /api/v1/bookings\n", i/60%60, i%60, i, i%97)
	}
	return []byte(b.String())
}

func TestTheFirstChunkOfAHugeTextCostsOnlyTheChunk(t *testing.T) {
	text := hugeLog(4 << 20) // past planMaxBytes
	c := &bytesCounter{}
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Hour),
		AdmissionWait: ctxfit.Duration(time.Hour)}, Counter: c})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	cur := ""
	for i := range 2 {
		before := c.n.Load()
		res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "log", Cursor: cur}, serve(text, "text/plain"))
		require.NoError(t, err)
		assert.Less(t, c.n.Load()-before, int64(len(text)/10), "chunk %d costs the chunk, not the text", i)
		require.NotEmpty(t, res.Next)
		cur = res.Next
	}
}

func TestTheChunksOfAnUnplannedTextAreTheText(t *testing.T) {
	if testing.Short() {
		t.Skip("walks 2 MB in chunks (about 10 s under -race)")
	}
	text := hugeLog(2<<20 + 100_000) // past planMaxBytes
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Hour),
		AdmissionWait: ctxfit.Duration(time.Hour), Threshold: 30_000, HardCap: 60_000, ChunkTokens: 40_000}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	var got []byte
	cur := ""
	for i := 0; ; i++ {
		res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "log", Cursor: cur}, serve(text, "text/plain"))
		require.NoError(t, err)
		var ch struct {
			Content     string `json:"content"`
			ChunkIndex  int    `json:"chunkIndex"`
			TotalChunks int    `json:"totalChunks"`
			Metadata    struct {
				TotalLines int `json:"totalLines"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(res.Body, &ch))
		require.Equal(t, i, ch.ChunkIndex)
		require.Equal(t, strings.Count(string(text), "\n"), ch.Metadata.TotalLines, "the lines are exact")
		got = append(got, ch.Content...)
		if res.Next == "" {
			assert.Equal(t, i+1, ch.TotalChunks, "the last chunk says how many there were")
			break
		}
		require.Greater(t, ch.TotalChunks, i+1, "while a cursor follows, at least one more chunk is announced")
		cur = res.Next
	}
	assert.Equal(t, string(text), string(got), "the chunks in order are the text")
}
