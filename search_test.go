package ctxfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
)

type searchPage struct {
	Matches []struct {
		Line   int             `json:"line"`
		Text   string          `json:"text"`
		Before []string        `json:"before"`
		After  []string        `json:"after"`
		Index  *int            `json:"index"`
		Item   json.RawMessage `json:"item"`
		Key    string          `json:"key"`
	} `json:"matches"`
	NextCursor *string `json:"nextCursor"`
	Meta       struct {
		TotalMatches int `json:"totalMatches"`
		Shown        int `json:"shown"`
	} `json:"meta"`
}

// searchAll runs a search and follows its cursors to the end, checking the
// hard cap on each page.
func searchAll(t *testing.T, g *ctxfit.Guard, req ctxfit.Request, fetch ctxfit.Fetch) (pages []searchPage) {
	t.Helper()
	for range 10_000 {
		res, err := g.Handle(context.Background(), req, fetch)
		require.NoError(t, err)
		require.LessOrEqual(t, exact.Count(string(res.Body)), g.Config().HardCap)
		var p searchPage
		require.NoError(t, json.Unmarshal(res.Body, &p), "%s", res.Body)
		pages = append(pages, p)
		if res.Next == "" {
			return pages
		}
		req.Search, req.Cursor = nil, res.Next // a search continues by its cursor alone
	}
	t.Fatal("too many pages")
	return nil
}

func TestSearchFindsEveryMatchingLineOnceWithItsNumber(t *testing.T) {
	var b strings.Builder
	lines := 20_000
	if testing.Short() {
		lines = 5_000 // under -race (test.sh): still many chunks and many pages of matches; 20,000 without -race
	}
	matches := lines / 97
	for i := 1; i <= lines; i++ {
		level := "INFO"
		if i%97 == 0 {
			level = "ERROR"
		}
		fmt.Fprintf(&b, "2026-11-24T08:00:00Z %s request %d\n", level, i)
	}
	log := []byte(b.String())
	g, _ := newGuard(t, ctxfit.Config{Threshold: 1000, HardCap: 1600})
	for _, form := range []struct {
		name        string
		body        []byte
		contentType string
	}{
		{"a text", log, "text/plain"},
		{"a JSON string", mustJSON(t, b.String()), "application/json"},
	} {
		t.Run(form.name, func(t *testing.T) {
			fetch := serve(form.body, form.contentType)
			first, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "log"}, fetch)
			require.NoError(t, err)
			require.NotEmpty(t, first.Next, "the log is chunked")

			for _, req := range []ctxfit.Request{
				{Endpoint: "log", Cursor: first.Next, Search: &ctxfit.Search{Pattern: "ERROR", Context: 1}},
				{Endpoint: "log", Search: &ctxfit.Search{Pattern: "error", IgnoreCase: true, Context: 1}}, // no cursor: the response itself
			} {
				pages := searchAll(t, g, req, fetch)
				var found []int
				for _, p := range pages {
					assert.Equal(t, matches, p.Meta.TotalMatches)
					for _, m := range p.Matches {
						found = append(found, m.Line)
						assert.Equal(t, fmt.Sprintf("2026-11-24T08:00:00Z ERROR request %d", m.Line), m.Text)
						assert.Equal(t, []string{fmt.Sprintf("2026-11-24T08:00:00Z INFO request %d", m.Line-1)}, m.Before)
						assert.Equal(t, []string{fmt.Sprintf("2026-11-24T08:00:00Z INFO request %d", m.Line+1)}, m.After)
					}
				}
				require.Len(t, found, matches, "every match once")
				for i, l := range found {
					assert.Equal(t, 97*(i+1), l)
				}
				assert.Greater(t, len(pages), 1, "fitted to the budget, continued by cursor")
			}
		})
	}
}

func TestSearchFindsMatchingItemsOfAListWithTheirIndexes(t *testing.T) {
	body := bookings(t)
	var all []map[string]any
	require.NoError(t, json.Unmarshal(body, &all))
	want := 0
	for _, b := range all {
		if b["status"] == "cancelled" {
			want++
		}
	}
	require.Positive(t, want)
	g, _ := newGuard(t, ctxfit.Config{})
	fetch := serve(body, "application/json")
	first, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "list"}, fetch)
	require.NoError(t, err)
	pages := searchAll(t, g, ctxfit.Request{Endpoint: "list", Cursor: first.Next,
		Search: &ctxfit.Search{Pattern: "cancelled", Literal: true, Path: "status"}}, fetch)
	got := 0
	for _, p := range pages {
		assert.Equal(t, want, p.Meta.TotalMatches)
		for _, m := range p.Matches {
			require.NotNil(t, m.Index)
			var item map[string]any
			require.NoError(t, json.Unmarshal(m.Item, &item))
			assert.Equal(t, all[*m.Index], item, "the item at its index, as the server wrote it")
			assert.Equal(t, "cancelled", item["status"])
			got++
		}
	}
	assert.Equal(t, want, got)
}

func TestABadSearchIsA400ThatSaysWhatToDo(t *testing.T) {
	g, _ := newGuard(t, ctxfit.Config{})
	for _, q := range []ctxfit.Search{
		{Pattern: ""},
		{Pattern: "(unclosed"},
		{Pattern: strings.Repeat("a", 600)},
		{Pattern: "x", Context: 9},
	} {
		_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "log", Search: &q}, serve([]byte("a log\n"), "text/plain"))
		require.Error(t, err, "%+v", q)
		p := ctxfit.ProblemOf(err, ctxfit.Params{})
		assert.Equal(t, 400, p.Status, "%+v: %v", q, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// cancelingCounter counts exactly, and cancels a request's context when it
// counts a text of cancelLen bytes: the client goes once shaping started.
type cancelingCounter struct {
	cancelLen int
	cancel    context.CancelFunc
}

func (c *cancelingCounter) Count(text string) int {
	if len(text) == c.cancelLen {
		c.cancel()
	}
	return exact.Count(text)
}

func TestASearchStopsWhenItsClientGoes(t *testing.T) {
	lines := make([]string, 200_000)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d: nothing to see", i)
	}
	list, err := json.Marshal(lines)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, contentType string
		body              []byte
	}{
		{"a text, line by line", "text/plain", []byte(strings.Join(lines, "\n"))},
		{"a list, item by item", "application/json", list},
	} {
		body := tc.body
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &cancelingCounter{cancelLen: len(body), cancel: cancel}
			g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Hour)}, Counter: c})
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			_, err = g.Handle(ctx, ctxfit.Request{Endpoint: "x", Search: &ctxfit.Search{Pattern: "never there"}}, serve(body, tc.contentType))
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
}
