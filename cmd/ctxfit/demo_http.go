package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
)

// demoHTTP runs the example bookings API behind httpfit on a loopback
// listener and walks one request of each kind, printing tokens before (the
// bare handler's response) and after (what the middleware sent).
func demoHTTP(w io.Writer, counter budget.Counter) error {
	g, err := ctxfit.New(&ctxfit.Options{Config: bookings.Config(), Counter: counter,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer g.Close()
	raw := bookings.Handler()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: httpfit.Middleware(g, nil)(raw), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(w, "\n== HTTP: the example bookings API behind httpfit, on %s\n\n", base)

	before := func(target string) int { // what the bare handler sends
		rec := httptest.NewRecorder()
		raw.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		return counter.Count(rec.Body.String())
	}
	get := func(target string) (*http.Response, string, error) {
		resp, err := http.Get(base + target)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp, string(body), err
	}
	show := func(label, target string, rawTarget string) (string, error) {
		resp, body, err := get(target)
		if err != nil {
			return "", err
		}
		strategy := resp.Header.Get("Ctxfit-Strategy")
		if strategy == "" {
			strategy = "passthrough"
		}
		fmt.Fprintf(w, "  %-34s %d %-11s tokens %6d -> %5d\n", label, resp.StatusCode, strategy, before(rawTarget), counter.Count(body))
		return body, nil
	}

	body, err := show("GET /api/v1/bookings", "/api/v1/bookings", "/api/v1/bookings")
	if err != nil {
		return err
	}
	var page struct {
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil || page.NextCursor == "" {
		return errors.New("the first page of bookings has no cursor")
	}
	if _, err := show("  ...?cursor=<nextCursor>", "/api/v1/bookings?cursor="+url.QueryEscape(page.NextCursor), "/api/v1/bookings"); err != nil {
		return err
	}
	if _, err := show("GET /api/v1/bookings/BK00042", "/api/v1/bookings/BK00042", "/api/v1/bookings/BK00042"); err != nil {
		return err
	}
	if _, err := show("  ...?fields=all", "/api/v1/bookings/BK00042?fields=all", "/api/v1/bookings/BK00042"); err != nil {
		return err
	}
	body, err = show("GET /api/v1/logs/app", "/api/v1/logs/app", "/api/v1/logs/app")
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil || page.NextCursor == "" {
		return errors.New("the first chunk of the log has no cursor")
	}
	if _, err := show("  ...?cursor=<nextCursor>", "/api/v1/logs/app?cursor="+url.QueryEscape(page.NextCursor), "/api/v1/logs/app"); err != nil {
		return err
	}
	if _, err := show("  ...?startLine=100&endLine=120", "/api/v1/logs/app?startLine=100&endLine=120", "/api/v1/logs/app"); err != nil {
		return err
	}
	resp, body, err := get("/api/v1/bookings?status=pending&cursor=" + url.QueryEscape(page.NextCursor))
	if err != nil {
		return err
	}
	var problem ctxfit.Problem
	if err := json.Unmarshal([]byte(body), &problem); err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-34s %d %s: %s\n", "a log cursor on the bookings list", resp.StatusCode, problem.Code, problem.Suggestion)
	return nil
}
