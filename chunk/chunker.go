package chunk

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/cursor"
)

// sealed is what a cursor's Snapshot field holds: the binding's snapshot
// reference and the text's fingerprint.
func sealed(b cursor.Binding, fp string) string { return b.Snapshot + " " + fp }

// Chunker cuts texts into chunks within a token limit and issues and checks
// the cursors that lead from one chunk to the next.
//
// A Chunker is immutable after [NewChunker] and safe for concurrent use by
// multiple goroutines. The zero value is not usable; create one with
// NewChunker.
type Chunker struct {
	codec *cursor.Codec
	cfg   config
	tag   string // the counter's identity in cursors
}

// NewChunker returns a Chunker that seals cursors with codec. opts is
// copied; nil means the defaults. It fails when codec is nil or an option is
// out of range, with an error that names the field.
func NewChunker(codec *cursor.Codec, opts *Options) (*Chunker, error) {
	if codec == nil {
		return nil, errors.New("chunk: NewChunker needs a cursor codec; create one with cursor.NewCodec")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	tag := "custom"
	if ec, ok := cfg.counter.(*budget.ExactCounter); ok {
		tag = ec.Encoding()
	}
	return &Chunker{codec: codec, cfg: cfg, tag: tag}, nil
}

// MaxTokens returns the largest number of tokens in a chunk.
func (c *Chunker) MaxTokens() int { return c.cfg.limit }

// Split returns the chunks of text, in order, as [Split] does with the
// Chunker's options.
func (c *Chunker) Split(text string) ([]Span, error) {
	return c.cfg.split(text, c.cfg.kindOf(text))
}

// Chunk returns the chunk of text that cur asks for, bound to b.
//
// With cur == "" it returns the first chunk: it splits the whole text to
// count the chunks. With a cursor it returns the chunk the cursor leads to,
// provided the cursor was issued by c's codec for the same b, the same text
// (its length and CRC-32C), the same kind, limit and counter, and has not
// expired; it then cuts only that chunk, so following every cursor of a
// text costs about one split of it. A text within the limit comes back
// whole, with no cursor.
//
// Errors wrap a cursor sentinel ([cursor.ErrMalformed], [cursor.ErrInvalid],
// [cursor.ErrExpired], or [cursor.ErrMismatch] for a cursor issued for
// another binding or another text), or [ErrUnsplittable].
func (c *Chunker) Chunk(text, cur string, b cursor.Binding) (ContentChunk, error) {
	kind := c.cfg.kindOf(text)
	fp := c.fingerprint(text, kind)
	var span Span
	var index, total int
	if cur == "" {
		spans, err := c.cfg.split(text, kind)
		if err != nil {
			return ContentChunk{}, err
		}
		span, total = spans[0], len(spans)
	} else {
		p, err := c.codec.Decode(cur, cursor.Binding{Kind: cursor.KindChunk, Scope: b.Scope, Subject: b.Subject, Order: b.Order, Filters: b.Filters})
		if err != nil {
			return ContentChunk{}, fmt.Errorf("chunk: %w", err)
		}
		rest, ok := strings.CutPrefix(p.Snapshot, sealed(b, fp))
		if !ok {
			return ContentChunk{}, fmt.Errorf("chunk: %w (it was issued for another text, or another chunk size or kind)", cursor.ErrMismatch)
		}
		t, err := strconv.Atoi(rest)
		if err != nil || t < 2 || p.Index < 1 || p.Index >= int64(t) || p.Offset < 1 || p.Offset >= int64(len(text)) || p.Offset > math.MaxInt {
			return ContentChunk{}, fmt.Errorf("chunk: %w (chunk position out of range)", cursor.ErrInvalid)
		}
		index, total = int(p.Index), t
		sp := newSplitter(&c.cfg, text, kind)
		if span, err = sp.next(int(p.Offset)); err != nil {
			return ContentChunk{}, err
		}
	}
	out := ContentChunk{
		Content:     text[span.Start:span.End],
		ChunkIndex:  index,
		TotalChunks: total,
		Metadata:    metadata(text, span.Start, span.End, TotalLines(text)),
	}
	if index+1 < total {
		if span.End == len(text) {
			return ContentChunk{}, fmt.Errorf("chunk: %w (the cursor does not lead to a chunk of this text)", cursor.ErrInvalid)
		}
		next, err := c.codec.Encode(cursor.Payload{
			Kind:     cursor.KindChunk,
			Offset:   int64(span.End),
			Index:    int64(index + 1),
			Scope:    b.Scope,
			Subject:  b.Subject,
			Order:    b.Order,
			Filters:  b.Filters,
			Snapshot: sealed(b, fp) + strconv.Itoa(total),
		})
		if err != nil {
			return ContentChunk{}, fmt.Errorf("chunk: issuing the next cursor: %w", err)
		}
		out.NextCursor = next
	}
	return out, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fingerprint identifies the text and the chunking in a cursor:
// "c1.<kind>.<limit>.<counter>.<length>.<crc32c>.", followed by the number
// of chunks.
func (c *Chunker) fingerprint(text string, kind Kind) string {
	return fmt.Sprintf("c1.%s.%d.%s.%d.%08x.", kind, c.cfg.limit, c.tag, len(text), crc32.Checksum(unsafe.Slice(unsafe.StringData(text), len(text)), castagnoli)) // read only: no copy of the text
}
