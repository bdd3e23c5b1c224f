package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// demoChunk cuts a generated 10,000-line log into chunks, follows every
// continuation cursor and checks that the chunks put together give the log
// back byte for byte.
func demoChunk(w io.Writer, counter budget.Counter, codec *cursor.Codec, maxTokens int) error {
	log := corpus.Log(10000)
	c, err := chunk.NewChunker(codec, &chunk.Options{Counter: counter, MaxTokens: maxTokens})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== Chunks: a 10,000-line log\n\n")
	fmt.Fprintf(w, "GET /api/v1/logs/app.log returns %d bytes, %d tokens; kind detected: %s.\n",
		len(log), counter.Count(log), chunk.Detect(log))
	b := cursor.Binding{Scope: "GET /api/v1/logs/{name}"}
	var got strings.Builder
	largest, chunks := 0, 0
	var cur string
	for {
		ch, err := c.Chunk(log, cur, b)
		if err != nil {
			return fmt.Errorf("chunk %d: %w", chunks, err)
		}
		tokens := counter.Count(ch.Content)
		largest = max(largest, tokens)
		if chunks < 3 || ch.NextCursor == "" {
			last := strings.TrimRight(ch.Content, "\n")
			last = last[strings.LastIndexByte(last, '\n')+1:]
			fmt.Fprintf(w, "  chunk %3d/%d  lines %5d-%-5d  %4d tokens  ends with: %.60s\n",
				ch.ChunkIndex+1, ch.TotalChunks, ch.Metadata.StartLine, ch.Metadata.EndLine, tokens, last)
		} else if chunks == 3 {
			fmt.Fprintln(w, "  ...")
		}
		got.WriteString(ch.Content)
		chunks++
		if ch.NextCursor == "" {
			break
		}
		cur = ch.NextCursor
	}
	same := got.String() == log
	fmt.Fprintf(w, "Followed %d cursors: the chunks put together are the log byte for byte: %v.\n", chunks-1, same)
	fmt.Fprintf(w, "Largest chunk: %d tokens (limit %d); no chunk ends inside a log entry or its stack trace.\n", largest, maxTokens)
	if !same {
		return fmt.Errorf("chunks lost data: %d bytes recovered of %d", got.Len(), len(log))
	}
	lines, err := chunk.Lines(log, 100, 102)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Lines 100-102 (startLine=100&endLine=102):\n%s", indent(lines.Content))
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
