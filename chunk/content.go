package chunk

import (
	"encoding/json"
	"strings"

	"github.com/ctxfit/ctxfit/internal/jsonwire"
)

// Metadata locates a chunk in its text.
//
// Lines are numbered from 1. A line ends with '\n' (so "\r\n" ends a line
// and a lone '\r' does not); the '\n' belongs to the line it ends. A text
// has as many lines as '\n' bytes, plus one when it does not end with '\n'
// or is empty: "a\nb" and "a\nb\n" have two lines, "" has one.
//
// The zero Metadata is that of no chunk. Metadata is a plain value, safe to
// copy and share.
type Metadata struct {
	// StartLine is the line of the chunk's first byte.
	StartLine int `json:"startLine"`
	// EndLine is the line of the chunk's last byte (inclusive); StartLine
	// for an empty chunk.
	EndLine int `json:"endLine"`
	// TotalLines is the number of lines in the whole text.
	TotalLines int `json:"totalLines"`
	// BytesInChunk is len(Content).
	BytesInChunk int `json:"bytesInChunk"`
}

// ContentChunk is one chunk of a text and the cursor to the next: the data
// model's ContentChunk.
//
// It marshals as
//
//	{"content":"...","chunkIndex":N,"totalChunks":N,"nextCursor":"..."|null,"metadata":{"startLine":N,"endLine":N,"totalLines":N,"bytesInChunk":N}}
//
// with nextCursor null on the last chunk, and unmarshals from the same
// shape. The zero value is not a chunk of anything. A ContentChunk is a
// plain value, safe to copy and share.
type ContentChunk struct {
	// Content is the chunk's text, a substring of the whole text.
	Content string `json:"content"`
	// ChunkIndex is the number of this chunk, from 0.
	ChunkIndex int `json:"chunkIndex"`
	// TotalChunks is the number of chunks of the whole text.
	TotalChunks int `json:"totalChunks"`
	// NextCursor continues with the next chunk; "" on the last chunk, which
	// marshals as null.
	NextCursor string `json:"nextCursor"`
	// Metadata locates the chunk in the text.
	Metadata Metadata `json:"metadata"`
}

type wireChunk struct {
	Content     string   `json:"content"`
	ChunkIndex  int      `json:"chunkIndex"`
	TotalChunks int      `json:"totalChunks"`
	NextCursor  *string  `json:"nextCursor"`
	Metadata    Metadata `json:"metadata"`
}

// MarshalJSON writes the chunk in compact form, nextCursor null when empty.
func (c ContentChunk) MarshalJSON() ([]byte, error) {
	w := wireChunk{Content: c.Content, ChunkIndex: c.ChunkIndex, TotalChunks: c.TotalChunks, Metadata: c.Metadata}
	if c.NextCursor != "" {
		w.NextCursor = &c.NextCursor
	}
	return jsonwire.Marshal(w) // the same bytes on every toolchain
}

// UnmarshalJSON reads the shape MarshalJSON writes; a null nextCursor
// becomes "".
func (c *ContentChunk) UnmarshalJSON(b []byte) error {
	var w wireChunk
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = ContentChunk{Content: w.Content, ChunkIndex: w.ChunkIndex, TotalChunks: w.TotalChunks, Metadata: w.Metadata}
	if w.NextCursor != nil {
		c.NextCursor = *w.NextCursor
	}
	return nil
}

// TotalLines returns the number of lines of text (see [Metadata]).
func TotalLines(text string) int {
	n := strings.Count(text, "\n")
	if text == "" || text[len(text)-1] != '\n' {
		n++
	}
	return n
}

// metadata describes text[start:end]; total is TotalLines(text).
func metadata(text string, start, end, total int) Metadata {
	startLine := 1 + strings.Count(text[:start], "\n")
	endLine := startLine
	if end > start {
		endLine += strings.Count(text[start:end-1], "\n")
	}
	return Metadata{StartLine: startLine, EndLine: endLine, TotalLines: total, BytesInChunk: end - start}
}
