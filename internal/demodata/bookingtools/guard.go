package bookingtools

import (
	"slices"

	"github.com/ctxfit/ctxfit"
)

// Endpoints returns the MCP examples' per-tool settings. The booking is about
// 3,200 tokens, under the default threshold of 4,000: a lower one shows the
// summary and its drill-down.
func Endpoints() []ctxfit.Endpoint {
	return []ctxfit.Endpoint{{Match: "get_booking", Threshold: 2000}}
}

// WithEndpoints returns eps followed by the example's endpoints that eps does
// not configure already: an operator's settings win.
func WithEndpoints(eps []ctxfit.Endpoint) []ctxfit.Endpoint {
	out := slices.Clone(eps)
	for _, ex := range Endpoints() {
		if !slices.ContainsFunc(eps, func(ep ctxfit.Endpoint) bool { return ep.Match == ex.Match }) {
			out = append(out, ex)
		}
	}
	return out
}
