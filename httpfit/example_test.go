package httpfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/telemetry"
)

func ExampleMiddleware() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of 32 bytes or more"}})
	if err != nil {
		panic(err)
	}
	defer g.Close()

	// An ordinary handler that returns 1,000 records at once.
	api := http.NewServeMux()
	api.HandleFunc("GET /orders", func(w http.ResponseWriter, r *http.Request) {
		orders := make([]map[string]any, 1000)
		for i := range orders {
			orders[i] = map[string]any{"id": i + 1, "note": strings.Repeat("lorem ipsum ", 5)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(orders)
	})
	h := httpfit.Middleware(g, nil)(api)

	type page struct {
		Items      []map[string]any `json:"items"`
		NextCursor string           `json:"nextCursor"`
	}
	var got int
	next := ""
	for {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/orders?cursor="+url.QueryEscape(next), nil))
		var p page
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			panic(err)
		}
		if got == 0 {
			fmt.Println(rec.Code, rec.Header().Get("Ctxfit-Strategy"), len(p.Items) < 1000, p.NextCursor != "")
		}
		got += len(p.Items)
		if next = p.NextCursor; next == "" {
			break
		}
	}
	fmt.Println("orders received:", got)

	// A cursor that was tampered with is a 400 with a suggestion.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/orders?cursor=nonsense", nil))
	var p ctxfit.Problem
	_ = json.Unmarshal(rec.Body.Bytes(), &p)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), p.Code)
	// Output:
	// 200 pagination true true
	// orders received: 1000
	// 400 application/problem+json cursor_invalid
}

func ExampleHealthHandler() {
	agg := telemetry.NewAggregate(nil)
	_ = agg.Record(context.Background(), telemetry.Record{Endpoint: "GET /orders", Strategy: telemetry.StrategyPagination,
		Outcome: telemetry.OutcomeShaped, TokensBefore: 30000, TokensAfter: 3900})

	rec := httptest.NewRecorder()
	httpfit.HealthHandler(agg).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/ctxfit", nil))
	var report telemetry.HealthReport
	_ = json.Unmarshal(rec.Body.Bytes(), &report)
	fmt.Println(rec.Code, report.Status, report.Totals.Count, report.Endpoints["GET /orders"].Count)
	// Output:
	// 200 ok 1 1
}
