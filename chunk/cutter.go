package chunk

import (
	"fmt"

	"github.com/ctxfit/ctxfit/internal/rawjson"
)

// Form says how a text is sent, and so what a chunk's tokens are counted
// on and what its offsets index.
type Form uint8

const (
	// FormText: the text is sent as it is. Spans are offsets of the text.
	FormText Form = iota
	// FormEscaped: the text is sent as the body of a JSON string, escaped
	// as rawjson.Escape escapes it (the same on every Go release; bytes
	// that are not valid UTF-8 are written as \udc80 to \udcff, one per
	// byte, so nothing is lost). Boundaries are found in the text, tokens
	// are counted on the escaped form, and spans are offsets of the text.
	FormEscaped
	// FormJSONString: the text is the body of a JSON string as it appears
	// in a JSON document (escaped, without its quotes), and is sent as it
	// is. Boundaries are found in the text it stands for, tokens are
	// counted on the body, spans are offsets of the body, and a chunk never
	// ends inside an escape sequence: a chunk is always a valid string body
	// itself, lone surrogate escapes kept as they are.
	FormJSONString
)

// A Cutter cuts one text into chunks one at a time, from the start of any
// chunk: [Cutter.Next] returns the chunk that starts where the previous one
// ended. A caller that keeps only the end of the last chunk (in a cursor,
// say) continues without splitting the text from its start; the chunks
// are the same as [Split] returns for the whole text, provided the Kind is
// the same (set [Options.Kind] when continuing from a part of the text).
//
// A Cutter is used by one goroutine at a time.
type Cutter struct {
	sp      *splitter
	form    Form
	kind    Kind
	source  int           // length of the text as given
	fromSrc func(int) int // offset of the source to offset of the text boundaries are found in
	toSrc   func(int) int
}

// NewCutter returns a Cutter over text sent in the given form. opts is as
// for [Split]; nil means the defaults.
func NewCutter(text string, form Form, opts *Options) (*Cutter, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	id := func(p int) int { return p }
	c := &Cutter{form: form, source: len(text), fromSrc: id, toSrc: id}
	view := text
	var wire string
	var toWire func(int) int
	switch form {
	case FormText:
	case FormEscaped:
		w, m := rawjson.Escape(nil, []byte(text))
		wire, toWire = string(w), m.Encoded
	case FormJSONString:
		t, m := rawjson.Decode([]byte(text))
		view, wire, toWire = string(t), text, m.Encoded
		c.fromSrc, c.toSrc = m.Text, m.Encoded
	default:
		return nil, fmt.Errorf("chunk: unknown Form %d", form)
	}
	c.kind = cfg.kindOf(view)
	sp := newSplitter(&cfg, view, c.kind)
	sp.wire, sp.toWire = wire, toWire
	c.sp = sp
	return c, nil
}

// Kind returns the kind of text the Cutter cuts: Options.Kind, or the
// detected one.
func (c *Cutter) Kind() Kind {
	return c.kind
}

// Next returns the chunk that starts at start (an offset of the text as
// given to NewCutter, 0 <= start < its length): its span, in those offsets,
// and its exact token count in the form it is sent. A start that is not
// the start or end of a chunk may cut oddly but never loses a byte.
func (c *Cutter) Next(start int) (Span, error) {
	if start < 0 || start >= c.source {
		return Span{}, fmt.Errorf("chunk: start %d is outside the text (0 to %d)", start, c.source)
	}
	span, err := c.sp.next(c.fromSrc(start))
	if err != nil {
		return Span{}, err
	}
	span.Start, span.End = start, c.toSrc(span.End)
	return span, nil
}

// Window returns the part text[from:to] of a text of length n that a
// Cutter needs to give the chunk starting at start with a limit of limit
// tokens: no chunk is longer than the longest token times the limit, and
// finding boundaries looks a little before and after. A Cutter over the
// window (with the Kind of the whole text in [Options.Kind]), asked for
// Next(start-from), gives the chunk a Cutter over the whole text gives, so
// a continuation costs the chunk, not the text. For FormJSONString, from
// and to may fall inside an escape: that only affects offsets outside the
// chunk.
func Window(n, start, limit int) (from, to int) {
	const around = 4096 // lines and entries looked at before and after a boundary
	from = max(0, start-around)
	to = n
	if w := maxTokenBytes*max(limit, 1) + around; n-start > w {
		to = start + w
	}
	return from, to
}
