package chunk

import (
	"errors"
	"fmt"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/bpe"
)

// Limits of [Options.MaxTokens].
const (
	// DefaultMaxTokens is the chunk size when Options.MaxTokens is zero.
	DefaultMaxTokens = 2000
	// MinMaxTokens is the smallest chunk size accepted: with the exact
	// counters any single rune (at most four bytes) fits in it.
	MinMaxTokens = 4
)

// Options configure a [Chunker] or a call of [Split]. The zero value (or a
// nil *Options) gives the defaults listed with each field.
type Options struct {
	// Counter counts tokens. Nil means budget.Exact("o200k_base"). It must
	// be safe for concurrent use and deterministic.
	Counter budget.Counter
	// MaxTokens is the largest number of tokens in a chunk, by Counter's
	// count. Zero means [DefaultMaxTokens] (2,000); otherwise it must be at
	// least [MinMaxTokens] (4).
	MaxTokens int
	// Kind is the kind of the texts. [KindAuto] (the zero value) detects it
	// for each text with [Detect].
	Kind Kind
}

// config is validated Options.
type config struct {
	counter budget.Counter
	limit   int
	kind    Kind
}

func newConfig(opts *Options) (config, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Counter == nil {
		c, err := budget.Exact(budget.O200KBase)
		if err != nil {
			return config{}, fmt.Errorf("chunk: default counter: %w", err)
		}
		o.Counter = c
	}
	switch {
	case o.MaxTokens == 0:
		o.MaxTokens = DefaultMaxTokens
	case o.MaxTokens < MinMaxTokens:
		return config{}, fmt.Errorf("chunk: Options.MaxTokens is %d; it must be at least %d, or zero for the default of %d",
			o.MaxTokens, MinMaxTokens, DefaultMaxTokens)
	}
	if !o.Kind.valid() {
		return config{}, fmt.Errorf("chunk: Options.Kind %q is unknown; use %q, %q, %q, %q, %q, or \"\" to detect it",
			o.Kind, KindProse, KindMarkdown, KindLog, KindCode, KindJSONLines)
	}
	return config{counter: o.Counter, limit: o.MaxTokens, kind: o.Kind}, nil
}

// kindOf returns the configured kind, or the detected kind of text.
func (c *config) kindOf(text string) Kind {
	if c.kind != KindAuto {
		return c.kind
	}
	return Detect(text)
}

// Span is one chunk of a text: text[Start:End].
//
// A Span is a plain value, safe to copy and share.
type Span struct {
	Start  int   // byte offset of the first byte
	End    int   // byte offset after the last byte; > Start unless the text is empty
	Tokens int   // exact token count of text[Start:End] by the counter used
	Level  Level // the best level of the boundary at End (LevelEnd for the last chunk)
}

// ErrUnsplittable is returned when a single rune is over the limit, which
// cannot happen with the exact counters and MaxTokens >= [MinMaxTokens],
// but can with a custom [budget.Counter].
var ErrUnsplittable = errors.New("chunk: a single rune is over the token limit")

// Split cuts text into chunks of at most opts.MaxTokens tokens and returns
// them in order; concatenated, they are text. A text within the limit is
// one span, and the empty text one empty span. See the package
// documentation for where chunks end.
//
// Errors report invalid options, or wrap [ErrUnsplittable].
func Split(text string, opts *Options) ([]Span, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return cfg.split(text, cfg.kindOf(text))
}

func (c *config) split(text string, kind Kind) ([]Span, error) {
	sp := newSplitter(c, text, kind)
	if len(text) == 0 {
		return []Span{{Level: LevelEnd}}, nil
	}
	spans := make([]Span, 0, 1+len(text)/(4*c.limit))
	for s := 0; s < len(text); {
		span, err := sp.next(s)
		if err != nil {
			return nil, err
		}
		spans = append(spans, span)
		s = span.End
	}
	return spans, nil
}

// maxRounds bounds the estimate-verify-correct rounds of one chunk.
const maxRounds = 4

// endCheckBytes: when at most endCheckBytes*limit bytes remain, the rest of
// the text is counted at once to see whether it fits as the last chunk.
const endCheckBytes = 8

// maxTokenBytes is the length of the longest token of the exact counters'
// encodings (o200k_base and cl100k_base): a text of more than
// maxTokenBytes*limit bytes holds more than limit tokens. (Invalid UTF-8
// only lengthens the text the counter sees: each invalid byte counts as the
// three bytes of U+FFFD.)
const maxTokenBytes = 128

// splitter cuts one text. It is used by one goroutine.
type splitter struct {
	cfg   *config
	exact bool // the counter is a *budget.ExactCounter
	text  string
	// wire is the form in which the text is sent, when it differs (an
	// escaped JSON string body): boundaries are found in text, tokens are
	// counted in wire, and toWire maps offsets of text to offsets of wire.
	// "" means the text is sent as it is.
	wire   string
	toWire func(int) int
	levels []Level
	find   *finder
	memo   [8]segCount // recent segment counts, a ring
	memoAt int
	cands  []cand
}

// segCount is a remembered count of text[start:end]: the exact count when
// tokens <= limit, and only "over limit" otherwise.
type segCount struct {
	start, end    int
	tokens, limit int
}

type cand struct{ pos, est int }

func newSplitter(cfg *config, text string, kind Kind) *splitter {
	return &splitter{cfg: cfg, exact: budget.IsExact(cfg.counter), text: text, levels: kindLevels[kind], find: newFinder(text)}
}

// count returns the exact count of text[a:b] when it is at most limit, and
// some value greater than limit otherwise. Counts are remembered, so that a
// segment looked at twice (the one that did not fit in a chunk starts the
// next) is counted once.
func (sp *splitter) count(a, b, limit int) int {
	for i := range sp.memo {
		m := &sp.memo[i]
		if m.start == a && m.end == b && m.end > 0 {
			if m.tokens <= m.limit || limit <= m.limit {
				return m.tokens
			}
		}
	}
	seg := sp.text[a:b]
	if sp.wire != "" {
		seg = sp.wire[sp.toWire(a):sp.toWire(b)]
	}
	var t int
	switch {
	case limit < 0:
		t = 1 // nothing can fit; report over
	case sp.exact && len(seg) > maxTokenBytes*limit:
		t = limit + 1 // more bytes than limit tokens can hold: over, without counting
	default:
		t = budget.CountUpTo(sp.cfg.counter, seg, limit)
	}
	sp.memo[sp.memoAt] = segCount{start: a, end: b, tokens: t, limit: limit}
	sp.memoAt = (sp.memoAt + 1) % len(sp.memo)
	return t
}

// boundary returns the first boundary after p of any of the levels
// sp.levels[:k+1].
func (sp *splitter) boundary(p, k int) int {
	b := len(sp.text)
	for _, l := range sp.levels[:k+1] {
		b = min(b, sp.find.next(l, p))
	}
	return b
}

// next returns the chunk that starts at s (s < len(text)).
func (sp *splitter) next(s int) (Span, error) {
	text, limit := sp.text, sp.cfg.limit
	n := len(text)
	// The rest of the text, when it fits, is the last chunk.
	if n-s <= endCheckBytes*limit {
		if t := sp.count(s, n, limit); t <= limit {
			return Span{Start: s, End: n, Tokens: t, Level: LevelEnd}, nil
		}
	}
	// The best level whose first boundary fits, checked by exact count.
	star, e, c := -1, 0, 0
	prev := -1
	for k := range sp.levels {
		b := sp.boundary(s, k)
		if b == prev {
			continue // same boundary as a better level: it does not fit
		}
		prev = b
		if t := sp.count(s, b, limit); t <= limit {
			star, e, c = k, b, t
			break
		}
	}
	if star < 0 {
		return Span{}, fmt.Errorf("%w: at byte %d, the rune takes more than %d tokens", ErrUnsplittable, s, limit)
	}
	// Extend at that level: add segments by their own counts (an estimate
	// of the chunk's count), verify the farthest that fits by one exact
	// count, and correct: back off when over, go on when the exact count
	// leaves room. Where every joint is a safe cut for the exact counter
	// (a line that starts with printable ASCII), the segments' counts add
	// up to the chunk's: the estimate is exact and needs no verifying.
	for range maxRounds {
		if e == n {
			break
		}
		cands := sp.cands[:0]
		est := c
		exact := sp.exact
		for p := e; p < n; {
			q := sp.boundary(p, star)
			t := sp.count(p, q, limit-est)
			exact = exact && sp.safeCut(p)
			if est+t > limit {
				break
			}
			est += t
			cands = append(cands, cand{q, est})
			p = q
		}
		sp.cands = cands
		if len(cands) == 0 {
			break
		}
		last := cands[len(cands)-1]
		if exact {
			// The joint to the segment that did not fit is safe too: the
			// chunk is as long as it can be.
			e, c = last.pos, last.est
			break
		}
		if t := sp.count(s, last.pos, limit); t <= limit {
			e, c = last.pos, t
			if t == last.est {
				break
			}
			continue
		}
		// Over: the farthest candidate that fits, by binary search (counts
		// grow with the prefix; e is known to fit).
		lo, hi := -1, len(cands)-1
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if t := sp.count(s, cands[mid].pos, limit); t <= limit {
				lo, c = mid, t
			} else {
				hi = mid
			}
		}
		if lo >= 0 {
			e = cands[lo].pos
		}
		break
	}
	return Span{Start: s, End: e, Tokens: c, Level: sp.levelAt(e, star)}, nil
}

// safeCut reports whether the exact counter always ends a piece at p, so
// that counts of the segments on either side add up.
func (sp *splitter) safeCut(p int) bool {
	if sp.wire != "" {
		return bpe.SafeCut(sp.wire, sp.toWire(p))
	}
	return bpe.SafeCut(sp.text, p)
}

// levelAt returns the best level of the boundary at e, found by the level
// sp.levels[star].
func (sp *splitter) levelAt(e, star int) Level {
	if e == len(sp.text) {
		return LevelEnd
	}
	for _, l := range sp.levels[:star] {
		if isAt(sp.text, l, e) {
			return l
		}
	}
	return sp.levels[star]
}
