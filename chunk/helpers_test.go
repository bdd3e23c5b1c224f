package chunk_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/testing/fakeclock"
)

// testSecret is a fixed 32-byte key; tests never use it for anything else.
var testSecret = []byte("chunk-test-secret-00000000000000")

// epoch is the start time of every test clock.
var epoch = time.Date(2025, 10, 15, 12, 0, 0, 0, time.UTC)

// clock is a settable time source for cursor.Options.Now.
type clock = fakeclock.Clock

func newClock() *clock { return fakeclock.New(epoch) }

func newCodec(tb testing.TB, clk *clock, secret []byte) *cursor.Codec {
	tb.Helper()
	if clk == nil {
		clk = newClock()
	}
	if secret == nil {
		secret = testSecret
	}
	c, err := cursor.NewCodec([][]byte{secret}, &cursor.Options{Now: clk.Now})
	require.NoError(tb, err)
	return c
}

func newChunker(tb testing.TB, clk *clock, opts *chunk.Options) *chunk.Chunker {
	tb.Helper()
	c, err := chunk.NewChunker(newCodec(tb, clk, nil), opts)
	require.NoError(tb, err)
	return c
}

func exactCounter(tb testing.TB) budget.Counter {
	tb.Helper()
	c, err := budget.Exact(budget.O200KBase)
	require.NoError(tb, err)
	return c
}

var docBinding = cursor.Binding{Scope: "read_file", Subject: "tenant-1"}

// follow requests the first chunk and follows nextCursor to the last,
// returning every chunk.
func follow(tb testing.TB, c *chunk.Chunker, text string, b cursor.Binding) []chunk.ContentChunk {
	tb.Helper()
	var out []chunk.ContentChunk
	cur := ""
	for i := 0; ; i++ {
		ch, err := c.Chunk(text, cur, b)
		require.NoError(tb, err, "chunk %d", i)
		out = append(out, ch)
		if ch.NextCursor == "" {
			return out
		}
		require.Less(tb, i, len(text)+1, "chunking does not end")
		cur = ch.NextCursor
	}
}

// joined concatenates the spans' contents.
func joined(text string, spans []chunk.Span) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(text[s.Start:s.End])
	}
	return b.String()
}
