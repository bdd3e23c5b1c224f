package summary_test

import (
	"testing"

	"github.com/ctxfit/ctxfit/summary"
)

// BenchmarkProject measures a projection of the verbose booking (about
// 3,200 tokens, 14 kB) on seven paths, two of them nested and one through
// an array. The throughput is that of the input bytes.
func BenchmarkProject(b *testing.B) {
	data := mustJSON(verboseBooking())
	paths := []string{"id", "status", "guestName", "guest.address.city", "priceBreakdown.total", "amenities.code", "propertyId"}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := summary.Project(data, paths); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummarize measures one summary of the verbose booking with the
// gateway budget (2,000 tokens; summaries within 500): automatic selection,
// where every candidate field costs one exact count of the summary, and a
// configured projection, which costs one.
func BenchmarkSummarize(b *testing.B) {
	data := mustJSON(verboseBooking())
	s := newSummarizer(b, &summary.Options{Budget: gatewayBudget})
	shapes := []struct {
		name  string
		shape summary.Shape
	}{
		{"auto", bookingShape},
		{"projected", summary.Shape{Endpoint: "/api/v1/bookings/{id}", Fields: []string{"id", "status", "guestName", "checkInDate", "checkOutDate", "totalPrice", "propertyId"}}},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var r *summary.Result
			for b.Loop() {
				var err error
				if r, err = s.Summarize(data, sh.shape); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r.ReductionPercent, "%reduction")
		})
	}
}

// BenchmarkFormat measures one compact rendering of a search_nodes response
// of 20 nodes, metrics included.
func BenchmarkFormat(b *testing.B) {
	f, err := summary.NewFormatter(graphFormats, nil)
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"nodes":[`)
	for i := range 20 {
		if i > 0 {
			raw = append(raw, ',')
		}
		raw = append(raw, `{"uuid":"550e8400-e29b-41d4-a716-446655440000","name":"Alice","entity_type":"Person","summary":"Alice is an engineer who works on the knowledge graph team in Berlin.","created_at":"2026-01-18T12:00:00Z","labels":["Person"]}`...)
	}
	raw = append(raw, "]}"...)
	b.ReportAllocs()
	for b.Loop() {
		if out := f.Format(b.Context(), "search_nodes", raw); out.Fallback != nil {
			b.Fatal(out.Fallback)
		}
	}
}
