package budget

// Estimator is a cheap token estimate: one token per four
// bytes, plus a safety margin (20% by default).
//
// It is inexact by design. Before the margin, chars/4 under-counts JSON by
// about 17% against the o200k_base tokenizer, and it can be far off for CJK
// text, emoji or long runs of digits; the margin covers ordinary JSON and
// prose, not adversarial input. Use [Exact] where the hard cap must hold.
//
// The zero Estimator uses the default 20% margin. It is safe for concurrent
// use.
type Estimator struct {
	// Margin is the fraction added to the chars/4 estimate. Zero means 0.2;
	// a negative value means no margin.
	Margin float64
}

// Count returns ceil(len(text)/4 * (1+margin)).
func (e Estimator) Count(text string) int {
	m := e.Margin
	switch {
	case m == 0:
		m = 0.2
	case m < 0:
		m = 0
	}
	n := (len(text) + 3) / 4
	return int(float64(n)*(1+m) + 0.999999)
}
