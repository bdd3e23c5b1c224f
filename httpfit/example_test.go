package httpfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

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

func ExampleProblemType() {
	fmt.Println(httpfit.ProblemType("cursor_expired"))
	// Output:
	// https://github.com/ctxfit/ctxfit/blob/main/docs/problems.md#cursor_expired
}

// Shaped pages link to the next one, and answer a request that already
// has them with 304 Not Modified.
func ExampleMiddleware_linkAndETag() {
	// One clock for the Guard's cursors and the middleware's entity tags.
	now := func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of 32 bytes or more"}, Now: now})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	api := http.NewServeMux()
	api.HandleFunc("GET /orders", func(w http.ResponseWriter, r *http.Request) {
		orders := make([]map[string]any, 1000)
		for i := range orders {
			orders[i] = map[string]any{"id": i + 1, "status": r.URL.Query().Get("status")}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(orders)
	})
	h := httpfit.Middleware(g, &httpfit.Options{Now: now})(api)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://example.com/orders?status=open", nil))
	link, etag := rec.Header().Get("Link"), rec.Header().Get("ETag")
	fmt.Println(rec.Code, strings.HasPrefix(link, "<http://example.com/orders?status=open&cursor="), strings.HasSuffix(link, `>; rel="next"`))
	fmt.Println(strings.HasPrefix(etag, `W/"`))

	// The same request with the tag it got: nothing changed.
	req := httptest.NewRequest("GET", "http://example.com/orders?status=open", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Body.Len(), rec.Header().Get("ETag") == etag)
	// Output:
	// 200 true true
	// true
	// 304 0 true
}
