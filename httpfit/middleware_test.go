package httpfit_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/cache"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/internal/testing/fakeclock"
	"github.com/ctxfit/ctxfit/telemetry"
)

const secret = "0123456789abcdef0123456789abcdef"

// records collects the telemetry records of a Guard.
type records struct {
	mu  sync.Mutex
	all []telemetry.Record
}

func (r *records) Record(_ context.Context, rec telemetry.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rec)
	return nil
}

func (r *records) wait(t *testing.T, n int) []telemetry.Record {
	t.Helper()
	var out []telemetry.Record
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		out = append(out[:0], r.all...)
		return len(out) >= n
	}, 5*time.Second, time.Millisecond, "telemetry records")
	return out
}

type fixture struct {
	guard   *ctxfit.Guard
	clock   *fakeclock.Clock
	records *records
}

func newFixture(t *testing.T, opts ctxfit.Options) *fixture {
	t.Helper()
	if opts.Config.Secret == "" {
		opts.Config.Secret = secret
	}
	// Tests of what is sent, not of when: patient time limits, so that a
	// loaded machine turns no shape into a 503.
	if opts.Config.ShapeTimeout == 0 {
		opts.Config.ShapeTimeout = ctxfit.Duration(time.Hour)
	}
	if opts.Config.AdmissionWait == 0 {
		opts.Config.AdmissionWait = ctxfit.Duration(time.Hour)
	}
	f := &fixture{clock: fakeclock.New(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)), records: &records{}}
	opts.Now = f.clock.Now
	opts.Sink = f.records
	g, err := ctxfit.New(&opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	f.guard = g
	return f
}

var (
	items     = corpus.Items(500)
	itemsJSON = func() []byte {
		b, err := json.Marshal(items)
		if err != nil {
			panic(err)
		}
		return b
	}()
	bookingJSON = func() []byte {
		b, err := json.Marshal(corpus.Booking())
		if err != nil {
			panic(err)
		}
		return b
	}()
	logText = corpus.Log(3000)
)

// body returns a handler that writes b with the given content type and
// counts its calls.
func body(b []byte, contentType string, calls *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if calls != nil {
			calls.Add(1)
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Sat, 21 Nov 2026 10:00:00 GMT")
		w.Header().Set("X-Api-Version", "7")
		_, _ = w.Write(b)
	}
}

// api is a mux with two lists, a booking and a log.
func api(calls *atomic.Int32) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /api/bookings", body(itemsJSON, "application/json", calls))
	mux.Handle("GET /api/other", body(itemsJSON, "application/json", calls))
	mux.Handle("GET /api/bookings/{id}", body(bookingJSON, "application/json", calls))
	mux.Handle("GET /api/log", body([]byte(logText), "text/plain; charset=utf-8", calls))
	return mux
}

func do(h http.Handler, method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

type page struct {
	Items      []corpus.Item `json:"items"`
	NextCursor string        `json:"nextCursor"`
	Meta       struct {
		TotalCount int  `json:"totalCount"`
		HasMore    bool `json:"hasMore"`
	} `json:"meta"`
}

func decodePage(t *testing.T, rec *httptest.ResponseRecorder) page {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var p page
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	return p
}

// target adds a cursor to a request target.
func target(base, cursor string) string {
	if cursor == "" {
		return base
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "cursor=" + url.QueryEscape(cursor)
}

func TestAResponseUnderTheThresholdPassesThroughByteForByteWithItsHeaders(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	small := []byte(`{"id": 1,   "name": "small",  "tags": ["a", "b"]}`)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"abc"`)
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(small[:10])
		_, _ = w.Write(small[10:])
	})
	bare := do(handler, "GET", "/things/1")
	got := do(httpfit.Middleware(f.guard, nil)(handler), "GET", "/things/1")

	assert.Equal(t, bare.Code, got.Code)
	assert.Equal(t, small, got.Body.Bytes())
	assert.Equal(t, bare.Header(), got.Header())
}

func TestAJSONListIsPagedWithACorrectContentLengthAndEveryItemComesBackOnce(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	var calls atomic.Int32
	h := httpfit.Middleware(f.guard, nil)(api(&calls))

	var got []corpus.Item
	cursor := ""
	for n := 0; ; n++ {
		require.Less(t, n, 100, "too many pages")
		rec := do(h, "GET", target("/api/bookings", cursor))
		p := decodePage(t, rec)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		assert.Equal(t, "pagination", rec.Header().Get("Ctxfit-Strategy"))
		assert.Equal(t, rec.Body.Len(), atoi(t, rec.Header().Get("Content-Length")))
		if n == 0 {
			assert.NotEqual(t, `"v1"`, rec.Header().Get("ETag"), "the handler's validator no longer matches")
			assert.True(t, strings.HasPrefix(rec.Header().Get("ETag"), `W/"`), "the page's own, weak")
			assert.Empty(t, rec.Header().Get("Last-Modified"))
			assert.Equal(t, "7", rec.Header().Get("X-Api-Version"), "other headers are kept")
		}
		assert.Equal(t, 500, p.Meta.TotalCount)
		got = append(got, p.Items...)
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, items, got)
	assert.Equal(t, int32(1), calls.Load(), "in store mode continuations do not run the handler")
}

func TestALargeObjectIsSummarizedAndFieldsDrillDown(t *testing.T) {
	f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{Endpoints: []ctxfit.Endpoint{
		{Match: "GET /api/bookings/{id}", Threshold: 2000},
	}}})
	h := httpfit.Middleware(f.guard, nil)(api(nil))

	t.Run("the object is summarized with a drill-down link", func(t *testing.T) {
		rec := do(h, "GET", "/api/bookings/BK12345")
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, "summary", rec.Header().Get("Ctxfit-Strategy"))
		assert.Less(t, rec.Body.Len(), len(bookingJSON)/2)
		assert.Contains(t, rec.Body.String(), `/api/bookings/BK12345`)
		assert.Equal(t, rec.Body.Len(), atoi(t, rec.Header().Get("Content-Length")))
	})
	t.Run("fields=all returns the whole object as the handler wrote it", func(t *testing.T) {
		rec := do(h, "GET", "/api/bookings/BK12345?fields=all")
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, bookingJSON, rec.Body.Bytes())
		assert.Empty(t, rec.Header().Get("Ctxfit-Strategy"))
		assert.Equal(t, `"v1"`, rec.Header().Get("ETag"), "the body is the handler's: its validator still holds")
	})
	t.Run("named fields return exactly those", func(t *testing.T) {
		rec := do(h, "GET", "/api/bookings/BK12345?fields=priceBreakdown,policies")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
		assert.ElementsMatch(t, []string{"priceBreakdown", "policies"}, keys(got))
	})
}

func TestTextIsChunkedAndTheChunksGiveItBackByteForByte(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	h := httpfit.Middleware(f.guard, nil)(api(nil))
	var got strings.Builder
	cursor := ""
	for n := 0; ; n++ {
		require.Less(t, n, 1000)
		rec := do(h, "GET", target("/api/log", cursor))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		assert.Equal(t, "chunking", rec.Header().Get("Ctxfit-Strategy"))
		var ch struct {
			Content    string `json:"content"`
			NextCursor string `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ch))
		got.WriteString(ch.Content)
		if cursor = ch.NextCursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, logText, got.String())

	t.Run("a line range returns those lines", func(t *testing.T) {
		rec := do(h, "GET", "/api/log?startLine=3&endLine=5")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var ch struct {
			Content string `json:"content"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ch))
		lines := strings.SplitAfter(logText, "\n")
		assert.Equal(t, strings.Join(lines[2:5], ""), ch.Content)
	})
}

func TestResponsesToLeaveAlonePassThroughUntouched(t *testing.T) {
	big := itemsJSON // far over the threshold
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 1, 2, 3}, 50000)...)
	tests := []struct {
		name    string
		method  string
		handler http.HandlerFunc
		flushed bool
	}{
		{"a HEAD request", "HEAD", body(big, "application/json", nil), false},
		{"a 404 from the handler under the threshold", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"not found"}`))
		}, false},
		{"an image", "GET", body(png, "image/png", nil), false},
		{"an image without a content type", "GET", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(png) }, false},
		{"a compressed image without a content type", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gzipped(png))
		}, false},
		{"an event stream", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for range 3 {
				_, _ = w.Write([]byte("data: " + logText[:5000] + "\n\n"))
			}
		}, false},
		{"a handler that flushes", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(big[:100])
			w.(http.Flusher).Flush()
			_, _ = w.Write(big[100:])
		}, true},
		{"a handler that flushes through a ResponseController", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(big[:100])
			if err := http.NewResponseController(w).Flush(); err != nil {
				panic(err)
			}
			_, _ = w.Write(big[100:])
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name+" passes through", func(t *testing.T) {
			f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{MaxBufferBytes: 64 << 10}})
			bare := do(tt.handler, tt.method, "/x")
			got := do(httpfit.Middleware(f.guard, nil)(tt.handler), tt.method, "/x")
			assert.Equal(t, bare.Code, got.Code)
			assert.Equal(t, bare.Header(), got.Header())
			assert.True(t, bytes.Equal(bare.Body.Bytes(), got.Body.Bytes()), "the body is the handler's")
			assert.Equal(t, tt.flushed, got.Flushed)
			assert.Empty(t, got.Header().Get("Ctxfit-Strategy"))
		})
	}
}

// gzipped is b compressed with gzip.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// deflated is b compressed in RFC 9110's deflate (zlib's format).
func deflated(b []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

func TestACompressedBodyIsDecodedAndShapedWithinItsBound(t *testing.T) {
	exact, err := budget.Exact("")
	require.NoError(t, err)
	compressed := func(encoding string, b []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", encoding)
			w.Header().Set("Vary", "Accept-Encoding")
			_, _ = w.Write(b)
		}
	}
	t.Run("a gzip or deflate body over the threshold is shaped, sent uncompressed, and rebuilds the original", func(t *testing.T) {
		for _, tc := range []struct {
			encoding string
			body     []byte
		}{{"gzip", gzipped(itemsJSON)}, {"deflate", deflated(itemsJSON)}} {
			f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{Threshold: 1000, HardCap: 2000}})
			h := httpfit.Middleware(f.guard, nil)(compressed(tc.encoding, tc.body))
			var items []json.RawMessage
			cursor := ""
			for n := 0; ; n++ {
				require.Less(t, n, 1000)
				rec := do(h, "GET", target("/x", cursor))
				require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
				assert.Empty(t, rec.Header().Get("Content-Encoding"), "a shaped body goes out uncompressed")
				assert.LessOrEqual(t, exact.Count(rec.Body.String()), 2000, "nothing over the hard cap")
				var p struct {
					Items      []json.RawMessage `json:"items"`
					NextCursor string            `json:"nextCursor"`
				}
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p), rec.Body.String())
				items = append(items, p.Items...)
				if cursor = p.NextCursor; cursor == "" {
					break
				}
			}
			var want []json.RawMessage
			require.NoError(t, json.Unmarshal(itemsJSON, &want))
			assert.Equal(t, want, items, "every item, in order (%s)", tc.encoding)
		}
	})
	t.Run("a compressed body under the threshold goes out as the handler wrote it", func(t *testing.T) {
		f := newFixture(t, ctxfit.Options{})
		small := gzipped([]byte(`{"id":1}`))
		rec := do(httpfit.Middleware(f.guard, nil)(compressed("gzip", small)), "GET", "/x")
		assert.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
		assert.Equal(t, small, rec.Body.Bytes())
	})
	t.Run("a gzip bomb is refused at the buffer's bound with a 502 problem", func(t *testing.T) {
		f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{MaxBufferBytes: 64 << 10}})
		bomb := gzipped(bytes.Repeat([]byte(" "), 10<<20)) // 10 KB that decode to 10 MiB
		rec := do(httpfit.Middleware(f.guard, nil)(compressed("gzip", bomb)), "GET", "/x")
		assertProblem(t, rec, http.StatusBadGateway, "response_too_large", "")
	})
	for _, tc := range []struct{ name, encoding string }{
		{"an encoding ctxfit cannot read", "br"},
		{"a body that does not decode", "gzip"},
	} {
		t.Run(tc.name+" is a 502 problem, not the body", func(t *testing.T) {
			f := newFixture(t, ctxfit.Options{})
			rec := do(httpfit.Middleware(f.guard, nil)(compressed(tc.encoding, itemsJSON)), "GET", "/x")
			assertProblem(t, rec, http.StatusBadGateway, "response_encoding", "")
		})
	}
	t.Run("the handler is not asked for an encoding ctxfit cannot read", func(t *testing.T) {
		f := newFixture(t, ctxfit.Options{})
		var seen string
		h := httpfit.Middleware(f.guard, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = r.Header.Get("Accept-Encoding")
		}))
		req := httptest.NewRequest("GET", "/x", nil)
		req.Header.Set("Accept-Encoding", "br;q=1.0, gzip;q=0.8, zstd, *")
		h.ServeHTTP(httptest.NewRecorder(), req)
		assert.Equal(t, "gzip;q=0.8", seen)
		assert.Equal(t, "br;q=1.0, gzip;q=0.8, zstd, *", req.Header.Get("Accept-Encoding"), "the caller's request is not changed")
	})
}

func TestABodyOverTheBufferMaximumIsNeverSentWhole(t *testing.T) {
	big := itemsJSON
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"written in pieces", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for i := 0; i < len(big); i += 1000 {
				if _, err := w.Write(big[i:min(i+1000, len(big))]); err != nil {
					return // the handler is told to stop
				}
			}
		}},
		{"declaring its length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "125000")
			_, _ = w.Write(big[:125000])
		}},
		{"with a 500 status", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(big)
		}},
	} {
		t.Run(tc.name+" is a 502 problem that says to ask for less", func(t *testing.T) {
			require.Greater(t, len(big), 64<<10)
			f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{MaxBufferBytes: 64 << 10}})
			rec := do(httpfit.Middleware(f.guard, nil)(tc.handler), "GET", "/x")
			p := assertProblem(t, rec, http.StatusBadGateway, "response_too_large", "")
			assert.Contains(t, p.Suggestion, "Ask for less")
		})
	}
}

func TestAnErrorBodyOverTheHardCapIsShapedAndKeepsItsStatus(t *testing.T) {
	exact, err := budget.Exact("")
	require.NoError(t, err)
	for _, status := range []int{http.StatusNotFound, http.StatusInternalServerError, http.StatusMultipleChoices} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{Threshold: 500, HardCap: 1500}})
			h := httpfit.Middleware(f.guard, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(status)
				_, _ = w.Write([]byte(logText))
			}))
			var got strings.Builder
			cursor := ""
			for n := 0; ; n++ {
				require.Less(t, n, 1000)
				rec := do(h, "GET", target("/x", cursor))
				require.Equal(t, status, rec.Code, "the handler's status stays, on its continuations too (response %d)", n)
				assert.LessOrEqual(t, exact.Count(rec.Body.String()), 1500, "nothing over the hard cap, whatever the status")
				var ch struct {
					Content    string `json:"content"`
					NextCursor string `json:"nextCursor"`
				}
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ch))
				got.WriteString(ch.Content)
				if cursor = ch.NextCursor; cursor == "" {
					break
				}
			}
			assert.Equal(t, logText, got.String(), "nothing lost")
		})
	}
}

func TestAResponsePassedThroughIsRecordedAsABypass(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	events := bytes.Repeat([]byte("data: {}\n\n"), 20000)
	mux := http.NewServeMux()
	mux.Handle("GET /api/bookings", body(events, "text/event-stream", nil))
	h := httpfit.Middleware(f.guard, nil)(mux)
	rec := do(h, "GET", "/api/bookings")
	require.True(t, bytes.Equal(events, rec.Body.Bytes()))
	recs := f.records.wait(t, 1)
	assert.Equal(t, telemetry.OutcomeBypass, recs[0].Outcome)
	assert.Equal(t, "GET /api/bookings", recs[0].Endpoint)
}

func TestBadInputIsAnsweredWithA400ProblemThatSaysWhatToDo(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	h := httpfit.Middleware(f.guard, nil)(api(nil))
	first := decodePage(t, do(h, "GET", "/api/bookings?status=confirmed&order=created_asc"))
	require.NotEmpty(t, first.NextCursor)
	tampered := []byte(first.NextCursor)
	tampered[12] = map[bool]byte{true: 'A', false: 'B'}[tampered[12] != 'A'] // still base64url
	query := "status=confirmed&order=created_asc"
	c := url.QueryEscape(first.NextCursor)

	tests := []struct {
		name, target, code, param string
	}{
		{"a malformed cursor", "/api/bookings?" + query + "&cursor=%25%25%25", "cursor_invalid", "cursor"},
		{"a tampered cursor", "/api/bookings?" + query + "&cursor=" + url.QueryEscape(string(tampered)), "cursor_invalid", "cursor"},
		{"a cursor on another endpoint", "/api/other?" + query + "&cursor=" + c, "cursor_mismatch", "cursor"},
		{"a cursor with other filters", "/api/bookings?status=pending&order=created_asc&cursor=" + c, "cursor_mismatch", "cursor"},
		{"a cursor without its filters", "/api/bookings?order=created_asc&cursor=" + c, "cursor_mismatch", "cursor"},
		{"a cursor with another order", "/api/bookings?status=confirmed&order=created_desc&cursor=" + c, "cursor_mismatch", "cursor"},
		{"a limit over the maximum", "/api/bookings?limit=500", "limit_invalid", "limit"},
		{"a limit that is not an integer", "/api/bookings?limit=ten", "limit_invalid", "limit"},
		{"a negative limit", "/api/bookings?limit=-1", "limit_invalid", "limit"},
		{"an unknown field", "/api/bookings/BK1?fields=nosuchfield", "fields_invalid", "fields"},
		{"a line range past the end", "/api/log?startLine=5000&endLine=6000", "line_range_invalid", "startLine"},
		{"a start line of zero", "/api/log?startLine=0", "line_range_invalid", "startLine"},
		{"an end line that is not an integer", "/api/log?endLine=last", "line_range_invalid", "endLine"},
		{"a ctxfit parameter that is not URL-encoded", "/api/bookings?status=ok&limit=%zz", "parameter_invalid", "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is a 400 "+tt.code, func(t *testing.T) {
			rec := do(h, "GET", tt.target)
			assertProblem(t, rec, http.StatusBadRequest, tt.code, tt.param)
		})
	}
	t.Run("an expired cursor is a 400 that says to start again", func(t *testing.T) {
		f := newFixture(t, ctxfit.Options{})
		h := httpfit.Middleware(f.guard, nil)(api(nil))
		p := decodePage(t, do(h, "GET", "/api/bookings"))
		f.clock.Advance(11 * time.Minute)
		rec := do(h, "GET", target("/api/bookings", p.NextCursor))
		prob := assertProblem(t, rec, http.StatusBadRequest, "cursor_expired", "cursor")
		assert.Contains(t, prob.Suggestion, "first page again")
	})
	t.Run("the data behind a rejected cursor is untouched", func(t *testing.T) {
		p := decodePage(t, do(h, "GET", "/api/bookings?"+query+"&cursor="+c))
		assert.NotEmpty(t, p.Items)
	})
}

func assertProblem(t *testing.T, rec *httptest.ResponseRecorder, status int, code, param string) ctxfit.Problem {
	t.Helper()
	require.Equal(t, status, rec.Code, rec.Body.String())
	assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
	assert.Equal(t, rec.Body.Len(), atoi(t, rec.Header().Get("Content-Length")))
	assert.Empty(t, rec.Header().Get("ETag"), "nothing of the handler's response")
	var p ctxfit.Problem
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	assert.Equal(t, status, p.Status)
	assert.Equal(t, code, p.Code)
	var typed struct{ Type string }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &typed))
	assert.Equal(t, httpfit.ProblemType(code), typed.Type, "the RFC 9457 type of the code")
	assert.Equal(t, param, p.Parameter)
	assert.NotEmpty(t, p.Title)
	assert.NotEmpty(t, p.Detail)
	assert.NotEmpty(t, p.Suggestion)
	return p
}

func TestCursorsAreBoundToTheSubject(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	h := httpfit.Middleware(f.guard, &httpfit.Options{
		Subject: func(r *http.Request) string { return r.Header.Get("X-Tenant") },
	})(api(nil))
	get := func(tenant, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("X-Tenant", tenant)
		h.ServeHTTP(rec, req)
		return rec
	}
	p := decodePage(t, get("acme", "/api/bookings"))
	decodePage(t, get("acme", target("/api/bookings", p.NextCursor)))
	assertProblem(t, get("globex", target("/api/bookings", p.NextCursor)), http.StatusBadRequest, "cursor_mismatch", "cursor")
}

func TestTheStoreBeingDownIsA503WithRetryAfter(t *testing.T) {
	f := newFixture(t, ctxfit.Options{Store: downStore{}})
	rec := do(httpfit.Middleware(f.guard, nil)(api(nil)), "GET", "/api/bookings")
	assertProblem(t, rec, http.StatusServiceUnavailable, "store_unavailable", "")
	assert.Equal(t, "5", rec.Header().Get("Retry-After"))
}

type downStore struct{}

var errDown = errors.New("store: connection refused")

func (downStore) Put(context.Context, string, []byte, time.Duration) error { return errDown }
func (downStore) Get(context.Context, string) ([]byte, bool, error)        { return nil, false, errDown }
func (downStore) Close() error                                             { return nil }

func TestAFailureOfTheGuardFallsBackToAByteCutNotTheOriginal(t *testing.T) {
	f := newFixture(t, ctxfit.Options{Counter: panicCounter{}})
	h := httpfit.Middleware(f.guard, nil)(api(nil))
	rec := do(h, "GET", "/api/bookings")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "cut", rec.Header().Get("Ctxfit-Strategy"), "a broken counter cannot tell the size: the cut is bounded in bytes")
	assert.LessOrEqual(t, rec.Body.Len(), ctxfit.DefaultHardCap, "n bytes never hold more than n tokens")

	t.Run("a cursor request, with no response to fall back on, is a 500 problem", func(t *testing.T) {
		rec := do(h, "GET", "/api/bookings?cursor=abc")
		assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
		assert.NotEqual(t, http.StatusOK, rec.Code)
	})
}

type panicCounter struct{}

func (panicCounter) Count(string) int { panic("counter broke") }

func TestAPanickingHandlerPanicsAsWithoutTheMiddleware(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	h := httpfit.Middleware(f.guard, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	assert.PanicsWithValue(t, http.ErrAbortHandler, func() { do(h, "GET", "/x") })
}

func TestTheRequestIsNotModified(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	var seen *http.Request
	h := httpfit.Middleware(f.guard, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		body(itemsJSON, "application/json", nil)(w, r)
	}))
	req := httptest.NewRequest("GET", "/api/bookings?status=confirmed&limit=10&fields=all&order=created_desc", nil)
	req.Header.Set("X-Request-Id", "r1")
	before := *req
	beforeURL := *req.URL
	beforeHeader := req.Header.Clone()

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)

	assert.Equal(t, beforeURL, *req.URL)
	assert.Equal(t, beforeHeader, req.Header)
	assert.Same(t, before.URL, req.URL)
	require.NotNil(t, seen)
	assert.NotSame(t, req, seen, "the handler gets a copy")
	assert.Equal(t, "status=confirmed&order=created_desc", seen.URL.RawQuery, "without the ctxfit parameters")
	assert.Equal(t, "/api/bookings?status=confirmed&limit=10&fields=all&order=created_desc", req.URL.RequestURI())
}

// deadlineWriter is a ResponseWriter with the optional methods that
// http.ResponseController looks for.
type deadlineWriter struct {
	*httptest.ResponseRecorder
	deadline time.Time
	duplex   bool
}

func (d *deadlineWriter) SetWriteDeadline(t time.Time) error { d.deadline = t; return nil }
func (d *deadlineWriter) EnableFullDuplex() error            { d.duplex = true; return nil }

func TestTheResponseWriterUnwrapsForResponseController(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	h := httpfit.Middleware(f.guard, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		require.True(t, ok)
		_, isDeadline := u.Unwrap().(*deadlineWriter)
		assert.True(t, isDeadline, "Unwrap returns the writer the middleware got")
		rc := http.NewResponseController(w)
		require.NoError(t, rc.SetWriteDeadline(at))
		require.NoError(t, rc.EnableFullDuplex())
		body(itemsJSON, "application/json", nil)(w, r)
	}))
	w := &deadlineWriter{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/bookings", nil))
	assert.Equal(t, at, w.deadline)
	assert.True(t, w.duplex)
	assert.Equal(t, "pagination", w.Header().Get("Ctxfit-Strategy"), "deadlines do not stop shaping")
}

func TestTheEndpointIsTheRoutePattern(t *testing.T) {
	cfg := ctxfit.Config{Endpoints: []ctxfit.Endpoint{{Match: "GET /cfg/{id}", Threshold: 100}, {Match: "list_bookings"}}}
	handler := body([]byte(`{"id":"`+strings.Repeat("word ", 300)+`"}`), "application/json", nil)
	tests := []struct {
		name   string
		wrap   func(mw func(http.Handler) http.Handler) http.Handler
		target string
		want   string
	}{
		{"a handler registered on a ServeMux gets its pattern", func(mw func(http.Handler) http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("GET /items/{id}", mw(handler))
			return mux
		}, "/items/7", "GET /items/{id}"},
		{"a wrapped ServeMux gives the pattern it routes to", func(mw func(http.Handler) http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/items/", handler)
			return mw(mux)
		}, "/items/7", "/items/"},
		{"another handler is matched against the configured patterns", func(mw func(http.Handler) http.Handler) http.Handler {
			return mw(handler)
		}, "/cfg/9", "GET /cfg/{id}"},
		{"an unmatched request is named by method and path", func(mw func(http.Handler) http.Handler) http.Handler {
			return mw(handler)
		}, "/elsewhere/9", "GET /elsewhere/9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, ctxfit.Options{Config: cfg})
			rec := do(tt.wrap(httpfit.Middleware(f.guard, nil)), "GET", tt.target)
			require.Equal(t, http.StatusOK, rec.Code)
			recs := f.records.wait(t, 1)
			assert.Equal(t, tt.want, recs[0].Endpoint)
		})
	}
	t.Run("the Endpoint option wins", func(t *testing.T) {
		f := newFixture(t, ctxfit.Options{Config: cfg})
		h := httpfit.Middleware(f.guard, &httpfit.Options{Endpoint: func(*http.Request) string { return "GET /cfg/{id}" }})(handler)
		rec := do(h, "GET", "/anything")
		assert.NotEmpty(t, rec.Header().Get("Ctxfit-Strategy"), "the endpoint's threshold of 100 applies")
		assert.Equal(t, "GET /cfg/{id}", f.records.wait(t, 1)[0].Endpoint)
	})
}

func TestHealthHandlerServesTheReportAsJSON(t *testing.T) {
	agg := telemetry.NewAggregate(nil)
	f := newFixture(t, ctxfit.Options{})
	_ = f // the guard is not needed: records are sent directly
	require.NoError(t, agg.Record(context.Background(), telemetry.Record{Endpoint: "GET /a", Strategy: "pagination", Outcome: "shaped", TokensBefore: 9000, TokensAfter: 3000}))
	h := httpfit.HealthHandler(agg)

	rec := do(h, "GET", "/debug/ctxfit")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var report telemetry.HealthReport
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &report))
	assert.Equal(t, telemetry.StatusOK, report.Status)
	assert.Equal(t, 1, report.Totals.Count)

	rec = do(h, "POST", "/debug/ctxfit")
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	require.NoError(t, json.Unmarshal([]byte(s), &n), "Content-Length %q", s)
	return n
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestACachedResponseIsServedWithoutRunningTheHandler(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	c := cache.New(nil)
	defer c.Close()
	calls := 0
	h := httpfit.Middleware(f.guard, &httpfit.Options{Cache: c})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(itemsJSON)
	}))
	first := do(h, "GET", "/api/bookings?status=confirmed")
	second := do(h, "GET", "/api/bookings?status=confirmed")
	assert.Equal(t, 1, calls, "the second request is a cache hit")
	assert.Equal(t, decodePage(t, first).Items, decodePage(t, second).Items, "the same page, with its own cursor")
	assert.Equal(t, 200, second.Code)

	do(h, "GET", "/api/bookings?status=pending")
	assert.Equal(t, 2, calls, "other filters are another entry")
	do(h, "POST", "/api/bookings?status=confirmed")
	assert.Equal(t, 3, calls, "only GET is cached")

	recs := f.records.wait(t, 4)
	require.NotNil(t, recs[1].CacheHit)
	assert.True(t, *recs[1].CacheHit)
	require.NotNil(t, recs[0].CacheHit)
	assert.False(t, *recs[0].CacheHit)
}

func TestAProblemKeepsTheHeadersSetBeforeTheMiddlewareAndDropsTheHandlers(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	inner := httpfit.Middleware(f.guard, nil)(api(nil))
	outer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Outer", "kept")
		w.Header().Add("Vary", "Origin")
		inner.ServeHTTP(w, r)
	})
	rec := do(outer, "GET", "/api/bookings/BK1?fields=nosuchfield") // the handler runs, then the fields are rejected
	assertProblem(t, rec, http.StatusBadRequest, "fields_invalid", "fields")
	assert.Equal(t, "kept", rec.Header().Get("X-Outer"))
	assert.Equal(t, []string{"Origin"}, rec.Header().Values("Vary"))
	assert.Empty(t, rec.Header().Get("X-Api-Version"), "the handler's headers are dropped with its response")
	assert.Empty(t, rec.Header().Get("Last-Modified"))
}

func TestTrailersOfAStreamedResponseReachTheClient(t *testing.T) {
	f := newFixture(t, ctxfit.Options{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Trailer", "X-Checksum")
		_, _ = w.Write([]byte("data: 1\n\n"))
		w.Header().Set("X-Checksum", "abc")
		w.Header().Set(http.TrailerPrefix+"X-Late", "def")
	})
	srv := httptest.NewServer(httpfit.Middleware(f.guard, nil)(handler))
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "data: 1\n\n", string(b))
	assert.Equal(t, "abc", resp.Trailer.Get("X-Checksum"))
	assert.Equal(t, "def", resp.Trailer.Get("X-Late"))
}

// The middleware reuses its buffers between requests: concurrent requests,
// small and large, with and without a response cache (whose hits share
// entries), each get their own response.
func TestConcurrentRequestsGetTheirOwnResponses(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Id", id)
		if r.URL.Query().Get("big") != "" {
			_, _ = w.Write(itemsJSON)
			return
		}
		_, _ = fmt.Fprintf(w, `{"id":%q,"pad":%q}`, id, strings.Repeat(id, 100))
	})
	shared := cache.New(nil)
	defer shared.Close()
	for _, c := range []*cache.Cache{nil, shared} {
		t.Run(fmt.Sprintf("cache %v", c != nil), func(t *testing.T) {
			f := newFixture(t, ctxfit.Options{})
			srv := httptest.NewServer(httpfit.Middleware(f.guard, &httpfit.Options{Cache: c})(handler))
			t.Cleanup(srv.Close)
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for i := range 50 {
						id := fmt.Sprintf("g%di%d", g, i)
						if c != nil {
							id = fmt.Sprintf("i%d", i%7) // the goroutines share keys: hits
						}
						big := i%5 == 0
						u := srv.URL + "/x?id=" + id
						if big {
							u += "&big=1"
						}
						resp, err := srv.Client().Get(u)
						if !assert.NoError(t, err) {
							return
						}
						b, err := io.ReadAll(resp.Body)
						_ = resp.Body.Close()
						assert.NoError(t, err)
						if h := resp.Header.Get("X-Id"); h != "" { // a cache hit does not replay it
							assert.Equal(t, id, h)
						}
						if big {
							assert.Equal(t, "pagination", resp.Header.Get("Ctxfit-Strategy"))
							assert.True(t, json.Valid(b))
							continue
						}
						assert.Equal(t, fmt.Sprintf(`{"id":%q,"pad":%q}`, id, strings.Repeat(id, 100)), string(b))
					}
				})
			}
			wg.Wait()
		})
	}
}

// sharingStore keeps the slices it is given, as the Store interface
// allows.
type sharingStore struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (s *sharingStore) Put(_ context.Context, id string, data []byte, _ time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[id] = data
	return nil
}

func (s *sharingStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.data[id]
	return d, ok, nil
}

func (s *sharingStore) Close() error { return nil }

// The middleware reuses the buffers of responses that passed through only:
// a shaped response's buffer may live on in a Store that keeps its slice.
func TestABufferLeftWithTheStoreIsNotReused(t *testing.T) {
	f := newFixture(t, ctxfit.Options{Store: &sharingStore{data: map[string][]byte{}}})
	list := corpus.Items(120)
	listJSON, err := json.Marshal(list) // over the threshold, small enough for a buffer to be pooled
	require.NoError(t, err)
	small := bytes.Repeat([]byte("x"), 3000)
	h := httpfit.Middleware(f.guard, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/small" {
			_, _ = w.Write([]byte(`"` + string(small) + `"`))
			return
		}
		_, _ = w.Write(listJSON)
	}))
	p := decodePage(t, do(h, "GET", "/api/bookings"))
	require.NotEmpty(t, p.NextCursor)
	got := p.Items
	for range 20 { // pass-throughs that would write over a reused buffer
		require.Equal(t, http.StatusOK, do(h, "GET", "/small").Code)
	}
	for p.NextCursor != "" {
		p = decodePage(t, do(h, "GET", target("/api/bookings", p.NextCursor)))
		got = append(got, p.Items...)
	}
	assert.Equal(t, list, got)
}

func TestAPartialContentBodyOverTheHardCapIsShapedLikeAnyOther(t *testing.T) {
	exact, err := budget.Exact("")
	require.NoError(t, err)
	files := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		http.ServeContent(w, r, "log.txt", time.Time{}, strings.NewReader(logText))
	})
	get := func(h http.Handler, target, rng string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", target, nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	f := newFixture(t, ctxfit.Options{Config: ctxfit.Config{Threshold: 500, HardCap: 1500}})
	h := httpfit.Middleware(f.guard, nil)(files)
	t.Run("a small range passes as the handler wrote it", func(t *testing.T) {
		bare, got := get(files, "/log.txt", "bytes=0-99"), get(h, "/log.txt", "bytes=0-99")
		require.Equal(t, http.StatusPartialContent, got.Code)
		assert.Equal(t, bare.Header(), got.Header())
		assert.Equal(t, bare.Body.String(), got.Body.String())
	})
	t.Run("the whole file as a range comes in chunks within the cap that rebuild it", func(t *testing.T) {
		var out strings.Builder
		cursor, rng := "", "bytes=0-"
		for n := 0; ; n++ {
			require.Less(t, n, 1000)
			rec := get(h, target("/log.txt", cursor), rng)
			rng = ""
			require.Equal(t, http.StatusOK, rec.Code, "a shaped body is not the range it was (response %d)", n)
			assert.Empty(t, rec.Header().Get("Content-Range"))
			assert.Equal(t, "chunking", rec.Header().Get("Ctxfit-Strategy"))
			assert.LessOrEqual(t, exact.Count(rec.Body.String()), 1500, "nothing over the hard cap")
			var ch struct {
				Content    string `json:"content"`
				NextCursor string `json:"nextCursor"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ch))
			out.WriteString(ch.Content)
			if cursor = ch.NextCursor; cursor == "" {
				break
			}
		}
		assert.Equal(t, logText, out.String(), "nothing lost")
	})
}
