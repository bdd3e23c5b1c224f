package chunk_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/chunk"
)

// numbered returns n lines "line 1\n" ... "line n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestLines(t *testing.T) {
	big := numbered(1000)
	tests := []struct {
		name       string
		text       string
		start, end int
		want       string
		wantMeta   chunk.Metadata
	}{
		{"lines 100 to 200 of a large text come back with their newlines", big, 100, 200, strings.Join(strings.SplitAfter(big, "\n")[99:200], ""),
			chunk.Metadata{StartLine: 100, EndLine: 200, TotalLines: 1000, BytesInChunk: len(strings.Join(strings.SplitAfter(big, "\n")[99:200], ""))}},
		{"one line is a range", big, 7, 7, "line 7\n", chunk.Metadata{StartLine: 7, EndLine: 7, TotalLines: 1000, BytesInChunk: 7}},
		{"an end beyond the last line stops at the last line", "a\nb\nc", 2, 99, "b\nc", chunk.Metadata{StartLine: 2, EndLine: 3, TotalLines: 3, BytesInChunk: 3}},
		{"the last line without newline is a line", "a\nb\nc", 3, 3, "c", chunk.Metadata{StartLine: 3, EndLine: 3, TotalLines: 3, BytesInChunk: 1}},
		{"CRLF line endings stay with their lines", "a\r\nb\r\nc\r\n", 2, 3, "b\r\nc\r\n", chunk.Metadata{StartLine: 2, EndLine: 3, TotalLines: 3, BytesInChunk: 6}},
		{"a blank line is a line", "a\n\nb\n", 2, 2, "\n", chunk.Metadata{StartLine: 2, EndLine: 2, TotalLines: 3, BytesInChunk: 1}},
		{"the empty text has one empty line", "", 1, 1, "", chunk.Metadata{StartLine: 1, EndLine: 1, TotalLines: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chunk.Lines(tt.text, tt.start, tt.end)
			require.NoError(t, err)
			assert.Equal(t, chunk.ContentChunk{Content: tt.want, TotalChunks: 1, Metadata: tt.wantMeta}, got)
		})
	}
}

func TestLinesRejectsBadRanges(t *testing.T) {
	text := numbered(10)
	tests := []struct {
		name       string
		text       string
		start, end int
		msg        string
	}{
		{"a start below 1 is rejected", text, 0, 5, "chunk: startLine 0 must be at least 1 (lines are numbered from 1); the text has 10 lines: ask for lines 1 to 10"},
		{"an end before the start is rejected", text, 5, 4, "chunk: endLine 4 is before startLine 5; the text has 10 lines: ask for lines 1 to 10"},
		{"a start beyond the last line is rejected", text, 11, 20, "chunk: startLine 11 is beyond the end; the text has 10 lines: ask for lines 1 to 10"},
		{"a start beyond the end of a text without final newline is rejected", "a\nb", 3, 3, "chunk: startLine 3 is beyond the end; the text has 2 lines: ask for lines 1 to 2"},
		{"line 2 of the empty text is rejected", "", 2, 2, "chunk: startLine 2 is beyond the end; the text has 1 line: ask for line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chunk.Lines(tt.text, tt.start, tt.end)
			require.ErrorIs(t, err, chunk.ErrLineRange)
			var lre *chunk.LineRangeError
			require.ErrorAs(t, err, &lre)
			assert.Equal(t, chunk.TotalLines(tt.text), lre.TotalLines)
			assert.EqualError(t, err, tt.msg)
		})
	}
}
