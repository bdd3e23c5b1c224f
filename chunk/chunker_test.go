package chunk_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// cursorValue matches a nextCursor string, which the golden files replace
// with a placeholder so that they do not depend on the cursor format.
var cursorValue = regexp.MustCompile(`"nextCursor":"[A-Za-z0-9_-]+"`)

// document is a small Markdown text of several chunks at 40 tokens.
var document = "# Guide\n\nThis guide explains the booking flow.\n\n## Search\n\nGuests search by city and date. Results are paged.\n\n" +
	"## Book\n\nA booking holds a room.\nIt expires after ten minutes.\n\n## Pay\n\nPayment confirms the booking. " +
	strings.Repeat("Refunds follow the policy of the property. ", 5) + "\n"

func TestChunkFollowsCursorsToTheEnd(t *testing.T) {
	counter := exactCounter(t)
	c := newChunker(t, nil, &chunk.Options{MaxTokens: 40})
	chunks := follow(t, c, document, docBinding)
	spans, err := c.Split(document)
	require.NoError(t, err)
	require.Len(t, chunks, len(spans))
	require.Greater(t, len(chunks), 2)

	var b strings.Builder
	for i, ch := range chunks {
		t.Run("chunk "+itoa(i)+" is the span the split gives, within the limit", func(t *testing.T) {
			assert.Equal(t, i, ch.ChunkIndex)
			assert.Equal(t, len(spans), ch.TotalChunks)
			assert.Equal(t, document[spans[i].Start:spans[i].End], ch.Content)
			assert.LessOrEqual(t, counter.Count(ch.Content), 40)
			assert.Equal(t, len(ch.Content), ch.Metadata.BytesInChunk)
			assert.Equal(t, i == len(chunks)-1, ch.NextCursor == "")
		})
		b.WriteString(ch.Content)
	}
	assert.Equal(t, document, b.String(), "the chunks reproduce the text byte for byte")
}

func TestChunkReturnsShortTextWhole(t *testing.T) {
	c := newChunker(t, nil, nil)
	ch, err := c.Chunk("A short answer.\nTwo lines.", "", docBinding)
	require.NoError(t, err)
	assert.Equal(t, chunk.ContentChunk{
		Content:     "A short answer.\nTwo lines.",
		TotalChunks: 1,
		Metadata:    chunk.Metadata{StartLine: 1, EndLine: 2, TotalLines: 2, BytesInChunk: 26},
	}, ch)
}

func TestChunkLineMetadata(t *testing.T) {
	text := "l1\nl2\nl3 is a longer line with words\nl4\r\nl5\n\nl7 last without newline"
	tests := []struct {
		name       string
		start, end int
		want       chunk.Metadata
	}{
		{"a chunk of whole lines ends on the line of its last newline", 0, 6, chunk.Metadata{StartLine: 1, EndLine: 2, TotalLines: 7, BytesInChunk: 6}},
		{"a chunk that ends mid-line ends on that line", 6, 9, chunk.Metadata{StartLine: 3, EndLine: 3, TotalLines: 7, BytesInChunk: 3}},
		{"a chunk that starts mid-line starts on that line", 9, 41, chunk.Metadata{StartLine: 3, EndLine: 4, TotalLines: 7, BytesInChunk: 32}},
		{"a blank line counts as a line", 41, len(text), chunk.Metadata{StartLine: 5, EndLine: 7, TotalLines: 7, BytesInChunk: len(text) - 41}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, chunk.MetadataOf(text, tt.start, tt.end))
		})
	}
	t.Run("total lines count a last line without newline", func(t *testing.T) {
		assert.Equal(t, 1, chunk.TotalLines(""))
		assert.Equal(t, 1, chunk.TotalLines("a"))
		assert.Equal(t, 1, chunk.TotalLines("a\n"))
		assert.Equal(t, 2, chunk.TotalLines("a\nb"))
		assert.Equal(t, 2, chunk.TotalLines("a\r\n\r\n"))
	})
}

func TestChunkRejectsBadCursors(t *testing.T) {
	clk := newClock()
	c := newChunker(t, clk, &chunk.Options{MaxTokens: 40})
	first, err := c.Chunk(document, "", docBinding)
	require.NoError(t, err)
	require.NotEmpty(t, first.NextCursor)
	next := first.NextCursor

	other, err := chunk.NewChunker(newCodec(t, clk, []byte("another-secret-another-secret-00")), &chunk.Options{MaxTokens: 40})
	require.NoError(t, err)
	foreign, err := other.Chunk(document, "", docBinding)
	require.NoError(t, err)

	tampered := []byte(next)
	mid := len(tampered) / 2
	tampered[mid] = map[bool]byte{true: 'A', false: 'B'}[tampered[mid] != 'A'] // still base64url, another byte

	tests := []struct {
		name    string
		chunker *chunk.Chunker
		text    string
		cursor  string
		binding cursor.Binding
		want    error
		msg     string
	}{
		{"a cursor that is not base64url is malformed", c, document, "not a cursor!", docBinding, cursor.ErrMalformed, "chunk: cursor: malformed"},
		{"a tampered cursor is invalid", c, document, string(tampered), docBinding, nil, "chunk: cursor: "},
		{"a cursor signed with another secret is invalid", c, document, foreign.NextCursor, docBinding, cursor.ErrInvalid, "chunk: cursor: invalid"},
		{"a cursor from another scope is a mismatch", c, document, next, cursor.Binding{Scope: "other_tool", Subject: "tenant-1"}, cursor.ErrMismatch, "another endpoint or tool"},
		{"a cursor from another subject is a mismatch", c, document, next, cursor.Binding{Scope: "read_file", Subject: "tenant-2"}, cursor.ErrMismatch, "another subject"},
		{"a cursor for another text is a mismatch", c, document + "changed", next, docBinding, cursor.ErrMismatch, "another text"},
		{"a cursor for another chunk size is a mismatch", newChunker(t, clk, &chunk.Options{MaxTokens: 50}), document, next, docBinding, cursor.ErrMismatch, "another chunk size"},
		{"a page cursor is a mismatch", c, document, pageCursor(t, clk), docBinding, cursor.ErrMismatch, "another kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.chunker.Chunk(tt.text, tt.cursor, tt.binding)
			require.Error(t, err)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
			} else {
				assert.True(t, errorIsAny(err, cursor.ErrMalformed, cursor.ErrInvalid), "got %v", err)
			}
			assert.Contains(t, err.Error(), tt.msg)
		})
	}

	t.Run("an expired cursor is rejected, without sleeping", func(t *testing.T) {
		clk.Advance(cursor.DefaultTTL + time.Hour)
		_, err := c.Chunk(document, next, docBinding)
		require.ErrorIs(t, err, cursor.ErrExpired)
		assert.Contains(t, err.Error(), "chunk: cursor: expired")
	})
}

func pageCursor(tb testing.TB, clk *clock) string {
	tb.Helper()
	tok, err := newCodec(tb, clk, nil).Encode(cursor.Payload{Kind: cursor.KindPage, Offset: 5, Index: 1, Scope: docBinding.Scope, Subject: docBinding.Subject})
	require.NoError(tb, err)
	return tok
}

func errorIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

func TestJSONShapeGolden(t *testing.T) {
	c := newChunker(t, nil, &chunk.Options{MaxTokens: 40})
	tests := []struct {
		name  string
		chunk func() (chunk.ContentChunk, error)
	}{
		{"first_chunk", func() (chunk.ContentChunk, error) { return c.Chunk(document, "", docBinding) }},
		{"whole_text", func() (chunk.ContentChunk, error) { return c.Chunk("Fits in one chunk.\n", "", docBinding) }},
		{"line_range", func() (chunk.ContentChunk, error) { return chunk.Lines(document, 3, 5) }},
	}
	for _, tt := range tests {
		t.Run("the "+tt.name+" matches its golden file", func(t *testing.T) {
			ch, err := tt.chunk()
			require.NoError(t, err)
			got, err := json.Marshal(ch)
			require.NoError(t, err)
			var back chunk.ContentChunk
			require.NoError(t, json.Unmarshal(got, &back))
			assert.Equal(t, ch, back, "the chunk unmarshals to itself")

			got = cursorValue.ReplaceAll(got, []byte(`"nextCursor":"<cursor>"`))
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", tt.name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -update to create the golden file")
			assert.Equal(t, string(want), string(got))
		})
	}
}

func TestChunkIsSafeForConcurrentUse(t *testing.T) {
	c := newChunker(t, nil, &chunk.Options{MaxTokens: 40})
	want := follow(t, c, document, docBinding)
	done := make(chan []chunk.ContentChunk)
	for range 4 {
		go func() {
			var got []chunk.ContentChunk
			cur := ""
			for {
				ch, err := c.Chunk(document, cur, docBinding)
				if err != nil {
					break
				}
				got = append(got, ch)
				if ch.NextCursor == "" {
					break
				}
				cur = ch.NextCursor
			}
			done <- got
		}()
	}
	for range 4 {
		assert.Equal(t, want, <-done)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestChunkCursorsCarryTheSnapshotReference(t *testing.T) {
	codec, err := cursor.NewCodec([][]byte{[]byte(strings.Repeat("k", 32))}, nil)
	require.NoError(t, err)
	c, err := chunk.NewChunker(codec, &chunk.Options{MaxTokens: 50})
	require.NoError(t, err)
	text := strings.Repeat("Every line of this log matters.\n", 100)
	b := cursor.Binding{Scope: "read_log", Snapshot: "snap-1"}

	first, err := c.Chunk(text, "", b)
	require.NoError(t, err)
	require.NotEmpty(t, first.NextCursor)
	p, err := codec.Decode(first.NextCursor, cursor.Binding{Kind: cursor.KindChunk, Scope: "read_log"})
	require.NoError(t, err)
	ref, _, _ := strings.Cut(p.Snapshot, " ")
	assert.Equal(t, "snap-1", ref, "the cursor's snapshot is the reference, then the text's fingerprint")

	_, err = c.Chunk(text, first.NextCursor, b)
	assert.NoError(t, err, "the same snapshot accepts the cursor")
	b.Snapshot = "snap-2"
	_, err = c.Chunk(text, first.NextCursor, b)
	assert.ErrorIs(t, err, cursor.ErrMismatch, "another snapshot rejects it")
}

func TestAChunkOfInvalidUTF8IsTheSameJSONOnEveryToolchain(t *testing.T) {
	b, err := json.Marshal(chunk.ContentChunk{Content: "a\xffb", TotalChunks: 1})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"content":"a\ufffdb"`, "Go 1.27's encoding/json would write U+FFFD itself")
}
