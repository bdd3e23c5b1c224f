package ctxfit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	rebuild "github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/summary"
	"github.com/ctxfit/ctxfit/telemetry"
)

const secret = "0123456789abcdef0123456789abcdef"

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newGuard(t *testing.T, cfg ctxfit.Config) (*ctxfit.Guard, *clock) {
	t.Helper()
	if cfg.Secret == "" {
		cfg.Secret = secret
	}
	if cfg.ShapeTimeout == 0 {
		// Tests of what is sent, not of when: a loaded CI machine running
		// every package under the race detector must not turn a shape into
		// a timeout. TestTheStrategyDoesNotDependOnTiming tests the limit.
		cfg.ShapeTimeout = ctxfit.Duration(time.Hour)
	}
	if cfg.AdmissionWait == 0 {
		cfg.AdmissionWait = ctxfit.Duration(time.Hour) // likewise for the wait for room to shape
	}
	clk := &clock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Now: clk.now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	return g, clk
}

func serve(body []byte, ct string) ctxfit.Fetch {
	return func(context.Context) (ctxfit.Response, error) {
		return ctxfit.Response{Body: body, ContentType: ct}, nil
	}
}

var exact = func() budget.Counter {
	c, err := budget.Exact("")
	if err != nil {
		panic(err)
	}
	return c
}()

// estimatedTokens finds the budget metadata's count in a body; the last
// match is the metadata's (it closes the body).
var estimatedTokens = regexp.MustCompile(`"estimatedTokens":(\d+)`)

// follow requests the first response and every continuation, returning the
// bodies. It fails the test if any body is over the hard cap by exact count.
func follow(t *testing.T, g *ctxfit.Guard, req ctxfit.Request, fetch ctxfit.Fetch) []ctxfit.Result {
	t.Helper()
	var out []ctxfit.Result
	for range 10000 {
		res, err := g.Handle(context.Background(), req, fetch)
		require.NoError(t, err)
		tokens := exact.Count(string(res.Body))
		require.LessOrEqual(t, tokens, g.Config().HardCap, "nothing over budget")
		if res.Shaped {
			m := estimatedTokens.FindAllSubmatch(res.Body, -1)
			require.NotEmpty(t, m, "a shaped response carries budget metadata")
			assert.Equal(t, strconv.Itoa(tokens), string(m[len(m)-1][1]), "estimatedTokens is the exact count of the response, metadata included")
		}
		out = append(out, res)
		if res.Next == "" {
			return out
		}
		req.Cursor = res.Next
	}
	t.Fatal("too many continuations")
	return nil
}

func TestAResponseUnderTheThresholdPassesThroughByteForByte(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	body := []byte(`{"id": 1,   "name": "small"}`)
	res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "GET /x"}, serve(body, "application/json"))
	require.NoError(t, err)
	assert.Equal(t, body, res.Body)
	assert.False(t, res.Shaped)
	assert.Equal(t, telemetry.StrategyPassthrough, res.Strategy)
}

func TestAListIsPagedAndEveryItemComesBackOnce(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode), func(t *testing.T) {
			g, _ := newGuard(t, ctxfit.Config{Mode: mode})
			items := corpus.Items(500)
			body, err := json.Marshal(items)
			require.NoError(t, err)
			calls := 0
			fetch := func(context.Context) (ctxfit.Response, error) {
				calls++
				return ctxfit.Response{Body: body, ContentType: "application/json"}, nil
			}
			results := follow(t, g, ctxfit.Request{Endpoint: "GET /api/v1/bookings", Limit: 200}, fetch)
			var got []corpus.Item
			for _, res := range results {
				assert.Equal(t, telemetry.StrategyPagination, res.Strategy)
				var page struct {
					Items []corpus.Item `json:"items"`
					Meta  struct {
						TotalCount      int `json:"totalCount"`
						EstimatedTokens int `json:"estimatedTokens"`
					} `json:"meta"`
				}
				require.NoError(t, json.Unmarshal(res.Body, &page))
				assert.Equal(t, 500, page.Meta.TotalCount)
				assert.Positive(t, page.Meta.EstimatedTokens, "budget metadata is added")
				assert.LessOrEqual(t, exact.Count(string(res.Body)), 4000, "pages stay within the threshold, budget fields included")
				got = append(got, page.Items...)
			}
			assert.Equal(t, items, got)
			assert.Greater(t, len(results), 5)
			if mode == ctxfit.ModeStore {
				assert.Equal(t, 1, calls, "store mode serves continuations from the store")
			} else {
				assert.Equal(t, len(results), calls, "replay mode runs the handler again")
			}
		})
	}
}

func TestAnObjectsBulkArrayIsPagedBesideAnOutlineOfTheRest(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	items, _ := json.Marshal(corpus.Items(300))
	body := []byte(`{"status":"ok","data":{"kind":"bookings","items":` + string(items) + `},"generatedAt":"2026-11-21"}`)
	req := ctxfit.Request{Endpoint: "GET /wrapped", Limit: 200}
	results := follow(t, g, req, serve(body, "application/json"))
	require.Greater(t, len(results), 1)
	var first struct {
		Outline struct {
			Status string `json:"status"`
			Data   struct {
				Kind  string          `json:"kind"`
				Items json.RawMessage `json:"items"`
			} `json:"data"`
			GeneratedAt string `json:"generatedAt"`
		} `json:"outline"`
		Meta struct {
			Path string `json:"path"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal(results[0].Body, &first))
	assert.Equal(t, "ok", first.Outline.Status, "the object's other fields come first, once")
	assert.Equal(t, "bookings", first.Outline.Data.Kind)
	assert.Equal(t, "2026-11-21", first.Outline.GeneratedAt)
	assert.Contains(t, string(first.Outline.Data.Items), `"ctxfit:part"`, "the paged array is held back in the outline")
	assert.Equal(t, "data.items", first.Meta.Path)
	var all []json.RawMessage
	for i, res := range results {
		var page struct {
			Outline json.RawMessage   `json:"outline"`
			Items   []json.RawMessage `json:"items"`
		}
		require.NoError(t, json.Unmarshal(res.Body, &page))
		assert.Equal(t, i == 0, page.Outline != nil, "only the first page repeats nothing of the rest")
		all = append(all, page.Items...)
	}
	var want []json.RawMessage
	require.NoError(t, json.Unmarshal(items, &want))
	assert.Equal(t, want, all)
	checkPromises(t, g, req, ctxfit.Response{Body: body, ContentType: "application/json"})
}

func TestALargeObjectIsSummarizedAndTheDrillDownReturnsItWhole(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{Threshold: 2000})
	full, _ := json.Marshal(corpus.Booking())
	req := ctxfit.Request{Endpoint: "GET /api/v1/bookings/{id}", Path: "/api/v1/bookings/BK12345"}
	res, err := g.Handle(context.Background(), req, serve(full, "application/json"))
	require.NoError(t, err)
	assert.Equal(t, telemetry.StrategySummary, res.Strategy)
	assert.Less(t, res.Record.TokensAfter, res.Record.TokensBefore*3/10, "at least 70% fewer tokens")
	assert.Contains(t, string(res.Body), `"endpoint":"/api/v1/bookings/BK12345"`)
	assert.Contains(t, res.Guidance, "fields=")

	req.Fields = "all"
	res, err = g.Handle(context.Background(), req, serve(full, "application/json"))
	require.NoError(t, err)
	assert.Equal(t, full, res.Body, "fields=all returns the full object")

	req.Fields = "nosuchfield"
	_, err = g.Handle(context.Background(), req, serve(full, "application/json"))
	require.Error(t, err)
	assert.Equal(t, 400, ctxfit.ProblemOf(err, ctxfit.Params{}).Status)
}

func TestTextIsChunkedAndTheChunksGiveItBackByteForByte(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	log := corpus.Log(3000)
	results := follow(t, g, ctxfit.Request{Endpoint: "GET /logs/{name}"}, serve([]byte(log), "text/plain; charset=utf-8"))
	var got strings.Builder
	for _, res := range results {
		assert.Equal(t, telemetry.StrategyChunking, res.Strategy)
		var ch struct {
			Content string `json:"content"`
		}
		require.NoError(t, json.Unmarshal(res.Body, &ch))
		got.WriteString(ch.Content)
	}
	assert.Equal(t, log, got.String())
	assert.Greater(t, len(results), 10)
}

func TestAGiantItemIsHeldBackAsAPartAndNothingIsLost(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{Threshold: 500, HardCap: 1000})
	big := strings.Repeat("x<\"\n\u2028é", 3000)
	body, _ := json.Marshal([]map[string]string{{"blob": big}, {"small": "one"}})
	req := ctxfit.Request{Endpoint: "GET /blob"}
	first, err := g.Handle(context.Background(), req, serve(body, "application/json"))
	require.NoError(t, err)
	assert.Contains(t, string(first.Body), `{"ctxfit:part":`, "the item too large for a page is held back")
	assert.Contains(t, string(first.Body), `{"small":"one"}`, "the others are on the page")
	c := checkPromises(t, g, req, ctxfit.Response{Body: body, ContentType: "application/json"})
	assert.Positive(t, c.strategies[telemetry.StrategyChunking], "the item's large string is chunked")
}

func TestBadCursorsAreRejectedWithAProblemThatSaysWhatToDo(t *testing.T) {
	g, clk := newGuard(t, ctxfit.Config{})
	body, _ := json.Marshal(corpus.Items(300))
	req := ctxfit.Request{Endpoint: "GET /api/v1/bookings", Limit: 200}
	first, err := g.Handle(context.Background(), req, serve(body, "application/json"))
	require.NoError(t, err)
	require.NotEmpty(t, first.Next)

	tampered := []byte(first.Next)
	tampered[10] = map[bool]byte{true: 'A', false: 'B'}[tampered[10] != 'A'] // still base64url, another byte
	tests := []struct {
		name     string
		mutate   func(r *ctxfit.Request)
		wantCode string
		wantErr  error
	}{
		{"a tampered cursor is invalid", func(r *ctxfit.Request) { r.Cursor = string(tampered) }, "cursor_invalid", cursor.ErrInvalid},
		{"garbage is malformed", func(r *ctxfit.Request) { r.Cursor = "%%%" }, "cursor_invalid", cursor.ErrMalformed},
		{"another endpoint is a mismatch", func(r *ctxfit.Request) { r.Cursor = first.Next; r.Endpoint = "GET /other" }, "cursor_mismatch", cursor.ErrMismatch},
		{"other filters are a mismatch", func(r *ctxfit.Request) { r.Cursor = first.Next; r.Filters = json.RawMessage(`{"status":"x"}`) }, "cursor_mismatch", cursor.ErrMismatch},
		{"a limit over the maximum is invalid", func(r *ctxfit.Request) { r.Cursor = first.Next; r.Limit = 500 }, "limit_invalid", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req
			tt.mutate(&r)
			_, err := g.Handle(context.Background(), r, serve(body, "application/json"))
			require.Error(t, err)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			p := ctxfit.ProblemOf(err, ctxfit.Params{})
			assert.Equal(t, 400, p.Status)
			assert.Equal(t, tt.wantCode, p.Code)
			assert.NotEmpty(t, p.Suggestion)
		})
	}
	t.Run("an expired cursor says to request the first page again", func(t *testing.T) {
		clk.t = clk.t.Add(11 * time.Minute)
		r := req
		r.Cursor = first.Next
		_, err := g.Handle(context.Background(), r, serve(body, "application/json"))
		require.ErrorIs(t, err, cursor.ErrExpired)
		p := ctxfit.ProblemOf(err, ctxfit.Params{})
		assert.Equal(t, "cursor_expired", p.Code)
		assert.Contains(t, p.Suggestion, "first page again")
	})
}

func TestReplayModeRejectsCursorsWhenTheDataChanged(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{Mode: ctxfit.ModeReplay})
	body, _ := json.Marshal(corpus.Items(300))
	req := ctxfit.Request{Endpoint: "GET /api/v1/bookings", Limit: 200}
	first, err := g.Handle(context.Background(), req, serve(body, "application/json"))
	require.NoError(t, err)
	req.Cursor = first.Next
	changed := bytes.Replace(body, []byte("BK00001"), []byte("BK99999"), 1)
	_, err = g.Handle(context.Background(), req, serve(changed, "application/json"))
	require.ErrorIs(t, err, ctxfit.ErrDataChanged)
	assert.Equal(t, "cursor_stale", ctxfit.ProblemOf(err, ctxfit.Params{}).Code)
}

func TestReloadChangesTheSettingsOfNewRequests(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	body, _ := json.Marshal(corpus.Items(30))
	res, err := g.Handle(context.Background(), ctxfit.Request{}, serve(body, "application/json"))
	require.NoError(t, err)
	require.False(t, res.Shaped)

	require.NoError(t, g.Reload(ctxfit.Config{Secret: secret, Threshold: 500}))
	res, err = g.Handle(context.Background(), ctxfit.Request{}, serve(body, "application/json"))
	require.NoError(t, err)
	assert.True(t, res.Shaped)

	err = g.Reload(ctxfit.Config{Threshold: 500, HardCap: 10})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "hardCap 10 must be >= threshold 500")
	assert.Equal(t, 500, g.Config().Threshold, "an invalid reload keeps the old settings")
}

func TestHandlerErrorsAreReturnedUnchanged(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	boom := errors.New("boom")
	_, err := g.Handle(context.Background(), ctxfit.Request{}, func(context.Context) (ctxfit.Response, error) {
		return ctxfit.Response{}, boom
	})
	assert.Same(t, boom, err)
}

// TestNothingOverBudgetNothingLost is the property test of the two promises
// over random lists, objects and texts and random budgets.
func TestNothingOverBudgetNothingLost(t *testing.T) {
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 99))
		threshold := 200 + r.IntN(3000)
		cfg := ctxfit.Config{Threshold: threshold, HardCap: threshold + r.IntN(2000), ChunkTokens: 100 + r.IntN(1500)}
		if seed%3 == 0 {
			cfg.Mode = ctxfit.ModeReplay
		}
		g, _ := newGuard(t, cfg)
		t.Run(fmt.Sprintf("seed %d threshold %d", seed, threshold), func(t *testing.T) {
			switch seed % 3 {
			case 0, 1:
				n := r.IntN(400)
				items := make([]map[string]any, n)
				for i := range items {
					items[i] = map[string]any{"i": i, "text": strings.Repeat("word ", r.IntN(200))}
				}
				body, _ := json.Marshal(items)
				var got []map[string]any
				for _, res := range follow(t, g, ctxfit.Request{Endpoint: "list", Limit: 1 + r.IntN(200)}, serve(body, "application/json")) {
					if res.Strategy == telemetry.StrategyPassthrough {
						require.NoError(t, json.Unmarshal(res.Body, &got))
						continue
					}
					require.Equal(t, telemetry.StrategyPagination, res.Strategy)
					var page struct {
						Items []map[string]any `json:"items"`
					}
					require.NoError(t, json.Unmarshal(res.Body, &page))
					got = append(got, page.Items...)
				}
				want := []map[string]any{}
				require.NoError(t, json.Unmarshal(body, &want))
				if len(want) == 0 {
					assert.Empty(t, got)
				} else {
					assert.Equal(t, want, got)
				}
			case 2:
				text := corpus.Prose(r.IntN(100000))
				var got strings.Builder
				for _, res := range follow(t, g, ctxfit.Request{Endpoint: "text"}, serve([]byte(text), "text/plain")) {
					if res.Strategy == telemetry.StrategyPassthrough {
						got.Write(res.Body)
						continue
					}
					var ch struct {
						Content string `json:"content"`
					}
					require.NoError(t, json.Unmarshal(res.Body, &ch))
					got.WriteString(ch.Content)
				}
				assert.Equal(t, text, got.String())
			}
		})
	}
}

func TestResumeReadsTheToolAndArgumentsFromTheCursor(t *testing.T) {
	body, _ := json.Marshal(corpus.Items(300))
	for _, tt := range []struct {
		mode ctxfit.Mode
		args json.RawMessage
	}{
		{ctxfit.ModeStore, json.RawMessage(`{"status":"confirmed"}`)},
		{ctxfit.ModeReplay, json.RawMessage(`{"status":"confirmed"}`)},
		{ctxfit.ModeReplay, json.RawMessage(`{"q":"` + strings.Repeat("x", 20000) + `"}`)},
	} {
		t.Run(fmt.Sprintf("%s with %d bytes of arguments", tt.mode, len(tt.args)), func(t *testing.T) {
			g, _ := newGuard(t, ctxfit.Config{Mode: tt.mode})
			first, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "list_bookings", Subject: "session-1", Filters: tt.args}, serve(body, "application/json"))
			require.NoError(t, err)
			require.NotEmpty(t, first.Next)
			assert.Less(t, len(first.Next), 400, "a cursor does not grow with the arguments")

			req, err := g.Resume(first.Next, "session-1")
			require.NoError(t, err)
			assert.Equal(t, "list_bookings", req.Endpoint)
			if tt.mode == ctxfit.ModeReplay {
				assert.JSONEq(t, string(tt.args), string(req.Filters), "replay mode carries what it needs to run the tool again")
			}
			next, err := g.Handle(context.Background(), req, serve(body, "application/json"))
			require.NoError(t, err)
			assert.Equal(t, telemetry.StrategyPagination, next.Strategy)

			_, err = g.Resume(first.Next, "session-2")
			assert.ErrorIs(t, err, cursor.ErrMismatch, "another session cannot use the cursor")
			_, err = g.Resume("garbage", "session-1")
			assert.ErrorIs(t, err, cursor.ErrMalformed)
		})
	}
}

func TestADrillDownOverTheHardCapContinuesInPagesInBothModes(t *testing.T) {
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode), func(t *testing.T) {
			g, _ := newGuard(t, ctxfit.Config{Mode: mode, Threshold: 300, HardCap: 600})
			full, _ := json.Marshal(corpus.Booking())
			req := ctxfit.Request{Endpoint: "get_booking", Path: "get_booking", Fields: "amenities,policies"}
			projected, err := summary.ServeDetails(full, req.Fields)
			require.NoError(t, err)
			first, err := g.Handle(context.Background(), req, serve(full, "application/json"))
			require.NoError(t, err)
			require.True(t, first.Shaped)
			call := func(cursor string, part int64) ([]byte, error) {
				next := req
				next.Cursor, next.Part = cursor, part
				res, err := g.Handle(context.Background(), next, serve(full, "application/json"))
				if err == nil {
					require.LessOrEqual(t, exact.Count(string(res.Body)), 600)
				}
				return res.Body, err
			}
			got, _, err := rebuild.Rebuild(first.Body, call)
			require.NoError(t, err)
			assert.Equal(t, string(projected), string(got), "the pages put together are exactly the two sections")
		})
	}
}

func TestWithTheEstimatorASampleIsAlsoCountedExactly(t *testing.T) {
	var got []telemetry.Record
	sink := telemetry.SinkFunc(func(_ context.Context, r telemetry.Record) error { got = append(got, r); return nil })
	cfg := ctxfit.Config{Secret: secret, EstimateSample: 1} // every response
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Counter: budget.Estimator{}, Sink: sink})
	require.NoError(t, err)
	body, _ := json.Marshal(corpus.Items(300))
	handle := func() {
		_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "list"}, serve(body, "application/json"))
		require.NoError(t, err)
	}
	handle()
	cfg.EstimateSample = math.SmallestNonzeroFloat64 // a reload's rate is the rate from then on: next to never
	require.NoError(t, g.Reload(cfg))
	handle()
	require.NoError(t, g.Close()) // flushes telemetry
	require.Len(t, got, 2)
	require.NotNil(t, got[0].EstimateError, "the estimate's error against the exact count is recorded")
	assert.True(t, telemetry.WithinTolerance(*got[0].EstimateError), "chars/4 with the 20%% margin is within 20%% on JSON: %v", *got[0].EstimateError)
	assert.Nil(t, got[1].EstimateError, "after the reload, sampled with a probability of 2^-53")
}

func TestTokensBeforeAreExactUpToTheHardCapAndEstimatedPastIt(t *testing.T) {
	exact, err := budget.Exact("")
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		items int
		over  bool
	}{
		{"under the hard cap: counted exactly", 60, false},
		{"past the hard cap: estimated from the share counted up to it", 3000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []telemetry.Record
			sink := telemetry.SinkFunc(func(_ context.Context, r telemetry.Record) error { got = append(got, r); return nil })
			g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Hour)}, Sink: sink})
			require.NoError(t, err)
			body, _ := json.Marshal(corpus.Items(tc.items))
			_, err = g.Handle(context.Background(), ctxfit.Request{Endpoint: "list"}, serve(body, "application/json"))
			require.NoError(t, err)
			require.NoError(t, g.Close()) // flushes telemetry
			require.Len(t, got, 1)
			full := exact.Count(string(body))
			require.Equal(t, tc.over, full > ctxfit.DefaultHardCap, "%d tokens", full)
			if !tc.over {
				assert.Equal(t, full, got[0].TokensBefore)
				assert.False(t, got[0].TokensBeforeEstimated)
				return
			}
			assert.True(t, got[0].TokensBeforeEstimated)
			assert.InEpsilon(t, full, got[0].TokensBefore, 0.1, "within 10%% of the exact %d", full)
		})
	}
}

// idStore records the IDs a Guard puts.
type idStore struct {
	store.Store
	mu  sync.Mutex
	ids map[string]int
}

func (s *idStore) Put(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	s.mu.Lock()
	s.ids[id]++
	s.mu.Unlock()
	return s.Store.Put(ctx, id, data, ttl)
}

func TestIdenticalResponsesShareOneSnapshot(t *testing.T) {
	st := &idStore{Store: store.NewMemory(nil), ids: map[string]int{}}
	t.Cleanup(func() { _ = st.Close() })
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret}, Store: st})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	list, _ := json.Marshal(corpus.Items(300))
	other, _ := json.Marshal(corpus.Items(301))

	var chains [][]ctxfit.Result
	for _, subject := range []string{"alice", "bob", "alice"} {
		chains = append(chains, follow(t, g, ctxfit.Request{Endpoint: "list", Subject: subject}, serve(list, "application/json")))
	}
	require.Len(t, st.ids, 1, "three requests for the same data keep one snapshot")
	for id, n := range st.ids {
		assert.Equal(t, store.IDOf(list), id)
		assert.Equal(t, 3, n, "each first page renews it")
	}
	for _, chain := range chains {
		var got []corpus.Item
		for _, res := range chain {
			var page struct {
				Items []corpus.Item `json:"items"`
			}
			require.NoError(t, json.Unmarshal(res.Body, &page))
			got = append(got, page.Items...)
		}
		assert.Equal(t, corpus.Items(300), got, "every chain reads the whole list from the shared snapshot")
	}
	follow(t, g, ctxfit.Request{Endpoint: "list"}, serve(other, "application/json"))
	assert.Len(t, st.ids, 2, "other data, another snapshot")
}

// fullStore is a store with no room, or one that is down.
type fullStore struct {
	store.Store
	err error
}

func (s fullStore) Put(context.Context, string, []byte, time.Duration) error { return s.err }

func TestAFullStoreDegradesOneResponseAtATime(t *testing.T) {
	body, _ := json.Marshal(corpus.Items(300))
	t.Run("a full store: the response continues by running the handler again", func(t *testing.T) {
		st := fullStore{Store: store.NewMemory(nil), err: fmt.Errorf("redis: OOM command not allowed: %w", store.ErrFull)}
		g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret}, Store: st})
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		checkPromises(t, g, ctxfit.Request{Endpoint: "list", Path: "list", Subject: "alice"}, ctxfit.Response{Body: body, ContentType: "application/json"})
	})
	t.Run("a store that is down: a 503 that says nothing of the backend", func(t *testing.T) {
		st := fullStore{Store: store.NewMemory(nil), err: fmt.Errorf("redis: dial tcp 10.0.0.7:6379: connection refused: %w", store.ErrUnavailable)}
		g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret}, Store: st, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		_, err = g.Handle(context.Background(), ctxfit.Request{Endpoint: "list"}, serve(body, "application/json"))
		p := ctxfit.ProblemOf(err, ctxfit.Params{})
		assert.Equal(t, 503, p.Status)
		assert.NotContains(t, p.Detail, "10.0.0.7", "backend details are logged, not sent")
	})
}
