package ctxfit_test

// Regression tests for the defects measured against real servers' shapes
// (issue 10): each failed before the engine read responses as raw bytes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/telemetry"
)

func bookings(t *testing.T) []byte {
	t.Helper()
	body, err := json.Marshal(corpus.Items(500))
	require.NoError(t, err)
	return body
}

// Over budget, silently.

func TestLargeFiltersDoNotMakeTheWholeResponsePassThrough(t *testing.T) {
	for _, size := range []int{3500, 20000} {
		t.Run(fmt.Sprintf("%d bytes of filters", size), func(t *testing.T) {
			g, _ := newGuard(t, ctxfit.Config{})
			body := bookings(t)
			filters := json.RawMessage(`{"q":"` + strings.Repeat("a", size) + `"}`)
			req := ctxfit.Request{Endpoint: "GET /api/v1/bookings", Path: "/api/v1/bookings", Filters: filters}
			res, err := g.Handle(context.Background(), req, serve(body, "application/json"))
			require.NoError(t, err)
			assert.True(t, res.Shaped)
			assert.LessOrEqual(t, exact.Count(string(res.Body)), g.Config().HardCap)
			assert.NotEmpty(t, res.Next)
			assert.Less(t, len(res.Next), 400, "the cursor binds the filters by digest")
			checkPromises(t, g, req, ctxfit.Response{Body: body, ContentType: "application/json"})
		})
	}
}

func TestFieldsOnAListProjectsEveryItemWithinTheCap(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	body := bookings(t)
	req := ctxfit.Request{Endpoint: "GET /api/v1/bookings", Path: "/api/v1/bookings", Fields: "id,status"}
	res, err := g.Handle(context.Background(), req, serve(body, "application/json"))
	require.NoError(t, err)
	assert.LessOrEqual(t, exact.Count(string(res.Body)), g.Config().HardCap, "fields= on a list is not the whole list")
	var page struct {
		Items []map[string]any `json:"items"`
	}
	if res.Strategy == telemetry.StrategyPagination {
		require.NoError(t, json.Unmarshal(res.Body, &page))
	} else {
		require.NoError(t, json.Unmarshal(res.Body, &page.Items))
	}
	require.NotEmpty(t, page.Items)
	assert.Len(t, page.Items[0], 2, "each item holds the fields asked for")
}

// Lost or changed.

func TestADominantStringKeepsTheObjectsOtherFields(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	diff := strings.Repeat("@@ -1,3 +1,4 @@\n-old line\n+new line <b>&</b>\n", 4000)
	body, _ := json.Marshal(map[string]any{"diff": diff, "filesChanged": 12, "insertions": 400, "deletions": 380})
	req := ctxfit.Request{Endpoint: "git_diff", Path: "git_diff"}
	res, err := g.Handle(context.Background(), req, serve(body, ""))
	require.NoError(t, err)
	for _, field := range []string{`"filesChanged":12`, `"insertions":400`, `"deletions":380`} {
		assert.Contains(t, string(res.Body), field, "the first chunk's outline keeps the small fields")
	}
	checkPromises(t, g, req, ctxfit.Response{Body: body})
}

func TestAWideObjectWithOneHugeValueKeepsEveryOtherValue(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	env := map[string]string{"HUGE": strings.Repeat("x", 400000)}
	for i := range 604 {
		env[fmt.Sprintf("VAR_%03d", i)] = fmt.Sprintf("value %d", i)
	}
	body, _ := json.MarshalIndent(env, "", "  ")
	req := ctxfit.Request{Endpoint: "get-env", Path: "get-env"}
	res, err := g.Handle(context.Background(), req, serve(body, ""))
	require.NoError(t, err)
	assert.Contains(t, string(res.Body), `"VAR_000": "value 0"`, "values are shown, as they are in the data")
	checkPromises(t, g, req, ctxfit.Response{Body: body})
}

func TestInvalidUTF8AndLoneSurrogatesComeBackAsTheyWere(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{Threshold: 500, HardCap: 1000, ChunkTokens: 200})
	text := []byte(strings.Repeat("caf\xe9 au lait \xff\xfe stray bytes, UTF-8 é 東京\n", 300))
	checkPromises(t, g, ctxfit.Request{Endpoint: "log"}, ctxfit.Response{Body: text, ContentType: "text/plain"})
	latin1 := []byte(strings.Repeat("Cr\xe8me br\xfbl\xe9e, gar\xe7on.\n", 400))
	checkPromises(t, g, ctxfit.Request{Endpoint: "log"}, ctxfit.Response{Body: latin1, ContentType: "text/plain; charset=iso-8859-1"})
	surrogates := []byte(`{"note":"` + strings.Repeat(`lone \ud800 and \udc80, pair \ud83d\ude00; `, 400) + `","id":1}`)
	checkPromises(t, g, ctxfit.Request{Endpoint: "notes"}, ctxfit.Response{Body: surrogates, ContentType: "application/json"})
}

func TestPagedItemsAreTheOriginalBytesNotAReEncoding(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: 2000})
	var b strings.Builder
	b.WriteString("[\n")
	for i := range 300 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  {\n    \"id\": %d,\n    \"html\": \"<a href='x'>&amp;</a>\",\n    \"sep\": \"\u2028\",\n    \"n\": 1.50\n  }", i)
	}
	b.WriteString("\n]\n")
	body := []byte(b.String())
	req := ctxfit.Request{Endpoint: "rows"}
	res, err := g.Handle(context.Background(), req, serve(body, "application/json"))
	require.NoError(t, err)
	assert.Contains(t, string(res.Body), "\"html\": \"<a href='x'>&amp;</a>\"", "no HTML escaping, white space kept")
	assert.Contains(t, string(res.Body), "\"n\": 1.50\n  }")
	checkPromises(t, g, req, ctxfit.Response{Body: body, ContentType: "application/json"})
}

func TestBudgetFieldsStayOutOfTheServersObjects(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	items, _ := json.Marshal(corpus.Items(300))
	body := []byte(`{"commits":` + string(items) + `,"repo":"x"}`)
	res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "git_log"}, serve(body, "application/json"))
	require.NoError(t, err)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(res.Body, &top))
	for _, k := range []string{"estimatedTokens", "budgetUsed", "budgetRemaining", "repo", "commits"} {
		assert.NotContains(t, top, k, "the envelope is ctxfit's own; the data is inside it")
	}
	assert.NotContains(t, string(top["outline"]), "estimatedTokens")
}

// Cost.

func TestAnObjectWithTwoLargeArraysCostsAboutWhatItHolds(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	type entity struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	}
	type relation struct {
		From, To, RelationType string
	}
	var graph struct {
		Entities  []entity   `json:"entities"`
		Relations []relation `json:"relations"`
	}
	for i := range 2000 {
		graph.Entities = append(graph.Entities, entity{fmt.Sprintf("entity-%d", i), "person", []string{"likes tea", fmt.Sprintf("met %d people", i)}})
	}
	for i := range 400 {
		graph.Relations = append(graph.Relations, relation{fmt.Sprintf("entity-%d", i), fmt.Sprintf("entity-%d", i+1), "knows about the work of"})
	}
	body, _ := json.Marshal(graph) // as an MCP server's structured content
	original := exact.Count(string(body))
	require.Greater(t, original, 50000)
	// Following the next cursors alone must not repeat the rest of the
	// object on every page.
	req := ctxfit.Request{Endpoint: "read_graph"}
	sent, pages := 0, 0
	for ; pages < 500; pages++ {
		res, err := g.Handle(context.Background(), req, serve(body, ""))
		require.NoError(t, err)
		sent += exact.Count(string(res.Body))
		if res.Next == "" {
			break
		}
		req.Cursor = res.Next
	}
	assert.LessOrEqual(t, sent, original*13/10+400*pages, "%d pages sent %d tokens for %d", pages, sent, original)
	c := checkPromises(t, g, ctxfit.Request{Endpoint: "read_graph"}, ctxfit.Response{Body: body})
	assert.LessOrEqual(t, c.tokensSent, c.original*13/10+400*c.responses)
	assert.Less(t, c.responses, 60, "not a page per item, not every page repeating the other array")
}

func TestAWideObjectShowsValuesNotJustNames(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	obj := map[string]string{}
	for i := range 1504 {
		obj[fmt.Sprintf("ENV_VARIABLE_%04d", i)] = fmt.Sprintf("/usr/local/lib/value/%d", i)
	}
	body, _ := json.Marshal(obj)
	res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "get-env"}, serve(body, ""))
	require.NoError(t, err)
	var page struct {
		Members map[string]string `json:"members"`
		Meta    struct {
			More struct {
				Names  []string `json:"names"`
				Others int      `json:"others"`
			} `json:"more"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal(res.Body, &page))
	assert.Greater(t, len(page.Members), 50, "a first page of real values")
	names := strings.Join(page.Meta.More.Names, `","`)
	assert.LessOrEqual(t, exact.Count(names), g.Config().Threshold/10+20, "the list of names left for later is bounded")
	assert.NotEmpty(t, res.Next)
	assert.Contains(t, res.Guidance, "Showing members")
}

func TestTheStrategyDoesNotDependOnTiming(t *testing.T) {
	// The same response, shaped under a generous and under a tight time
	// limit: the same strategy, or the byte cut recorded as a fallback
	// (a readable, lossless answer), never another shape and never an
	// error.
	body := bookings(t)
	for _, limit := range []ctxfit.Duration{ctxfit.Duration(1 << 40), 1} {
		g, _ := newGuard(t, ctxfit.Config{ShapeTimeout: limit})
		res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "list"}, serve(body, "application/json"))
		require.NoError(t, err)
		if res.Record.Outcome == telemetry.OutcomeFallback {
			assert.Equal(t, telemetry.StrategyCut, res.Strategy)
			assert.Equal(t, "shaping_timeout", res.Record.Fallback)
			continue
		}
		assert.Equal(t, telemetry.StrategyPagination, res.Strategy)
	}
}

func TestAnInternalErrorTellsTheClientNothingOfItsCause(t *testing.T) {
	p := ctxfit.ProblemOf(errors.New("redis: OOM at 10.0.0.7, password hunter2"), ctxfit.Params{})
	assert.Equal(t, 500, p.Status)
	assert.Equal(t, "internal", p.Code)
	assert.NotContains(t, p.Detail, "hunter2")
	assert.NotContains(t, p.Detail, "redis")
	assert.NotEmpty(t, p.Suggestion)
}

// panickyStore is a store whose every call panics with a message that
// must not reach a client.
type panickyStore struct{ store.Store }

func (panickyStore) Put(context.Context, string, []byte, time.Duration) error {
	panic("redis: OOM at 10.0.0.7, password hunter2")
}

func (panickyStore) Get(context.Context, string) ([]byte, bool, error) {
	panic("redis: OOM at 10.0.0.7, password hunter2")
}

func TestAStoreThatPanicsIsUnavailableAndItsMessageIsLoggedNotSent(t *testing.T) {
	var log strings.Builder
	mem := store.NewMemory(nil)
	t.Cleanup(func() { _ = mem.Close() })
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret}, Store: panickyStore{mem},
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	_, err = g.Handle(context.Background(), ctxfit.Request{Endpoint: "list"}, serve(bookings(t), "application/json"))
	require.ErrorIs(t, err, ctxfit.ErrStoreUnavailable)
	p := ctxfit.ProblemOf(err, ctxfit.Params{})
	assert.Equal(t, 503, p.Status)
	assert.NotContains(t, p.Detail, "hunter2")
	assert.Contains(t, log.String(), "hunter2", "the operator gets the cause")
}
