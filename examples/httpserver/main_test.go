package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
	"github.com/ctxfit/ctxfit/telemetry"
)

const secret = "0123456789abcdef0123456789abcdef"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// start serves the example's wiring on a real listener.
func start(t *testing.T) *httptest.Server {
	t.Helper()
	ts, _ := startServer(t)
	return ts
}

// startServer is start, with the server's wiring.
func startServer(t *testing.T) (*httptest.Server, *server) {
	t.Helper()
	// A generous shaping time limit: under the race detector, counting the
	// 10,000-line log takes longer than the default 2 s, and the guard would
	// (correctly) fall back to byte cuts instead of line-aware chunks.
	cfg := withExampleEndpoints(ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Minute), AdmissionWait: ctxfit.Duration(time.Minute)})
	s, err := newServer(cfg, quiet)
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		ts.Close()
		_ = s.Close()
	})
	return ts, s
}

func get(t *testing.T, ts *httptest.Server, target string) (*http.Response, []byte) {
	t.Helper()
	resp, err := ts.Client().Get(ts.URL + target)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// raw is the handler's own response, without ctxfit.
func raw(t *testing.T, target string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	bookings.Handler().ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.Bytes()
}

func withCursor(target, cursor string) string {
	if cursor == "" {
		return target
	}
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + "cursor=" + url.QueryEscape(cursor)
}

// pageThrough follows nextCursor from target to the end and returns every
// item, failing if a page is not a shaped page.
func pageThrough(t *testing.T, ts *httptest.Server, target string) []bookings.Booking {
	t.Helper()
	var all []bookings.Booking
	cursor := ""
	for n := 0; ; n++ {
		require.Less(t, n, 200, "too many pages")
		resp, body := get(t, ts, withCursor(target, cursor))
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		require.Equal(t, "pagination", resp.Header.Get("Ctxfit-Strategy"))
		require.EqualValues(t, len(body), resp.ContentLength)
		var p struct {
			Items      []bookings.Booking `json:"items"`
			NextCursor string             `json:"nextCursor"`
			Meta       struct {
				EstimatedTokens int `json:"estimatedTokens"`
			} `json:"meta"`
		}
		require.NoError(t, json.Unmarshal(body, &p))
		assert.LessOrEqual(t, p.Meta.EstimatedTokens, ctxfit.DefaultHardCap)
		all = append(all, p.Items...)
		if cursor = p.NextCursor; cursor == "" {
			return all
		}
	}
}

// linkThrough follows the Link rel="next" headers from target to the end
// and returns every item; it never builds a URL itself.
func linkThrough(t *testing.T, ts *httptest.Server, target string) []bookings.Booking {
	t.Helper()
	var all []bookings.Booking
	next := ts.URL + target
	for n := 0; next != ""; n++ {
		require.Less(t, n, 200, "too many pages")
		resp, err := ts.Client().Get(next)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		var p struct {
			Items []bookings.Booking `json:"items"`
		}
		require.NoError(t, json.Unmarshal(body, &p))
		all = append(all, p.Items...)
		next = ""
		if link := resp.Header.Get("Link"); link != "" {
			u, ok := strings.CutSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
			require.True(t, ok, "a Link of RFC 8288's form: %s", link)
			next = u
		}
	}
	return all
}

func TestPagingThroughTheBookingsGivesEachExactlyOnce(t *testing.T) {
	ts := start(t)
	tests := []struct{ name, target string }{
		{"all bookings", "/api/v1/bookings"},
		{"the confirmed bookings, newest first", "/api/v1/bookings?status=confirmed&order=created_desc"},
		{"the cancelled bookings", "/api/v1/bookings?status=cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []bookings.Booking
			require.NoError(t, json.Unmarshal(raw(t, tt.target), &want))
			got := pageThrough(t, ts, tt.target)
			assert.Equal(t, want, got)
			assert.Equal(t, want, linkThrough(t, ts, tt.target), "the same, following the Link headers")
		})
	}
	t.Run("all 500 are there", func(t *testing.T) {
		assert.Len(t, pageThrough(t, ts, "/api/v1/bookings"), bookings.BookingCount)
	})
}

func TestDrillingIntoABooking(t *testing.T) {
	ts := start(t)
	const target = "/api/v1/bookings/BK00042"
	full := raw(t, target)

	resp, body := get(t, ts, target)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "summary", resp.Header.Get("Ctxfit-Strategy"))
	assert.Less(t, len(body), len(full)/2)
	var summary struct {
		Summary struct {
			ID string `json:"id"`
		} `json:"summary"`
		Meta struct {
			DetailsAvailable struct {
				Endpoint   string            `json:"endpoint"`
				Parameters map[string]string `json:"parameters"`
			} `json:"detailsAvailable"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal(body, &summary), string(body))
	assert.Equal(t, "BK00042", summary.Summary.ID)
	assert.Equal(t, target, summary.Meta.DetailsAvailable.Endpoint)

	resp, body = get(t, ts, target+"?fields=all")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, full, body, "fields=all gives the whole booking as the API wrote it")

	resp, body = get(t, ts, target+"?fields=priceBreakdown,policies")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var part, whole map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &part))
	require.NoError(t, json.Unmarshal(full, &whole))
	assert.Equal(t, map[string]json.RawMessage{"priceBreakdown": whole["priceBreakdown"], "policies": whole["policies"]}, part)
}

func TestReadingTheWholeLogThroughChunkCursors(t *testing.T) {
	ts := start(t)
	const target = "/api/v1/logs/app"
	want := raw(t, target)
	var got strings.Builder
	cursor := ""
	for n := 0; ; n++ {
		require.Less(t, n, 2000, "too many chunks")
		resp, body := get(t, ts, withCursor(target, cursor))
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		require.Equal(t, "chunking", resp.Header.Get("Ctxfit-Strategy"))
		var ch struct {
			Content    string `json:"content"`
			NextCursor string `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal(body, &ch))
		got.WriteString(ch.Content)
		if cursor = ch.NextCursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, string(want), got.String(), "byte for byte")
}

func TestBadInputIsAnsweredWithAProblem(t *testing.T) {
	ts := start(t)
	_, body := get(t, ts, "/api/v1/bookings?status=confirmed")
	var first struct {
		NextCursor string `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(body, &first))
	require.NotEmpty(t, first.NextCursor)
	c := url.QueryEscape(first.NextCursor)
	tampered := []byte(first.NextCursor)
	tampered[len(tampered)/2] ^= 2
	_, body = get(t, ts, "/api/v1/logs/app")
	var chunk struct {
		NextCursor string `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(body, &chunk))
	require.NotEmpty(t, chunk.NextCursor)
	logCursor := url.QueryEscape(chunk.NextCursor)

	tests := []struct{ name, target, code string }{
		{"a malformed cursor", "/api/v1/bookings?cursor=not-a-cursor", "cursor_invalid"},
		{"a tampered cursor", "/api/v1/bookings?status=confirmed&cursor=" + url.QueryEscape(string(tampered)), "cursor_invalid"},
		{"a cursor on another endpoint", "/api/v1/logs/app?status=confirmed&cursor=" + c, "cursor_mismatch"},
		{"a cursor with another filter", "/api/v1/bookings?status=pending&cursor=" + c, "cursor_mismatch"},
		{"a log's cursor on a log that does not exist", "/api/v1/logs/nope?cursor=" + logCursor, "cursor_mismatch"},
		{"a cursor that is not URL-encoded", "/api/v1/bookings?cursor=%zz", "parameter_invalid"},
		{"a limit over the maximum", "/api/v1/bookings?limit=1000", "limit_invalid"},
		{"a limit that is not a number", "/api/v1/bookings?limit=all", "limit_invalid"},
		{"an unknown field", "/api/v1/bookings/BK00001?fields=nosuch", "fields_invalid"},
		{"a line range past the end", "/api/v1/logs/app?startLine=20000&endLine=20001", "line_range_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is a 400 "+tt.code, func(t *testing.T) {
			resp, body := get(t, ts, tt.target)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
			assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
			var p ctxfit.Problem
			require.NoError(t, json.Unmarshal(body, &p))
			assert.Equal(t, tt.code, p.Code)
			assert.NotEmpty(t, p.Suggestion)
		})
	}
	t.Run("a malformed escape in the API's own parameter is the API's business", func(t *testing.T) {
		resp, body := get(t, ts, "/api/v1/bookings?status=%zz")
		assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.Equal(t, "pagination", resp.Header.Get("Ctxfit-Strategy"))
	})
	t.Run("the API's own errors pass through", func(t *testing.T) {
		resp, body := get(t, ts, "/api/v1/bookings/BK99999")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		assert.Contains(t, string(body), "no booking")
	})
}

func TestTheReportAndMetricsReflectTheTraffic(t *testing.T) {
	ts := start(t)
	get(t, ts, "/api/v1/bookings")
	get(t, ts, "/api/v1/bookings/BK00001")
	get(t, ts, "/api/v1/bookings?limit=x") // rejected before the Guard: not recorded

	var report telemetry.HealthReport
	require.Eventually(t, func() bool {
		resp, body := get(t, ts, "/debug/ctxfit")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, json.Unmarshal(body, &report))
		return report.Totals.Count >= 2
	}, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, telemetry.StatusOK, report.Status)
	assert.Equal(t, 1, report.Endpoints[bookings.ListPattern].Count)
	assert.Equal(t, 1, report.Endpoints[bookings.DetailPattern].Count)
	assert.Positive(t, report.Totals.TokensSaved)

	resp, body := get(t, ts, "/metrics")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "ctxfit_responses_total{")
	assert.Contains(t, string(body), "ctxfit_shaping_duration_seconds_bucket{")
	assert.Contains(t, string(body), `http_request_method="GET",http_route="/api/v1/bookings"`, "method and route are separate labels")
	assert.Contains(t, string(body), `ctxfit_strategy="pagination"`)
}

func TestHealthzIsALivenessCheckThatComputesNothing(t *testing.T) {
	ts, s := startServer(t)
	// Traffic that makes the report degraded: every response over the
	// hard cap. The liveness check does not look at it.
	for range telemetry.DefaultOversizeMinRecords {
		require.NoError(t, s.aggregate.Record(context.Background(), telemetry.Record{
			Endpoint: bookings.ListPattern, Strategy: telemetry.StrategyPagination, Outcome: telemetry.OutcomeOversize,
			TokensBefore: 90000, TokensAfter: 3900, HardCap: 12000}))
	}
	resp, body := get(t, ts, "/debug/ctxfit")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var report telemetry.HealthReport
	require.NoError(t, json.Unmarshal(body, &report))
	require.Equal(t, telemetry.StatusDegraded, report.Status, "the report at its own path")

	tests := []struct {
		method string
		body   string
	}{
		{http.MethodGet, "{\"status\":\"ok\"}\n"},
		{http.MethodHead, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" /healthz is 200 ok, whatever the traffic", func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, ts.URL+"/healthz", nil)
			require.NoError(t, err)
			resp, err := ts.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tt.body, string(b), "nothing of the report")
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
		})
	}
	t.Run("POST /healthz is not allowed", func(t *testing.T) {
		resp, err := ts.Client().Post(ts.URL+"/healthz", "text/plain", nil)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	})
}

func TestLoadConfigLaysTheEnvironmentOverTheExampleSettings(t *testing.T) {
	env := map[string]string{"CTXFIT_THRESHOLD": "3000", "CTXFIT_SECRET": secret}
	cfg, err := loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, 3000, cfg.Threshold)
	require.Len(t, cfg.Endpoints, 1)
	assert.Equal(t, bookings.DetailPattern, cfg.Endpoints[0].Match)
	assert.Equal(t, bookings.DetailThreshold, cfg.Endpoints[0].Threshold)

	env["CTXFIT_THRESHOLD"] = "many"
	_, err = loadConfig(func(k string) string { return env[k] })
	assert.ErrorContains(t, err, "CTXFIT_THRESHOLD")
}

func TestRunServesUntilItsContextEndsThenShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "127.0.0.1:0", func(k string) string { return map[string]string{"CTXFIT_SECRET": secret}[k] },
			quiet, func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}

func TestAChangedConfigFileAppliesToNewRequests(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ctxfit.yaml")
	require.NoError(t, os.WriteFile(path, []byte("threshold: 4000\n"), 0o600))
	env := map[string]string{"CTXFIT_SECRET": secret, "CTXFIT_CONFIG": path}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "127.0.0.1:0", func(k string) string { return env[k] }, quiet, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	pageSize := func() int {
		resp, err := http.Get("http://" + addr + "/api/v1/bookings?limit=200")
		require.NoError(t, err)
		defer resp.Body.Close()
		var page struct {
			Meta struct {
				PageSize int `json:"pageSize"`
			} `json:"meta"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
		return page.Meta.PageSize
	}
	before := pageSize()
	require.Greater(t, before, 20)

	require.NoError(t, os.WriteFile(path, []byte("threshold: 1000\n"), 0o600))
	require.Eventually(t, func() bool { return pageSize() < before/2 }, 10*time.Second, 50*time.Millisecond,
		"a smaller threshold makes smaller pages once the file changes")

	require.NoError(t, os.WriteFile(path, []byte("threshold: -5\n"), 0o600))
	time.Sleep(300 * time.Millisecond) // give the watcher a chance to (wrongly) apply it
	assert.Less(t, pageSize(), before/2, "an invalid change keeps the previous settings")
	cancel()
	require.NoError(t, <-done)
}

func TestSearchAndQueryAnswerInOneRequest(t *testing.T) {
	ts := start(t)
	log := string(raw(t, "/api/v1/logs/app"))
	lines := strings.Split(log, "\n")
	want := 0
	for _, l := range lines {
		if strings.Contains(l, "lock wait timeout exceeded") {
			want++
		}
	}
	require.Positive(t, want)
	resp, body := get(t, ts, "/api/v1/logs/app?search="+url.QueryEscape("lock wait timeout exceeded")+"&searchContext=0")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var found struct {
		Matches []struct {
			Line int    `json:"line"`
			Text string `json:"text"`
		} `json:"matches"`
		Meta struct {
			TotalMatches int `json:"totalMatches"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal(body, &found))
	assert.Equal(t, want, found.Meta.TotalMatches, "every match counted")
	require.NotEmpty(t, found.Matches)
	for _, m := range found.Matches {
		assert.Equal(t, lines[m.Line-1], m.Text, "each match with its line number")
	}

	var bookings []bookings.Booking
	require.NoError(t, json.Unmarshal(raw(t, "/api/v1/bookings"), &bookings))
	cancelled := 0
	for _, b := range bookings {
		if b.Status == "cancelled" {
			cancelled++
		}
	}
	resp, body = get(t, ts, "/api/v1/bookings?jq="+url.QueryEscape(`[.[] | select(.status == "cancelled")] | length`))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.JSONEq(t, fmt.Sprintf("[%d]", cancelled), string(body), "the query's answer, over the whole list")
}
