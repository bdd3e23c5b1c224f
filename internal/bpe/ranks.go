// Package bpe is ctxfit's exact tiktoken tokenizer: a hand-written
// pre-tokeniser for each encoding's split pattern and an allocation-free
// byte-pair merge over the BPE ranks embedded by
// github.com/pkoukk/tiktoken-go-loader.
//
// Its output equals github.com/pkoukk/tiktoken-go's EncodeOrdinary for every
// input (invalid UTF-8 included: like tiktoken-go, each invalid byte counts as
// U+FFFD). The differential tests and fuzz targets in this package hold it to
// that.
package bpe

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"sync"
	"unsafe"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// Encoding names.
const (
	O200KBase  = "o200k_base"
	CL100KBase = "cl100k_base"
)

// Encoding is one loaded tiktoken encoding. It is immutable and safe for
// concurrent use.
type Encoding struct {
	name   string
	ranks  map[string]uint32
	byByte [256]uint32 // rank of each single byte
	maxLen int         // longest token in bytes
	split  splitFunc
	tokens []string // rank -> bytes ("" for unused ranks)

	btOnce sync.Once
	bt     *backtracker // long-piece tables, built on first use; see backtrack.go
}

// splitFunc returns the end of the pre-tokeniser piece that starts at s[i:].
// s is valid UTF-8 and i < len(s).
type splitFunc func(s string, i int) int

// Name returns the encoding's name, e.g. "o200k_base".
func (e *Encoding) Name() string { return e.name }

var (
	loadMu sync.Mutex
	loaded = map[string]*Encoding{}
)

// Load returns the process-wide Encoding called name, loading its ranks from
// the embedded files on first use. It is safe for concurrent use.
func Load(name string) (*Encoding, error) {
	var split splitFunc
	switch name {
	case O200KBase:
		split = splitO200K
	case CL100KBase:
		split = splitCL100K
	default:
		return nil, fmt.Errorf("bpe: unknown encoding %q (want %q or %q)", name, O200KBase, CL100KBase)
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if e, ok := loaded[name]; ok {
		return e, nil
	}
	e, err := parseRanks(name, split)
	if err != nil {
		return nil, err
	}
	loaded[name] = e
	return e, nil
}

// parseRanks reads "<base64 token> <rank>" lines. All token bytes share one
// backing array so the map keys cost no allocation each.
func parseRanks(name string, split splitFunc) (*Encoding, error) {
	raw, err := assets.Assets.ReadFile(name + ".tiktoken")
	if err != nil {
		return nil, fmt.Errorf("bpe: read embedded ranks for %s: %w", name, err)
	}
	lines := bytes.Count(raw, []byte{'\n'}) + 1
	buf := make([]byte, 0, len(raw)*3/4)
	type entry struct{ off, n, rank int }
	entries := make([]entry, 0, lines)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("bpe: %s: bad rank line %q", name, line)
		}
		n := base64.StdEncoding.DecodedLen(sp)
		off := len(buf)
		buf = append(buf, make([]byte, n)...)
		m, err := base64.StdEncoding.Decode(buf[off:], line[:sp])
		if err != nil {
			return nil, fmt.Errorf("bpe: %s: bad token %q: %w", name, line[:sp], err)
		}
		buf = buf[:off+m]
		rank, err := strconv.Atoi(string(line[sp+1:]))
		if err != nil || rank < 0 {
			return nil, fmt.Errorf("bpe: %s: bad rank %q", name, line[sp+1:])
		}
		entries = append(entries, entry{off, m, rank})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bpe: %s: %w", name, err)
	}
	all := unsafe.String(unsafe.SliceData(buf), len(buf))
	e := &Encoding{name: name, split: split, ranks: make(map[string]uint32, len(entries))}
	maxRank := 0
	for _, en := range entries {
		maxRank = max(maxRank, en.rank)
	}
	e.tokens = make([]string, maxRank+1)
	seen := 0
	for _, en := range entries {
		tok := all[en.off : en.off+en.n]
		e.ranks[tok] = uint32(en.rank)
		e.tokens[en.rank] = tok
		e.maxLen = max(e.maxLen, en.n)
		if en.n == 1 {
			e.byByte[tok[0]] = uint32(en.rank)
			seen++
		}
	}
	if seen != 256 {
		return nil, fmt.Errorf("bpe: %s: %d single-byte tokens, want 256", name, seen)
	}
	return e, nil
}
