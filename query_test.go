package ctxfit_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
)

func TestAQueryAnswersInOneCallWhatPagingNeedsManyFor(t *testing.T) {
	body := bookings(t)
	var all []map[string]any
	require.NoError(t, json.Unmarshal(body, &all))
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode), func(t *testing.T) {
			g, _ := newGuard(t, ctxfit.Config{Mode: mode, Threshold: 1000, HardCap: 2000})
			fetch := serve(body, "application/json")
			first, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "list"}, fetch)
			require.NoError(t, err)

			res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "list", Cursor: first.Next,
				Query: `[.[] | select(.status == "cancelled") | .id] | length`}, fetch)
			require.NoError(t, err)
			want := 0
			for _, b := range all {
				if b["status"] == "cancelled" {
					want++
				}
			}
			assert.JSONEq(t, "["+itoa(want)+"]", string(res.Body))
			assert.Equal(t, "query", string(res.Strategy))

			// A query over the response itself, with results over the
			// budget: in pages, and following them gives every result.
			res, err = g.Handle(context.Background(), ctxfit.Request{Endpoint: "list", Query: `.[] | {id, status}`}, fetch)
			require.NoError(t, err)
			require.NotEmpty(t, res.Next, "the results are paged")
			rebuilt := followAll(t, g, ctxfit.Request{Endpoint: "list", Query: `.[] | {id, status}`}, fetch, g.Config().HardCap)
			var got []map[string]any
			require.NoError(t, json.Unmarshal(rebuilt, &got))
			require.Len(t, got, len(all))
			for i, b := range all {
				assert.Equal(t, map[string]any{"id": b["id"], "status": b["status"]}, got[i])
			}
		})
	}
}

func TestABadQueryIsA400ThatSaysWhereAndWhat(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	fetch := serve([]byte(`{"items":[1,2,3],"name":"x"}`), "application/json")
	for _, tc := range []struct{ query, says string }{
		{"   ", "empty"},
		{".items[", "syntax error at byte"},
		{".name | keys", "failed on this data"},
		{strings.Repeat(".a", 600), "at most 1000"},
		{"$ENV | length", ""}, // no environment: answers 0, not an error
		{"input", "input"},
		{`[range(100000000)] | length`, "time limit"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			req := ctxfit.Request{Endpoint: "x", Query: tc.query}
			if tc.says == "time limit" {
				g, _ := newGuard(t, ctxfit.Config{ShapeTimeout: ctxfit.Duration(50 * 1e6)})
				_, err := g.Handle(context.Background(), req, fetch)
				require.ErrorIs(t, err, ctxfit.ErrShapeTimeout)
				return
			}
			res, err := g.Handle(context.Background(), req, fetch)
			if tc.says == "" {
				require.NoError(t, err)
				assert.Equal(t, "[0]", string(res.Body), "the query sees no environment variable")
				return
			}
			require.Error(t, err)
			p := ctxfit.ProblemOf(err, ctxfit.Params{})
			assert.Equal(t, 400, p.Status)
			assert.Contains(t, p.Detail, tc.says)
		})
	}
}

// runawayBody is a list long enough that gojq's own match over its JSON
// text runs for minutes, and the runaway query that runs match over it
// without end: it stops only at its time limit, or when its client goes.
func runawayBody(t *testing.T) ([]byte, string) {
	t.Helper()
	items := make([]map[string]any, 30_000)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": "xavier x"}
	}
	body, err := json.Marshal(items)
	require.NoError(t, err)
	return body, `. as $d | [range(1000000) | $d | tojson | [match("x"; "g")] | length] | add`
}

// requireStoppedByABound holds the outcome of a runaway query to one of
// its bounds: the time limit (shaping_timeout) or, when what it built
// across steps reached its memory bound first (a fast machine without the
// race detector gets there first), that bound's clear error; never an
// answer after running on.
func requireStoppedByABound(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, ctxfit.ErrShapeTimeout) {
		assert.Equal(t, "shaping_timeout", ctxfit.ProblemOf(err, ctxfit.Params{}).Code)
		return
	}
	require.ErrorIs(t, err, ctxfit.ErrBadRequest, "the time limit or the memory bound")
	assert.Contains(t, ctxfit.ProblemOf(err, ctxfit.Params{}).Detail, "more than its limit")
}

func TestAQueryOverALongStringStopsAtItsTimeLimitAndWhenItsClientGoes(t *testing.T) {
	body, runaway := runawayBody(t)
	t.Run("it ends with a time-out error at its time limit", func(t *testing.T) {
		g, _ := newGuard(t, ctxfit.Config{ShapeTimeout: ctxfit.Duration(time.Second)})
		errc := make(chan error, 1)
		go func() {
			_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Query: runaway}, serve(body, "application/json"))
			errc <- err
		}()
		err := receive(t, errc, "the runaway query's outcome")
		requireStoppedByABound(t, err)
	})
	// gojq's indices, and its contains over arrays, ran for minutes in one
	// call over such lists.
	for _, query := range []string{
		`[range(1000000) | ("a" * 200000) | indices("a" * 100000) | length] | add`,
		`[range(1000000) | [range(200000) | 0] | index([range(100000) | 0] + [1])] | length`,
		`[range(200000)] as $a | [range(1000000) | $a | contains($a)] | length`,
		`[range(200000)] as $a | [range(1000000) | $a | inside($a)] | length`,
	} {
		t.Run(query+" ends with a time-out error at its time limit", func(t *testing.T) {
			g, _ := newGuard(t, ctxfit.Config{ShapeTimeout: ctxfit.Duration(time.Second)})
			errc := make(chan error, 1)
			go func() {
				_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Query: query}, serve([]byte(`{"a":1}`), "application/json"))
				errc <- err
			}()
			requireStoppedByABound(t, receive(t, errc, "the runaway query's outcome"))
		})
	}
	t.Run("it stops when its client goes, and gives its room back", func(t *testing.T) {
		g, _ := newGuard(t, ctxfit.Config{MaxConcurrentShaping: 1, AdmissionWait: ctxfit.Duration(time.Millisecond)})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The client goes while the query runs (or, on a slow machine,
		// before: either way the query must end).
		fetch := func(context.Context) (ctxfit.Response, error) {
			time.AfterFunc(500*time.Millisecond, cancel)
			return ctxfit.Response{Body: body, ContentType: "application/json"}, nil
		}
		errc := make(chan error, 1)
		go func() {
			_, err := g.Handle(ctx, ctxfit.Request{Endpoint: "x", Query: runaway}, fetch)
			errc <- err
		}()
		err := receive(t, errc, "the outcome of the query whose client went")
		require.Error(t, err)
		res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Query: "length"}, serve(body, "application/json"))
		require.NoError(t, err, "the only slot is free again")
		assert.Equal(t, "[30000]", string(res.Body))
	})
}

func TestAQueryThatBuildsAValueTooLargeForOneStepIsAClearErrorAndGivesItsRoomBack(t *testing.T) {
	// Each ran past a one-second limit in one step of gojq, or wrote more
	// than the results may hold before it was measured: "x" * 1000000000
	// for 19 s and a gigabyte, the squaring (exact big integers) for
	// 3.6 s, the doubling for 1.3 s.
	cases := []struct{ query, says string }{
		{`"x" * 1000000000`, "more than its limit"},
		{`reduce range(40) as $i (3; . * .)`, "compute with smaller numbers"},
		{`reduce range(40) as $i ("x"; . + .)`, "more than its limit"},
		{`reduce range(40) as $i ([0]; . + .) | length`, "more than its limit"},
		{`.s = "x" * 1000000 | .s *= 1000 | .s | length`, "more than its limit"},
		{`[range(100) | "x" * 1000000] | add | length`, "more than its limit"},
		{`[range(100) | "x" * 1000000] | join(",") | length`, "more than its limit"},
		{`reduce range(40) as $i (0; [., .]) | tojson | length`, "more than its limit"},
		{`reduce range(40) as $i (0; [., .])`, "results are over 16 MiB"},
		// An array that holds itself twice, doubled forty times, is small
		// in memory and a terabyte written out or walked: gojq wrote it
		// out (interpolation, formats) or walked it (comparisons, sort) in
		// one step, past the time limit and out of memory.
		{`reduce range(40) as $i (["x"]; [., .]) | "\(.)" | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | "a \(.) b \(1)" | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | @json | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | @text | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | @html | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | @uri | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | @base64 | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | @sh | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | @json "v=\(.)" | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | [.] | @csv | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | [.] | @tsv | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | . == .`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | . != [1]`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | . < .`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | [., .] | sort | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | [., .] | unique | length`, "more than its limit"},
		{`reduce range(40) as $i (["x"]; [., .]) | [., .] | max | length`, "more than its limit"},
		{`"x" * 5000000 | explode | length`, "more than its limit"},
		// gojq fills an array up to an index it sets with nulls: each made
		// an array of 200 million items (3.2 GB) in one step.
		{`[] | .[200000000] = 1 | length`, "sets item 200000000 of an array"},
		{`.b[200000000] |= 1 | length`, "use an object"},
		{`.b[200000000] += 1 | length`, "use an object"},
		{`setpath(["a", 2e8]; 1) | length`, "use an object"},
		{`pick(.b[200000000]) | length`, "use an object"},
		{`fromstream([[200000000], 1]) | length`, "use an object"},
		{`"x" * 20000000 | split("") | length`, "more than its limit"},
		// What steps within their bound build together is counted too:
		// TestAQueryThatHoldsMoreThanItsBoundAcrossStepsStopsWithAClearError
		// (a bound of 64 MiB takes 4 million items to reach, too slow for a
		// test under the race detector).
	}
	if testing.Short() {
		// Each case writes up to its bound (tens of MiB) in one goroutine:
		// under -race three stand for the rest, which run in full in the
		// section of test.sh without -race.
		cases = cases[:3]
	}
	for _, tc := range cases {
		t.Run(tc.query+" fails at once and frees its slot", func(t *testing.T) {
			// A time limit far past what the query takes within its bound:
			// it must end with its bound's error, not the time-out.
			g, _ := newGuard(t, ctxfit.Config{MaxConcurrentShaping: 1, AdmissionWait: ctxfit.Duration(time.Millisecond),
				ShapeTimeout: ctxfit.Duration(20 * time.Second)})
			errc := make(chan error, 1)
			go func() {
				_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Query: tc.query}, serve([]byte(`{"a":1}`), "application/json"))
				errc <- err
			}()
			err := receive(t, errc, "the query's outcome")
			require.ErrorIs(t, err, ctxfit.ErrBadRequest)
			p := ctxfit.ProblemOf(err, ctxfit.Params{})
			assert.Equal(t, 400, p.Status)
			assert.Contains(t, p.Detail, tc.says)
			res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Query: ".a * 2"}, serve([]byte(`{"a":1}`), "application/json"))
			require.NoError(t, err, "the only slot is free again")
			assert.Equal(t, "[2]", string(res.Body))
		})
	}
	t.Run("a comparison of a huge value stops when its client goes", func(t *testing.T) {
		g, _ := newGuard(t, ctxfit.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // gone before the query runs: it must end, not walk a terabyte
		errc := make(chan error, 1)
		go func() {
			_, err := g.Handle(ctx, ctxfit.Request{Endpoint: "x", Query: `reduce range(40) as $i (["x"]; [., .]) | . == .`},
				serve([]byte(`{"a":1}`), "application/json"))
			errc <- err
		}()
		require.Error(t, receive(t, errc, "the query's outcome"))
	})
	// a - b over arrays compares every item of a with every one of b: for
	// lists of 100,000 items, in 10^10 comparisons, which check the context.
	t.Run("a difference of long arrays ends with a time-out error at its time limit", func(t *testing.T) {
		g, _ := newGuard(t, ctxfit.Config{ShapeTimeout: ctxfit.Duration(time.Second)})
		errc := make(chan error, 1)
		go func() {
			_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Query: `[range(100000)] - [range(100000) | -1]`},
				serve([]byte(`{"a":1}`), "application/json"))
			errc <- err
		}()
		require.ErrorIs(t, receive(t, errc, "the query's outcome"), ctxfit.ErrShapeTimeout)
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestAQueryThatPanicsIsAClearQueryErrorThatIsLoggedNotACutOfTheResponse(t *testing.T) {
	ctxfit.WithPanickingQueryFunction(t)
	var logs strings.Builder
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Hour)},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	for _, query := range []string{`panic_for_test`, `.items | map(panic_for_test)`} {
		t.Run(query, func(t *testing.T) {
			logs.Reset()
			res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x", Query: query},
				serve([]byte(`{"items":[1,2,3],"name":"x"}`), "application/json"))
			require.Error(t, err, "not a byte cut of the response: %s", res.Body)
			require.ErrorIs(t, err, ctxfit.ErrBadRequest)
			p := ctxfit.ProblemOf(err, ctxfit.Params{})
			assert.Equal(t, 400, p.Status)
			assert.Contains(t, p.Detail, "internal error of the jq engine")
			assert.NotContains(t, p.Detail, "s3cret-data", "the panic's value goes to the log only")
			assert.Contains(t, logs.String(), "a query panicked")
			assert.Contains(t, logs.String(), "s3cret-data")
		})
	}
}
