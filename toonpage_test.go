package ctxfit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/toon"
)

func TestTOONPagesHoldMoreItemsAndDecodeToExactlyTheItems(t *testing.T) {
	body, err := json.Marshal(bookingtools.BookingRows(""))
	require.NoError(t, err)
	var want []any
	require.NoError(t, json.Unmarshal(body, &want))

	pages := func(format string) (items []any, responses int) {
		// Pages bounded by tokens, not by a number of items.
		g, _ := newGuard(t, ctxfit.Config{PageSize: 200})
		req := ctxfit.Request{Endpoint: "list", Format: format}
		fetch := serve(body, "application/json")
		for {
			res, err := g.Handle(context.Background(), req, fetch)
			require.NoError(t, err)
			require.LessOrEqual(t, exact.Count(string(res.Body)), g.Config().HardCap)
			responses++
			var page struct {
				Items []any  `json:"items"`
				TOON  string `json:"toon"`
				Meta  struct{ Format string }
			}
			require.NoError(t, json.Unmarshal(res.Body, &page))
			if format == ctxfit.FormatTOON {
				require.Equal(t, "toon", page.Meta.Format, "every page of this list pays as TOON")
				decoded, err := toon.Decode(nil, []byte(page.TOON), nil)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(decoded, &page.Items))
			}
			items = append(items, page.Items...)
			if res.Next == "" {
				return items, responses
			}
			req.Cursor = res.Next
			req.Format = "" // continuations keep the format of their cursor
		}
	}
	jsonItems, jsonPages := pages("")
	toonItems, toonPages := pages(ctxfit.FormatTOON)
	assert.Equal(t, want, jsonItems)
	assert.Equal(t, want, toonItems, "the TOON pages decode to exactly the items")
	assert.Less(t, toonPages*4, jsonPages*3, "TOON pages hold at least a third more items (%d pages against %d)", toonPages, jsonPages)
}

func TestTOONIsNotUsedWhereItWouldLoseOrCostMore(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"numbers beyond float64", `[` + repeat(`{"a":1e400,"b":"x"}`, 400) + `]`},
		{"invalid UTF-8", "[" + repeat("{\"a\":\"\xff\",\"b\":1}", 400) + "]"},
		{"objects that are not uniform", `[` + repeat(`{"a":[1,{"b":2}],"c":{"d":[3]}}`, 400) + `]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: 2000})
			res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Format: ctxfit.FormatTOON}, serve([]byte(tc.body), "application/json"))
			require.NoError(t, err)
			assert.Contains(t, string(res.Body), `"items":[`, "written as JSON")
		})
	}
	g, _ := newGuard(t, ctxfit.Config{})
	_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Format: "yaml"}, serve([]byte(`[1]`), "application/json"))
	assert.Equal(t, 400, ctxfit.ProblemOf(err, ctxfit.Params{}).Status)
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n+n)
	for i := range n {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, s...)
	}
	return string(out)
}
