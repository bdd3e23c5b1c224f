package chunk_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
)

// exampleCodec returns a codec with a fixed clock, so that the examples'
// cursors do not depend on the time they run. Real servers use a secret from
// crypto/rand or a secret store, and the default clock.
func exampleCodec() *cursor.Codec {
	secret := []byte("example-secret-example-secret-00") // 32 bytes
	now := func() time.Time { return time.Date(2025, 10, 15, 12, 0, 0, 0, time.UTC) }
	codec, err := cursor.NewCodec([][]byte{secret}, &cursor.Options{Now: now})
	if err != nil {
		panic(err)
	}
	return codec
}

func ExampleNewChunker() {
	chunker, err := chunk.NewChunker(exampleCodec(), &chunk.Options{MaxTokens: 24})
	if err != nil {
		panic(err)
	}
	doc := "# Install\n\nRun the installer and follow the prompts.\n\n" +
		"# Configure\n\nSet the API key. Then restart the service so that it reads the new key.\n\n" +
		"# Use\n\nCall the endpoint.\n"
	binding := cursor.Binding{Scope: "read_doc", Subject: "tenant-42"}

	// The client asks for the first chunk and follows nextCursor.
	cur := ""
	for {
		ch, err := chunker.Chunk(doc, cur, binding)
		if err != nil {
			panic(err)
		}
		fmt.Printf("chunk %d/%d, lines %d-%d of %d: %q, cursor given: %t\n",
			ch.ChunkIndex+1, ch.TotalChunks, ch.Metadata.StartLine, ch.Metadata.EndLine, ch.Metadata.TotalLines,
			ch.Content, ch.NextCursor != "")
		if ch.NextCursor == "" {
			break
		}
		cur = ch.NextCursor
	}

	// A cursor for another tool is refused.
	first, _ := chunker.Chunk(doc, "", binding)
	_, err = chunker.Chunk(doc, first.NextCursor, cursor.Binding{Scope: "read_other"})
	fmt.Println(errors.Is(err, cursor.ErrMismatch))
	// Output:
	// chunk 1/3, lines 1-4 of 11: "# Install\n\nRun the installer and follow the prompts.\n\n", cursor given: true
	// chunk 2/3, lines 5-8 of 11: "# Configure\n\nSet the API key. Then restart the service so that it reads the new key.\n\n", cursor given: true
	// chunk 3/3, lines 9-11 of 11: "# Use\n\nCall the endpoint.\n", cursor given: false
	// true
}

func ExampleChunker_Chunk() {
	chunker, err := chunk.NewChunker(exampleCodec(), nil)
	if err != nil {
		panic(err)
	}
	// A text within the limit (2,000 tokens by default) comes back whole.
	ch, err := chunker.Chunk("2026-01-02T15:04:05Z INFO ready\n", "", cursor.Binding{Scope: "tail_log"})
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(ch)
	fmt.Println(string(b))
	// Output:
	// {"content":"2026-01-02T15:04:05Z INFO ready\n","chunkIndex":0,"totalChunks":1,"nextCursor":null,"metadata":{"startLine":1,"endLine":1,"totalLines":1,"bytesInChunk":32}}
}

func ExampleSplit() {
	log := "2026-01-02T15:04:05Z INFO start\n" +
		"2026-01-02T15:04:06Z ERROR request failed\n" +
		"\tat com.example.Server.handle(Server.java:42)\n" +
		"Caused by: java.io.IOException: broken pipe\n" +
		"2026-01-02T15:04:07Z INFO retry ok\n"
	spans, err := chunk.Split(log, &chunk.Options{MaxTokens: 40})
	if err != nil {
		panic(err)
	}
	fmt.Println("kind:", chunk.Detect(log))
	for _, s := range spans {
		fmt.Printf("%d tokens, ends at %s: %q\n", s.Tokens, s.Level, log[s.Start:s.End])
	}
	// Output:
	// kind: log
	// 16 tokens, ends at entry: "2026-01-02T15:04:05Z INFO start\n"
	// 38 tokens, ends at entry: "2026-01-02T15:04:06Z ERROR request failed\n\tat com.example.Server.handle(Server.java:42)\nCaused by: java.io.IOException: broken pipe\n"
	// 17 tokens, ends at end: "2026-01-02T15:04:07Z INFO retry ok\n"
}

func ExampleLines() {
	var text strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&text, "line %d\n", i)
	}
	ch, err := chunk.Lines(text.String(), 100, 102)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q %+v\n", ch.Content, ch.Metadata)

	_, err = chunk.Lines(text.String(), 301, 400)
	fmt.Println(err)
	// Output:
	// "line 100\nline 101\nline 102\n" {StartLine:100 EndLine:102 TotalLines:300 BytesInChunk:27}
	// chunk: startLine 301 is beyond the end; the text has 300 lines: ask for lines 1 to 300
}

func ExampleDetect() {
	fmt.Println(chunk.Detect("# Title\n\nSome prose.\n"))
	fmt.Println(chunk.Detect("{\"id\":1}\n{\"id\":2}\n"))
	fmt.Println(chunk.Detect("[ERROR] boom\n\tat x.y(Z.java:1)\n"))
	// Output:
	// markdown
	// jsonl
	// log
}
