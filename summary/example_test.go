package summary_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/summary"
)

func ExampleProject() {
	data := []byte(`{"id":"BK1","price":{"basePrice":100.50,"tax":12},"guest":{"name":"Ann","address":{"city":"Rome","zip":"00100"}},"rooms":[{"id":1,"beds":2},{"id":2,"beds":1}]}`)
	out, _, err := summary.Project(data, []string{"id", "price.basePrice", "guest.address.city", "rooms.id"})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))

	_, _, err = summary.Project(data, []string{"id", "status"})
	fmt.Println(err)
	var unknown *summary.UnknownPathError
	fmt.Println(errors.As(err, &unknown), unknown.Paths)
	// Output:
	// {"id":"BK1","price":{"basePrice":100.50},"guest":{"address":{"city":"Rome"}},"rooms":[{"id":1},{"id":2}]}
	// summary: projection path "status" names no field of the input; the top-level fields are: id, price, guest, rooms; fix or remove the path
	// true [status]
}

func ExampleNew() {
	s, err := summary.New(&summary.Options{Budget: budget.Budget{Threshold: 2000, HardCap: 6000}})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Budget().Threshold, s.Budget().HardCap)

	_, err = summary.New(&summary.Options{Budget: budget.Budget{Threshold: 2000, HardCap: 6000}, SummaryTokens: 7000})
	fmt.Println(err)
	// Output:
	// 2000 6000
	// summary: invalid options: Options.SummaryTokens 7000 must be from 1 to the hard cap 6000 (or 0 for threshold/4)
}

func ExampleSummarizer_Summarize() {
	s, err := summary.New(&summary.Options{Budget: budget.Budget{Threshold: 60, HardCap: 1000}, SummaryTokens: 150, TextLimit: 40})
	if err != nil {
		panic(err)
	}
	shape := summary.Shape{Endpoint: "/api/v1/bookings/{id}"}

	// A small response passes through, byte for byte.
	small := []byte(`{"id": "BK1", "status": "confirmed"}`)
	r, _ := s.Summarize(small, shape)
	fmt.Printf("%t %s\n", r.Summarized, r.Response)

	// A large one is summarized automatically.
	large := []byte(`{"id":"BK12345","status":"confirmed","guestName":"John Doe","checkInDate":"2025-11-01",` +
		`"totalPrice":1200.00,"currency":"USD","amenities":["wifi","pool","parking","gym","sauna","spa","bar","garden","lift"],` +
		`"description":"` + strings.Repeat("A bright apartment with a view of the river. ", 20) + `"}`)
	r, err = s.Summarize(large, shape)
	if err != nil {
		panic(err)
	}
	var pretty json.RawMessage = r.Response
	b, _ := json.MarshalIndent(pretty, "", "  ")
	fmt.Println(string(b))
	fmt.Printf("%d -> %d tokens\n", r.TokensBefore, r.TokensAfter)
	// Output:
	// false {"id": "BK1", "status": "confirmed"}
	// {
	//   "summary": {
	//     "id": "BK12345",
	//     "status": "confirmed",
	//     "guestName": "John Doe",
	//     "checkInDate": "2025-11-01",
	//     "totalPrice": 1200.00,
	//     "currency": "USD",
	//     "description": "A bright apartment with a view of the… [863 more characters; fields=description]"
	//   },
	//   "meta": {
	//     "kind": "preview",
	//     "totalFields": 8,
	//     "projectedFields": [
	//       "id",
	//       "status",
	//       "guestName",
	//       "checkInDate",
	//       "totalPrice",
	//       "currency",
	//       "description"
	//     ],
	//     "detailsAvailable": {
	//       "endpoint": "/api/v1/bookings/BK12345",
	//       "parameters": {
	//         "fields": "amenities,description"
	//       }
	//     }
	//   }
	// }
	// 266 -> 124 tokens
}

func ExampleServeDetails() {
	full := []byte(`{"id":"BK1","status":"confirmed","priceBreakdown":{"base":1000,"tax":200},"policies":{"pets":false}}`)

	sections, err := summary.ServeDetails(full, "priceBreakdown,policies")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(sections))

	all, _ := summary.ServeDetails(full, "all")
	fmt.Println(string(all))

	_, err = summary.ServeDetails(full, "pricing")
	fmt.Println(err)
	// Output:
	// {"priceBreakdown":{"base":1000,"tax":200},"policies":{"pets":false}}
	// {"id":"BK1","status":"confirmed","priceBreakdown":{"base":1000,"tax":200},"policies":{"pets":false}}
	// summary: fields "pricing" not found; send fields=all for the whole object, or a comma-separated list of: id, status, priceBreakdown, policies
}

func ExampleTop() {
	type trait struct {
		Name     string
		Accuracy int
	}
	traits := []trait{{"BWT", 88}, {"WWT", 45}, {"PWWT", 91}, {"YEMD", 62}, {"NLW", 50}, {"FEC", 30}}
	top, omitted := summary.Top(traits, 3, 50, func(t trait) (float64, bool) { return float64(t.Accuracy), true })
	fmt.Println(top, "omitted:", omitted)
	// Output:
	// [{PWWT 91} {BWT 88} {YEMD 62}] omitted: 3
}

func ExampleTyped() {
	s, _ := summary.New(&summary.Options{Budget: budget.Budget{Threshold: 40, HardCap: 1000}})
	data := []byte(`{"id":"BK1","status":"confirmed","notes":"` + strings.Repeat("late arrival ", 20) + `"}`)
	r, err := s.Summarize(data, summary.Shape{Fields: []string{"id", "status"}})
	if err != nil {
		panic(err)
	}
	type bookingPreview struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	typed, err := summary.Typed[bookingPreview](*r.Summary)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v %s %v\n", typed.Summary, typed.Meta.Kind, typed.Meta.DetailsAvailable.Parameters)
	// Output:
	// {ID:BK1 Status:confirmed} preview map[fields:notes]
}

func ExampleNewFormatter() {
	now := func() time.Time { return time.Date(2026, 1, 18, 14, 0, 0, 0, time.UTC) }
	f, err := summary.NewFormatter(map[string]summary.Format{
		"get_episodes": {
			ID:     "get_episodes",
			Fields: []string{"episodes.name", "episodes.content", "episodes.created_at"},
			Template: `Recent episodes ({{len .episodes}}):
{{range .episodes}}- [{{relTime .created_at}}] {{.name}} - {{truncate 24 .content}}
{{end}}`,
		},
	}, &summary.FormatOptions{Now: now})
	if err != nil {
		panic(err)
	}
	raw := []byte(`{"episodes":[
	  {"uuid":"550e8400-e29b-41d4-a716-446655440000","name":"standup","content":"We discussed the release plan and the open bugs.","created_at":"2026-01-18T12:00:00Z","source_description":"meeting"},
	  {"uuid":"660e8400-e29b-41d4-a716-446655440001","name":"retro","content":"Ship smaller changes.","created_at":"2026-01-17T12:00:00Z","source_description":"meeting"}]}`)

	out := f.Format(context.Background(), "get_episodes", raw)
	fmt.Print(out.Text)
	m := out.Metrics
	fmt.Printf("bytes %d -> %d, tokens %d -> %d, %.0f%% saved\n", m.RawBytes, m.CompactBytes, m.RawTokens, m.CompactTokens, m.SavingsPercent)

	out = f.Format(context.Background(), "search_nodes", raw)
	fmt.Println(out.Metrics.UsedFallback, out.Fallback)
	// Output:
	// Recent episodes (2):
	// - [2h ago] standup - We discussed the...
	// - [1d ago] retro - Ship smaller changes.
	// bytes 379 -> 103, tokens 122 -> 30, 75% saved
	// true summary: no output format for the operation "search_nodes"; the JSON is sent as it is: add a Format for it to compact it
}

func ExampleSummarizer_SummarizeContext() {
	s, err := summary.New(&summary.Options{Budget: budget.Budget{Threshold: 1000, HardCap: 3000}})
	if err != nil {
		panic(err)
	}
	// A wide object: 600 variables, then what identifies it.
	var b strings.Builder
	b.WriteString("{")
	for i := range 600 {
		fmt.Fprintf(&b, `"VAR_%03d":"/usr/local/lib/node_modules/pkg%d/bin",`, i, i)
	}
	b.WriteString(`"id":"env-1","name":"server environment"}`)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := s.SummarizeContext(ctx, []byte(b.String()), summary.Shape{Endpoint: "/env/{id}"})
	if err != nil {
		panic(err)
	}
	m := r.Summary.Meta
	fmt.Println("shown:", m.ProjectedFields)
	fmt.Println("rest:", m.DetailsAvailable.Endpoint, m.DetailsAvailable.Parameters)
	fmt.Printf("%d fields, %d left out, the first %d named: %s, …\n",
		m.TotalFields, m.OmittedFieldCount, len(m.OmittedFields), strings.Join(m.OmittedFields[:3], ", "))
	fmt.Println("within the summary budget:", r.TokensAfter <= 1000/4)
	// Output:
	// shown: [VAR_000 VAR_001 VAR_002 VAR_003 id name]
	// rest: /env/env-1 map[fields:all]
	// 602 fields, 596 left out, the first 24 named: VAR_004, VAR_005, VAR_006, …
	// within the summary budget: true
}

func ExampleServeDetailsContext() {
	full := []byte(`{"id":"BK1","guest":{"name":"Ann","address":{"city":"Rome","zip":"00100"}},"rooms":[{"id":1,"rate":120.50},{"id":2,"rate":99.00}]}`)
	part, err := summary.ServeDetailsContext(context.Background(), full, "id,guest.address.city,rooms.rate")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(part))

	_, err = summary.ServeDetailsContext(context.Background(), full, "guest.phone")
	fmt.Println(err)
	// Output:
	// {"id":"BK1","guest":{"address":{"city":"Rome"}},"rooms":[{"rate":120.50},{"rate":99.00}]}
	// summary: projection path "guest.phone" names no field of the input; the top-level fields are: id, guest, rooms; fix or remove the path
}
