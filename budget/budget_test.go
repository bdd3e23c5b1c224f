package budget_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

func TestBudgetValidate(t *testing.T) {
	tests := []struct {
		name    string
		b       budget.Budget
		wantErr string
	}{
		{"the default budget is valid", budget.Default(), ""},
		{"an equal threshold and hard cap are valid", budget.Budget{Threshold: 10, HardCap: 10}, ""},
		{"a zero threshold is refused", budget.Budget{Threshold: 0, HardCap: 10}, "budget: threshold 0 must be > 0"},
		{"a negative threshold is refused", budget.Budget{Threshold: -5, HardCap: 10}, "threshold -5 must be > 0"},
		{"a hard cap below the threshold is refused", budget.Budget{Threshold: 4000, HardCap: 100}, "budget: hardCap 100 must be >= threshold 4000"},
		{"the zero budget is refused", budget.Budget{}, "threshold 0 must be > 0"},
		{"both rules broken are both named", budget.Budget{Threshold: 0, HardCap: -1}, "budget: threshold 0 must be > 0; hardCap -1 must be >= threshold 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestDefaultBudget(t *testing.T) {
	assert.Equal(t, budget.Budget{Threshold: 4000, HardCap: 12000}, budget.Default())
}

func TestUsage(t *testing.T) {
	b := budget.Default()
	tests := []struct {
		name   string
		tokens int
		want   budget.Usage
	}{
		{"an empty response uses nothing", 0, budget.Usage{0, 4000, 12000, 0, 4000, false, false}},
		{"half the threshold uses half", 2000, budget.Usage{2000, 4000, 12000, 0.5, 2000, false, false}},
		{"exactly the threshold is not summary mode", 4000, budget.Usage{4000, 4000, 12000, 1, 0, false, false}},
		{"one token over the threshold is summary mode", 4001, budget.Usage{4001, 4000, 12000, 1, 0, true, false}},
		{"over the hard cap is flagged", 12001, budget.Usage{12001, 4000, 12000, 1, 0, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, b.Usage(tt.tokens))
		})
	}
}

func TestUsageMarshalsWithCamelCaseNames(t *testing.T) {
	got, err := json.Marshal(budget.Default().Usage(5000))
	require.NoError(t, err)
	assert.JSONEq(t, `{"estimatedTokens":5000,"threshold":4000,"hardCap":12000,"budgetUsed":1,
		"budgetRemaining":0,"summaryMode":true,"overHardCap":false}`, string(got))
}

func TestExact(t *testing.T) {
	t.Run("an empty name means o200k_base", func(t *testing.T) {
		c, err := budget.Exact("")
		require.NoError(t, err)
		assert.Equal(t, budget.O200KBase, c.(*budget.ExactCounter).Encoding())
	})
	t.Run("the same counter is returned on every call", func(t *testing.T) {
		a, err := budget.Exact(budget.CL100KBase)
		require.NoError(t, err)
		b, err := budget.Exact(budget.CL100KBase)
		require.NoError(t, err)
		assert.Same(t, a.(*budget.ExactCounter), b.(*budget.ExactCounter))
	})
	t.Run("an unknown encoding is refused with the names to use", func(t *testing.T) {
		_, err := budget.Exact("p50k_base")
		require.Error(t, err)
		assert.EqualError(t, err, `budget: unknown encoding "p50k_base": use "o200k_base" (the default) or "cl100k_base"`)
	})
}

func TestExactEqualsTiktokenGoOnRealisticText(t *testing.T) {
	texts := map[string]string{
		"json":  corpus.JSON(20 << 10),
		"prose": corpus.Prose(20 << 10),
		"code":  corpus.Code(20 << 10),
		"mixed": "Grüße aus Köln — 東京 🚀\r\n\tindented\n  \n\n  x = 1_000_000; y's THEY'LL\n",
	}
	for _, enc := range []string{budget.O200KBase, budget.CL100KBase} {
		c, err := budget.Exact(enc)
		require.NoError(t, err)
		tk := tiktokenGo(t, enc)
		for name, text := range texts {
			t.Run(enc+" on "+name, func(t *testing.T) {
				assert.Equal(t, len(tk.EncodeOrdinary(text)), c.Count(text))
			})
		}
	}
}

func TestCountUpToStopsEarlyButIsExactBelowTheLimit(t *testing.T) {
	c, err := budget.Exact("")
	require.NoError(t, err)
	text := corpus.Prose(50 << 10)
	full := c.Count(text)
	require.Greater(t, full, 1000)

	assert.Equal(t, full, budget.CountUpTo(c, text, full), "at the limit the count is exact")
	assert.Equal(t, full, budget.CountUpTo(c, text, full+100), "below the limit the count is exact")
	got := budget.CountUpTo(c, text, 100)
	assert.Greater(t, got, 100, "over the limit the result is above it")
	assert.Less(t, got, full, "and counting stopped early")

	assert.True(t, budget.Exceeds(c, text, full-1))
	assert.False(t, budget.Exceeds(c, text, full))
	assert.False(t, budget.Exceeds(c, "short", 5), "a text no longer than the limit in bytes fits")
	assert.True(t, budget.Exceeds(budget.Estimator{}, strings.Repeat("x", 100), 10))
}

func TestCountPrefixSaysHowMuchItRead(t *testing.T) {
	c, err := budget.Exact("")
	require.NoError(t, err)
	text := corpus.Prose(100 << 10)
	full := c.Count(text)

	for _, limit := range []int{-1, full, full + 1} {
		n, read := budget.CountPrefix(c, text, limit)
		assert.Equal(t, full, n, "limit %d: the whole text is counted", limit)
		assert.Equal(t, 1.0, read, "limit %d", limit)
	}

	n, read := budget.CountPrefix(c, text, full/4)
	assert.Greater(t, n, full/4, "past the limit the count is above it")
	assert.Equal(t, budget.CountUpTo(c, text, full/4), n, "the same count as CountUpTo")
	assert.Greater(t, read, 0.15)
	assert.Less(t, read, 0.4, "counting stopped about a quarter of the way in")
	assert.InEpsilon(t, full, float64(n)/read, 0.05, "n / read estimates the whole")

	n, read = budget.CountPrefix(budget.Estimator{}, text, 10)
	assert.Equal(t, budget.Estimator{}.Count(text), n, "a counter that cannot stop counts the whole text")
	assert.Equal(t, 1.0, read)
	n, read = budget.CountPrefix(stopping{}, text, 10)
	assert.Equal(t, 11, n)
	assert.Zero(t, read, "a LimitedCounter that does not say how far it read: unknown")
}

// stopping is a LimitedCounter that stops right past any limit.
type stopping struct{}

func (stopping) Count(text string) int { return len(text) }

func (stopping) CountUpTo(text string, limit int) int { return min(len(text), limit+1) }

func TestExactCountsAllocateNothing(t *testing.T) {
	c, err := budget.Exact("")
	require.NoError(t, err)
	for name, text := range map[string]string{
		"prose":      corpus.Prose(8 << 10),
		"json":       corpus.JSON(8 << 10),
		"long piece": strings.Repeat("abc", 3000),
	} {
		// Warm the scratch pools, and build the long-piece tables, which
		// the counter builds once it has merged 64 KiB of long pieces.
		for range 40 {
			c.Count(text)
		}
		assert.Zero(t, testing.AllocsPerRun(20, func() { c.Count(text) }), name)
	}
}

func TestExactIsSafeForConcurrentUse(t *testing.T) {
	c, err := budget.Exact("")
	require.NoError(t, err)
	texts := []string{corpus.Prose(4 << 10), corpus.JSON(4 << 10), strings.Repeat("z", 5000)}
	want := make([]int, len(texts))
	for i, s := range texts {
		want[i] = c.Count(s)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 20 {
				i := (g + k) % len(texts)
				assert.Equal(t, want[i], c.Count(texts[i]))
			}
		})
	}
	wg.Wait()
}

func TestEstimator(t *testing.T) {
	tests := []struct {
		name string
		e    budget.Estimator
		text string
		want int
	}{
		{"empty text is zero tokens", budget.Estimator{}, "", 0},
		{"four bytes with the default margin round up", budget.Estimator{}, "abcd", 2},
		{"400 bytes with the default 20% margin", budget.Estimator{}, strings.Repeat("a", 400), 120},
		{"a negative margin means none", budget.Estimator{Margin: -1}, strings.Repeat("a", 400), 100},
		{"a custom margin", budget.Estimator{Margin: 0.5}, strings.Repeat("a", 400), 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.e.Count(tt.text))
		})
	}
}

func FuzzExactMatchesTiktokenGo(f *testing.F) {
	for _, s := range []string{"", "hello world", "  \n\t x", "don't", "日本語", "\xff", corpus.JSON(600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		for _, enc := range []string{budget.O200KBase, budget.CL100KBase} {
			c, err := budget.Exact(enc)
			require.NoError(t, err)
			want := len(tiktokenGo(t, enc).EncodeOrdinary(s))
			require.Equal(t, want, c.Count(s), "%s: %q", enc, s)
			for _, limit := range []int{0, want / 2, want} {
				got := budget.CountUpTo(c, s, limit)
				if want <= limit {
					require.Equal(t, want, got)
				} else {
					require.Greater(t, got, limit)
				}
			}
		}
	})
}
