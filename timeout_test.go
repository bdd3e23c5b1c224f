package ctxfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/telemetry"
)

// expiring is a shaping context that runs past its time limit when the
// test says so, not at a time.
type expiring struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func (c *expiring) Done() <-chan struct{} { return c.done }

func (c *expiring) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (c *expiring) expire() { c.once.Do(func() { close(c.done) }) }

// expiringCounter counts exactly, and ends the shaping under way as soon
// as it is asked to count anything but the original response: the answer
// to an explicit request is then made, and its shaping runs out of time.
type expiringCounter struct {
	original string
	shaping  atomic.Pointer[expiring]
}

func (c *expiringCounter) Count(text string) int {
	if text != c.original {
		if cur := c.shaping.Load(); cur != nil {
			cur.expire()
		}
	}
	return exact.Count(text)
}

// timingOutGuard is a guard whose shaping runs out of time once the answer
// is known (see expiringCounter).
func timingOutGuard(t *testing.T, cfg ctxfit.Config, original []byte) *ctxfit.Guard {
	t.Helper()
	cfg.Secret, cfg.ShapeTimeout, cfg.AdmissionWait = secret, ctxfit.Duration(time.Hour), ctxfit.Duration(time.Hour)
	c := &expiringCounter{original: string(original)}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Counter: c})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	ctxfit.SetShapeContext(g, func(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
		e := &expiring{Context: ctx, done: make(chan struct{})}
		c.shaping.Store(e)
		return e, e.expire
	})
	return g
}

// TestAShapingTimeOutAnswersALosslessPartOfAnExplicitAnswer runs a query,
// fields, a line range and searches whose answers are made in time and
// whose shaping then runs out of it: each answers a cheap lossless part
// (a byte cut of the answer, a search page bounded by bytes), never a
// shaping_timeout error, within the hard cap; following it gives the whole
// answer, as a guard with time to spare gives it.
func TestAShapingTimeOutAnswersALosslessPartOfAnExplicitAnswer(t *testing.T) {
	items := make([]map[string]any, 400)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": fmt.Sprintf("guest %d", i), "note": strings.Repeat("n", i%40)}
	}
	list, err := json.Marshal(map[string]any{"items": items, "total": len(items)})
	require.NoError(t, err)
	array, err := json.Marshal(items)
	require.NoError(t, err)
	var text strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&text, "line %d of the log: %s\n", i+1, strings.Repeat("x", i%50))
	}
	cfg := ctxfit.Config{Threshold: 1000, HardCap: 1500}
	for _, tc := range []struct {
		name   string
		body   []byte
		ct     string
		req    ctxfit.Request
		search bool
	}{
		{"a query's results", list, "application/json", ctxfit.Request{Query: ".items"}, false},
		{"a projection's fields", list, "application/json", ctxfit.Request{Fields: "items"}, false},
		{"a line range", []byte(text.String()), "text/plain", ctxfit.Request{StartLine: 10, EndLine: 900}, false},
		{"a search over a list's items", array, "application/json", ctxfit.Request{Search: &ctxfit.Search{Pattern: "guest 1", Path: "name"}}, true},
		{"a search over a text's lines", []byte(text.String()), "text/plain", ctxfit.Request{Search: &ctxfit.Search{Pattern: "x{40}", Context: 1}}, true},
	} {
		t.Run(tc.name+" comes as a lossless part, not an error", func(t *testing.T) {
			req := tc.req
			req.Endpoint, req.Path = "GET /x", "/x"
			fetch := serve(tc.body, tc.ct)
			g := timingOutGuard(t, cfg, tc.body)
			res, err := g.Handle(context.Background(), req, fetch)
			require.NoError(t, err, "a shaping time-out answers a part, not an error")
			assert.Equal(t, telemetry.OutcomeFallback, res.Record.Outcome)
			assert.Equal(t, "shaping_timeout", res.Record.Fallback)
			require.LessOrEqual(t, exact.Count(string(res.Body)), cfg.HardCap)
			require.NotEmpty(t, res.Next, "the part leads to the rest")
			calm, _ := newGuard(t, cfg)
			if !tc.search {
				assert.Equal(t, telemetry.StrategyCut, res.Strategy)
				want := followAll(t, calm, req, fetch, cfg.HardCap)
				assert.Equal(t, string(want), string(followAll(t, g, req, fetch, cfg.HardCap)), "the cuts rebuild the answer byte for byte")
				return
			}
			assert.Equal(t, telemetry.StrategySearch, res.Strategy)
			assert.Contains(t, string(res.Body), `"timedOut":true`)
			want := searchMatches(t, calm, req, fetch, cfg.HardCap)
			require.NotEmpty(t, want)
			assert.Equal(t, want, searchMatches(t, g, req, fetch, cfg.HardCap), "following the pages finds every match")
		})
	}
	t.Run("a query that itself runs past its time limit still answers a time-out error", func(t *testing.T) {
		g, _ := newGuard(t, ctxfit.Config{ShapeTimeout: 1})
		_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Query: "[range(100000000)] | length"}, serve(list, "application/json"))
		require.ErrorIs(t, err, ctxfit.ErrShapeTimeout)
	})
}

// searchMatches follows a search's pages and returns the line numbers or
// indexes of its matches, in order.
func searchMatches(t *testing.T, g *ctxfit.Guard, req ctxfit.Request, fetch ctxfit.Fetch, hardCap int) []int {
	t.Helper()
	var found []int
	for range 1000 {
		res, err := g.Handle(context.Background(), req, fetch)
		require.NoError(t, err)
		require.LessOrEqual(t, exact.Count(string(res.Body)), hardCap, "nothing over the hard cap")
		var page struct {
			Matches []struct {
				Line  *int `json:"line"`
				Index *int `json:"index"`
			} `json:"matches"`
		}
		require.NoError(t, json.Unmarshal(res.Body, &page), "%s", res.Body)
		for _, m := range page.Matches {
			if m.Line != nil {
				found = append(found, *m.Line)
			} else {
				require.NotNil(t, m.Index)
				found = append(found, *m.Index)
			}
		}
		if res.Next == "" {
			return found
		}
		req.Cursor, req.Search = res.Next, nil
	}
	t.Fatal("too many pages")
	return nil
}

// TestAContinuationPastItsTimeLimitAnswersItsPartNotAnError shapes a first
// response in time, then lets every continuation's shaping run out of
// time at once: each next page, chunk and opened part answers its own
// part with bytes counted for tokens (a token is at least one byte),
// within the hard cap, never a shaping_timeout error (a stored snapshot
// read in windows included), and following them all rebuilds the
// original byte for byte.
func TestAContinuationPastItsTimeLimitAnswersItsPartNotAnError(t *testing.T) {
	items := make([]map[string]any, 60)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": fmt.Sprintf("guest %d", i)}
		if i%20 == 3 {
			items[i]["notes"] = strings.Repeat(fmt.Sprintf("note %d of a long stay. ", i), 200) // held back as a part
		}
	}
	array, err := json.Marshal(items)
	require.NoError(t, err)
	var text strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&text, "line %d of the log: café \"quoted\" \\ %s\n", i+1, strings.Repeat("x", i%50))
	}
	object, err := json.Marshal(map[string]any{"id": 7, "body": text.String()})
	require.NoError(t, err)
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		for _, tc := range []struct {
			name, ct string
			body     []byte
			timesOut bool // a text's chunks are cut without a look at the clock
		}{
			{"the pages and parts of a list", "application/json", array, true},
			{"the chunks of a text", "text/plain", []byte(text.String()), false},
			{"the chunks of a string in an object", "application/json", object, false},
		} {
			t.Run(fmt.Sprintf("%s in %s mode come as parts, not errors", tc.name, mode), func(t *testing.T) {
				cfg := ctxfit.Config{Threshold: 500, HardCap: 1000, Mode: mode, Secret: secret,
					ShapeTimeout: ctxfit.Duration(time.Hour), AdmissionWait: ctxfit.Duration(time.Hour)}
				g, err := ctxfit.New(&ctxfit.Options{Config: cfg})
				require.NoError(t, err)
				t.Cleanup(func() { _ = g.Close() })
				var shapings atomic.Int64
				ctxfit.SetShapeContext(g, func(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
					e := &expiring{Context: ctx, done: make(chan struct{})}
					if shapings.Add(1) > 1 {
						e.expire() // every continuation runs out of time at once
					}
					return e, e.expire
				})
				req := ctxfit.Request{Endpoint: "GET /x", Path: "/x"}
				fetch := serve(tc.body, tc.ct)
				first, err := g.Handle(context.Background(), req, fetch)
				require.NoError(t, err)
				require.NotEmpty(t, first.Next, "the first response is shaped in time, with a cursor")
				next := req
				next.Cursor = first.Next
				res, err := g.Handle(context.Background(), next, fetch)
				require.NoError(t, err, "a continuation past its time limit answers its part, not an error")
				if tc.timesOut {
					assert.Equal(t, "shaping_timeout", res.Record.Fallback)
				}
				shapings.Store(0) // the first response in time again
				assert.Equal(t, string(tc.body), string(followAll(t, g, req, fetch, cfg.HardCap)), "the parts rebuild the original byte for byte")
			})
		}
	}
}

// expiringStore is a memory store whose Put ends the shaping under way
// before it stores: the time limit passes during the store call, as it may
// on a loaded machine.
type expiringStore struct {
	*store.Memory
	shaping *atomic.Pointer[expiring]
}

func (s expiringStore) Put(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	if cur := s.shaping.Load(); cur != nil {
		cur.expire()
	}
	return s.Memory.Put(ctx, id, data, ttl)
}

func TestAStoreCallPastTheTimeLimitAnswersALosslessCutNotAnError(t *testing.T) {
	items := make([]map[string]any, 200)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": fmt.Sprintf("guest %d of the harbour hotel", i)}
	}
	array, err := json.Marshal(items)
	require.NoError(t, err)
	var text strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&text, "line %d of the log: a guest booked a room\n", i+1)
	}
	for _, tc := range []struct {
		name, ct string
		body     []byte
	}{
		{"a list", "application/json", array},
		{"a text", "text/plain", []byte(text.String())},
	} {
		t.Run(tc.name+" whose snapshot is stored past the time limit comes as a cut with a cursor", func(t *testing.T) {
			var shaping atomic.Pointer[expiring]
			mem := store.NewMemory(nil)
			t.Cleanup(func() { _ = mem.Close() })
			cfg := ctxfit.Config{Threshold: 500, HardCap: 1000, Mode: ctxfit.ModeStore, Secret: secret,
				ShapeTimeout: ctxfit.Duration(time.Hour), AdmissionWait: ctxfit.Duration(time.Hour)}
			g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Store: expiringStore{Memory: mem, shaping: &shaping}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			ctxfit.SetShapeContext(g, func(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
				e := &expiring{Context: ctx, done: make(chan struct{})}
				shaping.Store(e)
				return e, e.expire
			})
			req := ctxfit.Request{Endpoint: "GET /x", Path: "/x"}
			fetch := serve(tc.body, tc.ct)
			res, err := g.Handle(context.Background(), req, fetch)
			require.NoError(t, err, "a store call that the time limit ended is a time-out, not an unavailable store")
			assert.Equal(t, "shaping_timeout", res.Record.Fallback)
			require.NotEmpty(t, res.Next, "a cursor to the rest")
			assert.LessOrEqual(t, exact.Count(string(res.Body)), cfg.HardCap)
			assert.Equal(t, string(tc.body), string(followAll(t, g, req, fetch, cfg.HardCap)), "following it rebuilds the original byte for byte")
		})
	}
}
