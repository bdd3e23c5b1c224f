package summary

import (
	"github.com/ctxfit/ctxfit/budget"
)

// countSegment is the number of bytes an exact count covers between two
// looks at the context: about a millisecond of counting.
const countSegment = 64 << 10

// count returns the exact count of text by s's counter. With a
// [budget.ExactCounter] it counts a long text in segments cut where the
// count of the parts adds up to the count of the whole (see cutsApart), and
// stops with the context's error between two segments; another counter
// counts the text in one call.
func (s *Summarizer) count(st *stopper, text string) (int, error) {
	return s.countUpTo(st, text, -1)
}

// countUpTo is count that may stop once the count passes limit, returning
// some value above it; a negative limit means no limit.
func (s *Summarizer) countUpTo(st *stopper, text string, limit int) (int, error) {
	return s.countIn(st, text, limit, countSegment)
}

// countIn is countUpTo with segments of about segment bytes.
func (s *Summarizer) countIn(st *stopper, text string, limit, segment int) (int, error) {
	if err := st.check(); err != nil {
		return 0, err
	}
	if !budget.IsExact(s.counter) || len(text) <= segment {
		if limit < 0 {
			return s.counter.Count(text), nil
		}
		return budget.CountUpTo(s.counter, text, limit), nil
	}
	total := 0
	for len(text) > 0 {
		cut := len(text)
		if len(text) > segment {
			cut = nextCut(text, segment)
		}
		if limit < 0 {
			total += s.counter.Count(text[:cut])
		} else {
			total += budget.CountUpTo(s.counter, text[:cut], limit-total)
			if total > limit {
				return total, nil
			}
		}
		text = text[cut:]
		if err := st.check(); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// nextCut returns the first position from i on where text may be cut for
// counting (see cutsApart), or len(text).
func nextCut(text string, i int) int {
	for ; i < len(text); i++ {
		if cutsApart(text, i) {
			return i
		}
	}
	return len(text)
}

// cutsApart reports whether counting text[:i] and text[i:] apart gives the
// count of text with the exact encodings of package budget (o200k_base and
// cl100k_base). Their pre-tokenisers split text into pieces by patterns
// that never look behind the start of a piece, so i is such a position
// when a piece surely ends there:
//
//   - text[i-1] is an ASCII letter or digit and text[i] is one of " , : ] }
//     (a letter is only ever part of a run of letters, which ends at any of
//     these; a digit is part of a run of at most three digits);
//   - text[i-1] is a line feed and text[i] printable ASCII other than '/'
//     (as the chunk package cuts).
//
// Compact JSON has the first kind every few bytes, pretty-printed JSON the
// second. Both sides are counted as whole pieces, so the counts add up;
// invalid UTF-8 does not matter, since it is replaced byte by byte and
// never spans an ASCII byte.
func cutsApart(text string, i int) bool {
	if i <= 0 || i >= len(text) {
		return false
	}
	prev, c := text[i-1], text[i]
	switch {
	case prev == '\n':
		return c > ' ' && c < 0x7f && c != '/'
	case prev >= 'a' && prev <= 'z' || prev >= 'A' && prev <= 'Z' || prev >= '0' && prev <= '9':
		return c == '"' || c == ',' || c == ':' || c == ']' || c == '}'
	}
	return false
}
