package chunk

import (
	"errors"
	"fmt"
	"strings"
)

// ErrLineRange is wrapped by the errors of [Lines] for a range that does not
// select any line. The error is a [*LineRangeError] that carries the numbers.
var ErrLineRange = errors.New("chunk: invalid line range")

// LineRangeError reports a line range that [Lines] cannot serve, and the
// valid range. It wraps [ErrLineRange]. It is a plain value; the zero
// value reports a start of 0 in an empty range.
type LineRangeError struct {
	Start, End int // the range asked for (1-based, inclusive)
	TotalLines int // the number of lines in the text; the valid range is 1 to TotalLines
}

// Error says what is wrong with the range and which range is valid.
func (e *LineRangeError) Error() string {
	valid := fmt.Sprintf("the text has %d lines: ask for lines 1 to %d", e.TotalLines, e.TotalLines)
	if e.TotalLines == 1 {
		valid = "the text has 1 line: ask for line 1"
	}
	switch {
	case e.Start < 1:
		return fmt.Sprintf("chunk: startLine %d must be at least 1 (lines are numbered from 1); %s", e.Start, valid)
	case e.End < e.Start:
		return fmt.Sprintf("chunk: endLine %d is before startLine %d; %s", e.End, e.Start, valid)
	default:
		return fmt.Sprintf("chunk: startLine %d is beyond the end; %s", e.Start, valid)
	}
}

// Unwrap returns [ErrLineRange].
func (e *LineRangeError) Unwrap() error { return ErrLineRange }

// Lines returns lines start to end (1-based, inclusive; see [Metadata]) of
// text as one chunk: Content is the lines with their line endings,
// ChunkIndex 0, TotalChunks 1, no NextCursor, and Metadata relative to the
// whole text. An end beyond the last line is taken as the last line, as
// sed does.
//
// It does not split the text: it scans for the '\n' bytes before the range
// and in it, and counts the rest (no tokens are counted). It does not apply
// a token limit either; chunk the Content when the range may be large.
//
// A start below 1, an end before start, or a start beyond the last line is
// an error that wraps [ErrLineRange] and is a [*LineRangeError].
func Lines(text string, start, end int) (ContentChunk, error) {
	from, to, err := LineSpan(text, start, end)
	if err != nil {
		return ContentChunk{}, err
	}
	total := start + strings.Count(text[from:], "\n")
	if len(text) > 0 && text[len(text)-1] == '\n' {
		total--
	}
	md := Metadata{StartLine: start, EndLine: start, TotalLines: total, BytesInChunk: to - from}
	if to > from {
		md.EndLine += strings.Count(text[from:to-1], "\n")
	}
	return ContentChunk{Content: text[from:to], TotalChunks: 1, Metadata: md}, nil
}

// LineSpan returns where lines start to end of text are, as [Lines] takes
// them: text[from:to], with the same errors.
func LineSpan(text string, start, end int) (from, to int, err error) {
	if start < 1 || end < start {
		return 0, 0, &LineRangeError{Start: start, End: end, TotalLines: TotalLines(text)}
	}
	// Skip start-1 lines.
	for line := 1; line < start; line++ {
		i := strings.IndexByte(text[from:], '\n')
		if i < 0 || from+i+1 == len(text) {
			return 0, 0, &LineRangeError{Start: start, End: end, TotalLines: TotalLines(text)}
		}
		from += i + 1
	}
	to = from
	for line := start; line <= end; line++ {
		i := strings.IndexByte(text[to:], '\n')
		if i < 0 {
			to = len(text)
			break
		}
		to += i + 1
		if to == len(text) {
			break
		}
	}
	return from, to, nil
}
