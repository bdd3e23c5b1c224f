// Package chunk cuts a large text into chunks that each fit a token limit,
// at the most meaningful boundary that fits, and hands back a signed cursor
// for the rest, so that nothing is lost: the chunks, concatenated, are the
// text byte for byte.
//
// A chunk is a [ContentChunk]:
//
//	{"content":"...","chunkIndex":0,"totalChunks":3,"nextCursor":"..."|null,
//	 "metadata":{"startLine":1,"endLine":40,"totalLines":120,"bytesInChunk":8012}}
//
// Lines are numbered from 1 and endLine is inclusive (see [Metadata]).
//
// # Chunkers
//
// A [Chunker] holds the cursor codec, the token counter, the limit and the
// kind of text. [Chunker.Chunk] returns the chunk a request asks for: the
// first one without a cursor, the next one with the nextCursor of the
// previous. Cursors carry the byte offset and the number of the next chunk,
// and are bound to a [cursor.Binding] (scope and subject, as in pagination) and
// to the text itself; tampered, expired and foreign cursors are rejected
// with errors wrapping the cursor package's sentinels.
//
// [Split] (or [Chunker.Split]) returns every chunk of a text as a [Span]
// without cursors, and [Lines] returns a range of lines (say, lines 100
// to 200) without splitting anything.
//
// # Boundaries
//
// A chunk ends at one of these boundaries, best first ([Level]): the end of
// the text, a Markdown section (before a heading line), a paragraph (after
// blank lines), a log entry (before a line that starts with a timestamp or
// a level; stack frames and other continuation lines stay with their
// entry), a line, a sentence, a word, a grapheme cluster, and a rune. The
// [Kind] of the text decides which levels apply ([Kind.Levels]): headings
// only for Markdown, log entries only for logs, sentences only for prose
// and Markdown. The kind is detected ([Detect]) unless [Options.Kind] says
// it. A chunk never splits a UTF-8 sequence, and splits a word only when
// the word alone is over the limit.
//
// From where a chunk starts, the splitter looks at the first boundary of
// each level in turn, best first, and takes the first level whose first
// boundary fits: the chunk will end at a boundary of that level or better.
// It then extends the chunk over as many segments of that level as fit. A
// chunk therefore never ends mid-line when a line boundary would have fit,
// nor mid-paragraph when a paragraph would have.
//
// # Exact counts without recounting
//
// Every chunk is within the limit by exact count: its token count is the
// counter's count of its content, and [Span.Tokens] reports it. Token counts
// are not additive across segments (tokens can merge across a boundary), so
// the splitter counts each segment once and sums the counts as an estimate,
// then verifies the chunk with one exact count of its content. When the
// chunk is over, it backs off to an earlier boundary of the same level (a
// binary search, each step one count); when the exact count leaves room, it
// goes on adding segments from the exact count. Counting stops early at the
// limit ([budget.CountUpTo]), so an oversized segment costs no more than a
// chunk's worth of counting. A text of N bytes costs about two to three
// counts of N bytes in all.
//
// With the exact counter, counts do add up at some boundaries: after a line
// feed, before printable ASCII other than '/', both encodings always end a
// pre-tokeniser piece. When every joint of a chunk (and the joint to the
// segment that did not fit) is such a line start, as in prose and logs, the
// estimate is the exact count and the verifying count is skipped: about one
// count of N bytes in all.
//
// # Concurrency
//
// A [Chunker] is safe for concurrent use; [Split] and [Lines] are pure
// functions.
package chunk
