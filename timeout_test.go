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
