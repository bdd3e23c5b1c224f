package toon_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/toon"
)

// tokens returns the exact o200k_base count of text.
func tokens(tb testing.TB, text []byte) int {
	tb.Helper()
	c, err := budget.Exact("")
	require.NoError(tb, err)
	return c.Count(string(text))
}

// TestTheBookingsCostAQuarterFewerTokensPerItemAsTOON measures the example
// bookings of the MCP example servers (bookingtools, 500 of them) as the
// servers send them (compact JSON) and as TOON, by exact o200k_base count:
// flattened to rows (tags joined), TOON must take at least 25% fewer tokens
// per booking, so that a page of the same budget holds a third more. The
// figures of the README come from its log:
//
//	go test ./toon -run TokensPerItem -v
func TestTheBookingsCostAQuarterFewerTokensPerItemAsTOON(t *testing.T) {
	rows, err := json.Marshal(bookingtools.BookingRows(""))
	require.NoError(t, err)
	lists, err := json.Marshal(bookingtools.ListBookings(""))
	require.NoError(t, err)
	n := bookingtools.BookingCount

	type measure struct {
		name       string
		data       []byte
		opts       *toon.Options
		json, toon int
	}
	ms := []measure{
		{name: "rows (tags joined), comma", data: rows},
		{name: "rows (tags joined), tab", data: rows, opts: &toon.Options{Delimiter: toon.Tab}},
		{name: "rows (tags joined), pipe", data: rows, opts: &toon.Options{Delimiter: toon.Pipe}},
		{name: "as listed (tags a list): list items", data: lists},
	}
	for i := range ms {
		m := &ms[i]
		out, err := toon.Encode(nil, m.data, m.opts)
		require.NoError(t, err)
		back, err := toon.Decode(nil, out, m.opts)
		require.NoError(t, err)
		require.Equal(t, toon.Normal(m.data), string(back), "%s: the TOON decodes to the bookings", m.name)
		m.json, m.toon = tokens(t, m.data), tokens(t, out)
		t.Logf("%-38s JSON %6d tokens (%5.1f per booking), TOON %6d (%5.1f per booking): %4.1f%% fewer, %.2fx the bookings per page",
			m.name, m.json, float64(m.json)/float64(n), m.toon, float64(m.toon)/float64(n),
			100*(1-float64(m.toon)/float64(m.json)), float64(m.json)/float64(m.toon))
	}
	assert.LessOrEqual(t, float64(ms[0].toon), 0.75*float64(ms[0].json), "rows as TOON: at least 25%% fewer tokens per booking")
}

// BenchmarkEncode encodes the first n bookings (flattened rows) and reports
// the tokens per booking of the JSON and of the TOON.
func BenchmarkEncode(b *testing.B) {
	all := bookingtools.BookingRows("")
	for _, n := range []int{10, 100, 500} {
		data, err := json.Marshal(all[:n])
		require.NoError(b, err)
		b.Run(fmt.Sprintf("bookings=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			var out []byte
			for b.Loop() {
				out, err = toon.Encode(out[:0], data, nil)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tokens(b, data))/float64(n), "json-tokens/item")
			b.ReportMetric(float64(tokens(b, out))/float64(n), "toon-tokens/item")
		})
	}
}

// BenchmarkDecode decodes the TOON of the first n bookings.
func BenchmarkDecode(b *testing.B) {
	all := bookingtools.BookingRows("")
	for _, n := range []int{10, 100, 500} {
		data, err := json.Marshal(all[:n])
		require.NoError(b, err)
		src, err := toon.Encode(nil, data, nil)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("bookings=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			var out []byte
			for b.Loop() {
				out, err = toon.Decode(out[:0], src, nil)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
