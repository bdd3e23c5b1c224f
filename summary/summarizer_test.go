package summary_test

import (
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/summary"
)

// gatewayBudget is the API-to-MCP gateway's: responses above 2,000 tokens
// are summarized.
var gatewayBudget = budget.Budget{Threshold: 2000, HardCap: 6000}

var (
	bookingShape = summary.Shape{Endpoint: "/api/v1/bookings/{id}"}
	animalShape  = summary.Shape{
		Endpoint: "/api/v1/animals/{LpnId}",
		TopN:     []summary.TopN{{Path: "Traits", Score: "accuracy", N: 3, Min: 50}},
	}
)

// lookup returns the value at a dotted path of a decoded JSON value.
func lookup(v any, path string) (any, bool) {
	for _, seg := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

func TestSummarizeCutsTheExampleDataSetsByAtLeast70Percent(t *testing.T) {
	s := newSummarizer(t, &summary.Options{Budget: gatewayBudget})
	c := exactCounter(t)
	tests := []struct {
		name     string
		data     []byte
		shape    summary.Shape
		identity []string
	}{
		{
			name:     "the verbose booking",
			data:     mustJSON(verboseBooking()),
			shape:    bookingShape,
			identity: []string{"id", "propertyId", "guest.guestId", "propertyDetails.propertyId", "propertyDetails.hostId"},
		},
		{
			name:     "the animal record",
			data:     mustJSON(animalRecord()),
			shape:    animalShape,
			identity: []string{"LpnId"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is summarized to under 30% of its tokens and keeps every identity field", func(t *testing.T) {
			before := c.Count(string(tt.data))
			require.Greater(t, before, gatewayBudget.Threshold)
			r, err := s.Summarize(tt.data, tt.shape)
			require.NoError(t, err)
			require.True(t, r.Summarized)

			after := c.Count(string(r.Response))
			assert.Equal(t, before, r.TokensBefore)
			assert.Equal(t, after, r.TokensAfter)
			assert.GreaterOrEqual(t, r.ReductionPercent, 70.0)
			assert.GreaterOrEqual(t, 100*float64(before-after)/float64(before), 70.0, "by exact count")
			t.Logf("%s: %d -> %d tokens (%.1f%% less)", tt.name, before, after, r.ReductionPercent)

			full, sum := decode(t, tt.data), decode(t, r.Summary.Summary)
			for _, p := range tt.identity {
				want, ok := lookup(full, p)
				require.True(t, ok, p)
				got, ok := lookup(sum, p)
				assert.True(t, ok, "identity field %s is kept", p)
				assert.Equal(t, want, got, p)
				assert.Contains(t, r.Summary.Meta.ProjectedFields, p)
			}
			assertPartOf(t, sum, full)

			wire, err := json.Marshal(r.Summary)
			require.NoError(t, err)
			assert.Equal(t, string(r.Response), string(wire), "the response is the marshalled summary")
		})
	}
}

func TestSummaryGolden(t *testing.T) {
	s := newSummarizer(t, &summary.Options{Budget: gatewayBudget})
	tests := []struct {
		name  string
		data  []byte
		shape summary.Shape
	}{
		{"booking_auto", mustJSON(verboseBooking()), bookingShape},
		{"booking_projected", mustJSON(verboseBooking()), summary.Shape{
			Endpoint: "/api/v1/bookings/{id}",
			Fields:   []string{"id", "status", "guestName", "checkInDate", "checkOutDate", "totalPrice", "propertyId"},
		}},
		{"animal_top_traits", mustJSON(animalRecord()), animalShape},
	}
	for _, tt := range tests {
		t.Run("the "+tt.name+" summary matches its golden file", func(t *testing.T) {
			r, err := s.Summarize(tt.data, tt.shape)
			require.NoError(t, err)
			checkGolden(t, tt.name+".json", indent(t, r.Response))
		})
	}
}

func TestSummarizePassesResponsesAtTheThresholdThroughUnchanged(t *testing.T) {
	s := newSummarizer(t, &summary.Options{Budget: budget.Budget{Threshold: 50, HardCap: 100}})
	tests := []struct {
		name string
		data []byte
	}{
		{"a small object with odd white space", []byte("{ \"id\" : 1,\n  \"price\": 1.50e0 }")},
		{"a JSON string", []byte(`"hello"`)},
		{"bytes that are not JSON", []byte(`not json`)},
		{"an empty input", []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is returned as the same slice", func(t *testing.T) {
			r, err := s.Summarize(tt.data, summary.Shape{})
			require.NoError(t, err)
			assert.False(t, r.Summarized)
			assert.Nil(t, r.Summary)
			assert.Equal(t, tt.data, r.Response)
			if len(tt.data) > 0 {
				assert.Same(t, &tt.data[0], &r.Response[0])
			}
			assert.Equal(t, r.TokensBefore, r.TokensAfter)
			assert.Zero(t, r.ReductionPercent)
		})
	}
}

func TestSummarizeWithConfiguredFields(t *testing.T) {
	s := newSummarizer(t, &summary.Options{Budget: gatewayBudget})
	data := mustJSON(verboseBooking())
	tests := []struct {
		name       string
		fields     []string
		wantFields string
		wantKind   string
	}{
		{
			name:       "top-level fields leave the other sections to the drill-down",
			fields:     []string{"id", "status", "totalPrice"},
			wantFields: "amenities,checkInDate,checkOutDate,createdAt,currency,description,guest,guestCount,guestEmail,guestName,guestPhone,policies,priceBreakdown,propertyDetails,propertyId",
			wantKind:   summary.KindPreview,
		},
		{
			name:       "a nested path leaves its section to the drill-down",
			fields:     []string{"id", "guest.address.city", "amenities.code"},
			wantFields: "amenities,checkInDate,checkOutDate,createdAt,currency,description,guest,guestCount,guestEmail,guestName,guestPhone,policies,priceBreakdown,propertyDetails,propertyId,status,totalPrice",
			wantKind:   summary.KindPreview,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.Summarize(data, summary.Shape{Endpoint: "/api/v1/bookings/{id}", Fields: tt.fields})
			require.NoError(t, err)
			assert.Equal(t, tt.wantKind, r.Summary.Meta.Kind)
			assert.Equal(t, tt.fields, r.Summary.Meta.ProjectedFields)
			assert.Equal(t, 18, r.Summary.Meta.TotalFields)
			require.NotNil(t, r.Summary.Meta.DetailsAvailable)
			assert.Equal(t, "/api/v1/bookings/BK12345", r.Summary.Meta.DetailsAvailable.Endpoint)
			assert.Equal(t, map[string]string{"fields": tt.wantFields}, r.Summary.Meta.DetailsAvailable.Parameters)
			assertPartOf(t, decode(t, r.Summary.Summary), decode(t, data))
		})
	}

	t.Run("a projection of every field is full and has no drill-down link", func(t *testing.T) {
		small := newSummarizer(t, &summary.Options{Budget: budget.Budget{Threshold: 5, HardCap: 100}})
		r, err := small.Summarize([]byte(`{"id":"a","name":"a long enough name to pass the threshold"}`), summary.Shape{Fields: []string{"id", "name"}})
		require.NoError(t, err)
		assert.Equal(t, summary.KindFull, r.Summary.Meta.Kind)
		assert.Nil(t, r.Summary.Meta.DetailsAvailable)
		assert.NotContains(t, string(r.Response), "detailsAvailable")
	})
}

func TestAutomaticSelection(t *testing.T) {
	longText := strings.Repeat("lorem ipsum dolor ", 100)
	tests := []struct {
		name    string
		data    string
		opts    summary.Options
		want    string
		wantErr error
	}{
		{
			name: "identity fields stay even when they alone are over the summary budget",
			data: `{"id":"` + strings.Repeat("x", 300) + `","bookingId":"B1","status":"ok","note":"` + longText + `"}`,
			opts: summary.Options{Budget: budget.Budget{Threshold: 10, HardCap: 1000}, SummaryTokens: 1},
			want: `{"id":"` + strings.Repeat("x", 300) + `","bookingId":"B1"}`,
		},
		{
			name: "long text is cut at a word boundary with the characters left out and the parameter that fetches them",
			data: `{"id":1,"description":"` + longText + `"}`,
			opts: summary.Options{Budget: budget.Budget{Threshold: 10, HardCap: 1000}, SummaryTokens: 200, TextLimit: 20},
			want: `{"id":1,"description":"lorem ipsum dolor… [1,783 more characters; fields=description]"}`,
		},
		{
			name: "primary fields come before other short scalars when the budget is tight",
			data: `{"color":"red","material":"steel","id":7,"name":"Kettle","status":"active","notes":"` + longText + `"}`,
			opts: summary.Options{Budget: budget.Budget{Threshold: 100, HardCap: 1000}, SummaryTokens: 56},
			want: `{"id":7,"name":"Kettle","status":"active"}`,
		},
		{
			name: "nested objects give their primary scalars and keep their nesting",
			data: `{"id":7,"guest":{"guestId":"G1","name":"Ann","address":{"city":"Rome"}},"blob":"` + longText + `"}`,
			opts: summary.Options{Budget: budget.Budget{Threshold: 10, HardCap: 1000}, SummaryTokens: 90},
			want: `{"id":7,"guest":{"guestId":"G1","name":"Ann"}}`,
		},
		{
			name:    "an array cannot be selected from automatically",
			data:    `[{"id":1,"text":"` + longText + `"}]`,
			opts:    summary.Options{Budget: budget.Budget{Threshold: 10, HardCap: 1000}},
			wantErr: summary.ErrNotObject,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSummarizer(t, &tt.opts)
			r, err := s.Summarize([]byte(tt.data), summary.Shape{})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.True(t, strings.HasPrefix(err.Error(), "summary: "), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(r.Summary.Summary))
		})
	}
}

func TestSummarizeErrors(t *testing.T) {
	big := `{"id":"` + strings.Repeat("y", 400) + `"}`
	tests := []struct {
		name    string
		opts    summary.Options
		data    string
		shape   summary.Shape
		wantErr error
		check   func(t *testing.T, err error)
	}{
		{
			name:    "invalid JSON above the threshold is ErrInvalidJSON",
			opts:    summary.Options{Budget: budget.Budget{Threshold: 1, HardCap: 10}},
			data:    `{"id": 1,`,
			wantErr: summary.ErrInvalidJSON,
		},
		{
			name:    "an unknown configured path is an UnknownPathError",
			opts:    summary.Options{Budget: budget.Budget{Threshold: 1, HardCap: 100}},
			data:    `{"id":1,"status":"ok"}`,
			shape:   summary.Shape{Fields: []string{"id", "price"}},
			wantErr: summary.ErrUnknownPath,
		},
		{
			name:    "a summary over the hard cap is a TooLargeError",
			opts:    summary.Options{Budget: budget.Budget{Threshold: 10, HardCap: 20}, SummaryTokens: 5},
			data:    big,
			wantErr: summary.ErrTooLarge,
			check: func(t *testing.T, err error) {
				var tl *summary.TooLargeError
				require.ErrorAs(t, err, &tl)
				assert.Equal(t, 20, tl.HardCap)
				assert.Greater(t, tl.Tokens, 20)
			},
		},
		{
			name:    "a TopN rule without N is invalid",
			opts:    summary.Options{Budget: budget.Budget{Threshold: 1, HardCap: 100}},
			data:    `{"id":1,"traits":[]}`,
			shape:   summary.Shape{TopN: []summary.TopN{{Path: "traits", Score: "accuracy"}}},
			wantErr: summary.ErrInvalidOptions,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSummarizer(t, &tt.opts)
			_, err := s.Summarize([]byte(tt.data), tt.shape)
			require.ErrorIs(t, err, tt.wantErr)
			assert.True(t, strings.HasPrefix(err.Error(), "summary: "), err.Error())
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

func TestNewRejectsOptionsOutOfRange(t *testing.T) {
	tests := []struct {
		name string
		opts summary.Options
		want string
	}{
		{"a hard cap below the threshold", summary.Options{Budget: budget.Budget{Threshold: 100, HardCap: 10}}, "hardCap 10 must be >= threshold 100"},
		{"a summary budget above the hard cap", summary.Options{Budget: budget.Budget{Threshold: 100, HardCap: 200}, SummaryTokens: 300}, "SummaryTokens 300"},
		{"a negative summary budget", summary.Options{SummaryTokens: -1}, "SummaryTokens -1"},
		{"a negative text limit", summary.Options{TextLimit: -1}, "TextLimit -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is rejected", func(t *testing.T) {
			_, err := summary.New(&tt.opts)
			require.ErrorIs(t, err, summary.ErrInvalidOptions)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("nil options give the default budget", func(t *testing.T) {
		s, err := summary.New(nil)
		require.NoError(t, err)
		assert.Equal(t, budget.Default(), s.Budget())
	})
}

func TestEndpointTemplate(t *testing.T) {
	s := newSummarizer(t, &summary.Options{Budget: budget.Budget{Threshold: 1, HardCap: 1000}})
	data := []byte(`{"id":"BK 1/2","tenant":42,"nested":{"x":1},"status":"ok","extra":[1,2,3,4,5,6,7,8,9,10]}`)
	tests := []struct{ template, want string }{
		{"/api/v1/bookings/{id}", "/api/v1/bookings/BK%201%2F2"},
		{"/t/{tenant}/b/{id}", "/t/42/b/BK%201%2F2"},
		{"/api/v1/bookings/{missing}", "/api/v1/bookings/{missing}"},
		{"/api/{nested}", "/api/{nested}"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run("the template "+tt.template+" becomes "+tt.want, func(t *testing.T) {
			r, err := s.Summarize(data, summary.Shape{Endpoint: tt.template, Fields: []string{"id"}})
			require.NoError(t, err)
			assert.Equal(t, tt.want, r.Summary.Meta.DetailsAvailable.Endpoint)
		})
	}
}

func TestTopN(t *testing.T) {
	s := newSummarizer(t, &summary.Options{Budget: gatewayBudget})
	data := mustJSON(animalRecord())
	r, err := s.Summarize(data, animalShape)
	require.NoError(t, err)

	t.Run("keeps at most N elements, scoring at least Min, best first", func(t *testing.T) {
		sum := decode(t, r.Summary.Summary).(map[string]any)
		traits := sum["Traits"].([]any)
		require.Len(t, traits, 3)
		prev := 101.0
		for _, tr := range traits {
			acc, err := tr.(map[string]any)["accuracy"].(json.Number).Float64()
			require.NoError(t, err)
			assert.GreaterOrEqual(t, acc, 50.0)
			assert.LessOrEqual(t, acc, prev)
			prev = acc
		}
	})
	t.Run("reports how many elements were left out", func(t *testing.T) {
		assert.Equal(t, map[string]int{"Traits": 45}, r.Summary.Meta.OmittedItems)
		assert.Contains(t, r.Summary.Meta.DetailsAvailable.Parameters["fields"], "Traits")
	})
	t.Run("keeps every element of the best ones, byte for byte", func(t *testing.T) {
		full := decode(t, data).(map[string]any)
		sum := decode(t, r.Summary.Summary).(map[string]any)
		for _, tr := range sum["Traits"].([]any) {
			assert.Contains(t, full["Traits"], tr)
		}
	})
	t.Run("applies through arrays", func(t *testing.T) {
		small := newSummarizer(t, &summary.Options{Budget: budget.Budget{Threshold: 1, HardCap: 1000}})
		r, err := small.Summarize([]byte(`{"herd":[{"t":[{"a":1},{"a":9},{"a":5}]},{"t":[{"a":"7"},{"b":1}]}]}`),
			summary.Shape{Fields: []string{"herd"}, TopN: []summary.TopN{{Path: "herd.t", Score: "a", N: 2, Min: 2}}})
		require.NoError(t, err)
		assert.Equal(t, `{"herd":[{"t":[{"a":9},{"a":5}]},{"t":[{"a":"7"}]}]}`, string(r.Summary.Summary))
		assert.Equal(t, map[string]int{"herd.t": 2}, r.Summary.Meta.OmittedItems)
	})
}

func TestTop(t *testing.T) {
	type trait struct {
		Name     string
		Accuracy float64
	}
	traits := []trait{{"a", 40}, {"b", 90}, {"c", 70}, {"d", 90}, {"e", 55}, {"f", 10}}
	score := func(t trait) (float64, bool) { return t.Accuracy, true }
	tests := []struct {
		name        string
		n           int
		min         float64
		want        []string
		wantOmitted int
	}{
		{"the top three above 50 are kept, ties in input order", 3, 50, []string{"b", "d", "c"}, 3},
		{"fewer than N qualify", 10, 60, []string{"b", "d", "c"}, 3},
		{"N of zero keeps none", 0, 0, []string{}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, omitted := summary.Top(traits, tt.n, tt.min, score)
			names := []string{}
			for _, k := range kept {
				names = append(names, k.Name)
			}
			assert.Equal(t, tt.want, names)
			assert.Equal(t, tt.wantOmitted, omitted)
		})
	}
}

func TestSummarizeValueAndTyped(t *testing.T) {
	type booking struct {
		ID          string `json:"id"`
		Status      string `json:"status"`
		Description string `json:"description"`
	}
	s := newSummarizer(t, &summary.Options{Budget: budget.Budget{Threshold: 20, HardCap: 1000}})
	r, err := summary.SummarizeValue(s, booking{ID: "BK1", Status: "confirmed", Description: strings.Repeat("word ", 100)},
		summary.Shape{Fields: []string{"id", "status"}})
	require.NoError(t, err)
	typed, err := summary.Typed[booking](*r.Summary)
	require.NoError(t, err)
	assert.Equal(t, booking{ID: "BK1", Status: "confirmed"}, typed.Summary)
	assert.Equal(t, r.Summary.Meta, typed.Meta)
}

func TestSummarizerIsSafeForConcurrentUse(t *testing.T) {
	s := newSummarizer(t, &summary.Options{Budget: gatewayBudget})
	data := mustJSON(verboseBooking())
	want, err := s.Summarize(data, bookingShape)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r, err := s.Summarize(data, bookingShape)
			if assert.NoError(t, err) {
				assert.Equal(t, string(want.Response), string(r.Response))
			}
		})
	}
	wg.Wait()
}

// TestPropertyTopKeepsTheBestInOrder compares Top with sorting the whole
// list, on random lists with many equal scores, for every n.
func TestPropertyTopKeepsTheBestInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type item struct {
		id    int
		score float64
		has   bool
	}
	for c := range 200 {
		items := make([]item, rng.IntN(60))
		for i := range items {
			items[i] = item{id: i, score: float64(rng.IntN(8)), has: rng.IntN(5) > 0}
		}
		n, minScore := rng.IntN(70)-5, float64(rng.IntN(4))
		var want []item
		for _, it := range items {
			if it.has && it.score >= minScore {
				want = append(want, it)
			}
		}
		slices.SortStableFunc(want, func(a, b item) int { return cmp.Compare(b.score, a.score) })
		want = want[:min(max(n, 0), len(want))]

		got, omitted := summary.Top(items, n, minScore, func(it item) (float64, bool) { return it.score, it.has })
		require.Equal(t, len(want), len(got), "case %d", c)
		for i := range want {
			assert.Equal(t, want[i].id, got[i].id, "case %d, rank %d", c, i)
		}
		assert.Equal(t, len(items)-len(want), omitted)
	}
}
