// Package budget counts tokens and decides whether a response fits the
// context budget of the model that will read it.
//
// A [Counter] turns text into a token count. [Exact] returns the
// process-wide exact counter for an OpenAI tiktoken encoding ("o200k_base",
// the default, or "cl100k_base"); its counts equal tiktoken's for every
// input. [Estimator] is the cheap chars/4 heuristic for callers who prefer
// speed to exactness.
//
// A [Budget] holds the two limits the rest of ctxfit works with: the
// threshold above which a response is shaped, and the hard cap that no shaped
// response may exceed. [Budget.Usage] reports how much of the threshold a
// response uses, as a [Usage] that marshals to JSON.
package budget

import (
	"fmt"
	"strings"
)

// Default limits.
const (
	DefaultThreshold = 4000
	DefaultHardCap   = 12000
)

// Counter counts the tokens of a text.
//
// Implementations must be safe for concurrent use and must never fail: a
// count is always returned, whatever the bytes (invalid UTF-8 included).
type Counter interface {
	Count(text string) int
}

// LimitedCounter is implemented by counters that can stop counting early.
// CountUpTo returns the exact count when it is at most limit, and some value
// greater than limit otherwise. [Exceeds] and [CountUpTo] use it when a
// Counter provides it.
type LimitedCounter interface {
	Counter
	CountUpTo(text string, limit int) int
}

// CountUpTo returns c's count of text when it is at most limit, and a value
// greater than limit otherwise. It stops counting early when c implements
// [LimitedCounter].
func CountUpTo(c Counter, text string, limit int) int {
	if lc, ok := c.(LimitedCounter); ok {
		return lc.CountUpTo(text, limit)
	}
	return c.Count(text)
}

// CountPrefix is [CountUpTo] that also returns the share of text that was
// counted, as a fraction: 1 when n is c's count of the whole text, less
// when counting stopped past limit, so that n / read estimates the tokens
// of the whole without counting it again. A [LimitedCounter] other than
// the exact one does not say where it stopped: past limit, read is 0
// (unknown).
func CountPrefix(c Counter, text string, limit int) (n int, read float64) {
	switch c := c.(type) {
	case *ExactCounter:
		return c.enc.CountPrefix(text, limit)
	case LimitedCounter:
		n := c.CountUpTo(text, limit)
		if limit >= 0 && n > limit {
			return n, 0
		}
		return n, 1
	}
	return c.Count(text), 1
}

// Exceeds reports whether text holds more than limit tokens by c's count.
// It stops counting as soon as the limit is passed when c supports it, and
// with an exact counter it does not count a text of at most limit bytes at
// all: tiktoken encodings never make more tokens than bytes.
func Exceeds(c Counter, text string, limit int) bool {
	if IsExact(c) && len(text) <= limit {
		return false
	}
	return CountUpTo(c, text, limit) > limit
}

// Budget is the token budget of one response.
//
// The zero Budget is not valid; use [Default] or set both fields. A Budget is
// a plain value and safe to copy and share.
type Budget struct {
	// Threshold is the token count above which a response is shaped
	// (paginated, summarized or chunked). Must be > 0.
	Threshold int `json:"threshold"`
	// HardCap is the token count that no shaped response may exceed.
	// Must be >= Threshold.
	HardCap int `json:"hardCap"`
}

// Default returns the default budget: threshold 4,000, hard cap 12,000.
func Default() Budget {
	return Budget{Threshold: DefaultThreshold, HardCap: DefaultHardCap}
}

// Validate reports whether b is usable. The error names the field and the
// rule it breaks, for example "budget: hardCap 100 must be >= threshold 4000";
// when both fields break their rules, it names both.
func (b Budget) Validate() error {
	var msgs []string
	if b.Threshold <= 0 {
		msgs = append(msgs, fmt.Sprintf("threshold %d must be > 0", b.Threshold))
	}
	if b.HardCap < b.Threshold {
		msgs = append(msgs, fmt.Sprintf("hardCap %d must be >= threshold %d", b.HardCap, b.Threshold))
	}
	if msgs == nil {
		return nil
	}
	return fmt.Errorf("budget: %s", strings.Join(msgs, "; "))
}

// Usage is how much of a budget a response uses, with camelCase JSON names.
type Usage struct {
	EstimatedTokens int     `json:"estimatedTokens"`
	Threshold       int     `json:"threshold"`
	HardCap         int     `json:"hardCap"`
	BudgetUsed      float64 `json:"budgetUsed"`      // min(estimated/threshold, 1)
	BudgetRemaining int     `json:"budgetRemaining"` // max(threshold-estimated, 0)
	SummaryMode     bool    `json:"summaryMode"`     // estimated > threshold
	OverHardCap     bool    `json:"overHardCap"`     // estimated > hardCap
}

// Usage reports how much of b a response of tokens tokens uses.
func (b Budget) Usage(tokens int) Usage {
	used := 1.0
	if b.Threshold > 0 {
		used = min(float64(tokens)/float64(b.Threshold), 1)
	}
	return Usage{
		EstimatedTokens: tokens,
		Threshold:       b.Threshold,
		HardCap:         b.HardCap,
		BudgetUsed:      used,
		BudgetRemaining: max(b.Threshold-tokens, 0),
		SummaryMode:     tokens > b.Threshold,
		OverHardCap:     tokens > b.HardCap,
	}
}
