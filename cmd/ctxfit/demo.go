package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"text/tabwriter"
	"time"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/pagination"
)

// runDemo shows ctxfit at work on generated data: no network, no files.
const demoUsage = `Usage: ctxfit demo [--items N] [--threshold N]

Shows ctxfit on generated data, offline:
  - pagination: N bookings paged within the threshold, every item found
    exactly once by following the cursors, and a tampered, a foreign and an
    expired cursor refused with the messages a model reads;
  - summary: a verbose booking as its essential fields, and whole again
    through its drill-down cursor;
  - chunks: a 10,000-line log read back byte for byte through chunk cursors;
  - HTTP and MCP: the example bookings API behind httpfit and a tool result
    behind mcpfit, served in this process on 127.0.0.1;
  - find, don't page: two questions answered by reading on with
    ctxfit_next and by one ctxfit_search or ctxfit_query call, with the
    calls and tokens of each side by side.

Flags:
`

func runDemo(args []string, stdout io.Writer) error {
	fs := newFlagSet("demo", stdout)
	items := fs.Int("items", 500, "number of generated bookings to page through")
	threshold := fs.Int("threshold", budget.DefaultThreshold, "token threshold of each page")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageErrorOf(err)
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("takes no arguments, got %q", fs.Args())}
	}
	if *items < 0 {
		return usageError{fmt.Errorf("-items %d must be >= 0", *items)}
	}
	b := budget.Budget{Threshold: *threshold, HardCap: max(*threshold, budget.DefaultHardCap)}
	if err := b.Validate(); err != nil {
		return usageError{err}
	}
	counter, err := budget.Exact(budget.O200KBase)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "== Pagination: one long list\n\n")
	if err := demoPaging(stdout, counter, *items, b); err != nil {
		return err
	}
	// The generated booking holds about 3,200 tokens: show it against a
	// 2,000-token threshold, as a tool with a tighter budget would.
	sb := budget.Budget{Threshold: min(b.Threshold, 2000), HardCap: b.HardCap}
	if err := demoSummary(stdout, counter, sb); err != nil {
		return err
	}
	codec, err := demoCodec(time.Now)
	if err != nil {
		return err
	}
	if err := demoChunk(stdout, counter, codec, chunk.DefaultMaxTokens); err != nil {
		return err
	}
	if err := demoHTTP(stdout, counter); err != nil {
		return fmt.Errorf("http: %w", err)
	}
	return demoMCP(stdout, counter)
}

// demoCodec returns a cursor codec with a fresh random secret.
func demoCodec(now func() time.Time) (*cursor.Codec, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	return cursor.NewCodec([][]byte{secret}, &cursor.Options{Now: now})
}

// demoPaging pages a generated list, follows every cursor, checks that every
// item came back exactly once, and shows a tampered and an expired cursor
// being rejected.
func demoPaging(w io.Writer, counter budget.Counter, n int, b budget.Budget) error {
	now := time.Now()
	codec, err := demoCodec(func() time.Time { return now })
	if err != nil {
		return err
	}
	pager, err := pagination.NewPager(codec, &pagination.Options{Counter: counter, Budget: b})
	if err != nil {
		return err
	}
	list := corpus.Items(n)
	whole, err := json.Marshal(list)
	if err != nil {
		return err
	}
	q := cursor.Binding{Scope: "GET /api/v1/bookings", Order: "created_desc"}

	fmt.Fprintf(w, "Paging %d generated bookings (%d tokens as one response) inside a %d-token budget.\n",
		n, counter.Count(string(whole)), b.Threshold)
	fmt.Fprintf(w, "Counts are exact (o200k_base), envelope and cursor included.\n\n")

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "page\titems\tcount\ttokens\tnextCursor\t")
	seen := make([]int, n)
	var got []corpus.Item
	req := pagination.Request{Limit: pagination.MaxLimit}
	var lastCursor string
	pages, largest := 0, 0
	for {
		page, err := pagination.Paginate(pager, list, req, q)
		if err != nil {
			return fmt.Errorf("page %d: %w", pages+1, err)
		}
		body, err := json.Marshal(page)
		if err != nil {
			return err
		}
		tokens := counter.Count(string(body))
		largest = max(largest, tokens)
		pages++
		first := len(got) + 1
		for _, it := range page.Items {
			var idx int
			if _, err := fmt.Sscanf(it.ID, "BK%05d", &idx); err == nil && idx >= 1 && idx <= n {
				seen[idx-1]++
			}
		}
		got = append(got, page.Items...)
		next := "null"
		if page.NextCursor != "" {
			next = fmt.Sprintf("%d chars", len(page.NextCursor))
		}
		span := "-"
		if len(page.Items) > 0 {
			span = fmt.Sprintf("%d-%d", first, len(got))
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t\n", pages, span, len(page.Items), tokens, next)
		if page.NextCursor == "" {
			break
		}
		lastCursor = page.NextCursor
		req.Cursor = lastCursor
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	once := 0
	for _, c := range seen {
		if c == 1 {
			once++
		}
	}
	inOrder := len(got) == n
	for i := range got {
		if !inOrder || !reflect.DeepEqual(got[i], list[i]) {
			inOrder = false
			break
		}
	}
	fmt.Fprintf(w, "\nFollowed %d cursors: %d of %d items recovered, %d exactly once, in order: %v.\n",
		pages-1, len(got), n, once, inOrder)
	fmt.Fprintf(w, "Largest page: %d tokens (threshold %d, hard cap %d).\n", largest, b.Threshold, b.HardCap)
	if once != n || !inOrder {
		return fmt.Errorf("lost or duplicated items: %d of %d recovered exactly once", once, n)
	}
	if lastCursor == "" {
		fmt.Fprintln(w, "\nThe list fit on one page, so no cursor was issued.")
		return nil
	}

	fmt.Fprintln(w, "\nA tampered cursor (one character changed):")
	tampered := []byte(lastCursor)
	mid := len(tampered) / 2
	tampered[mid] = map[bool]byte{true: 'A', false: 'B'}[tampered[mid] != 'A']
	_, err = pagination.Paginate(pager, list, pagination.Request{Cursor: string(tampered)}, q)
	fmt.Fprintf(w, "  rejected: %v\n", err)

	fmt.Fprintln(w, "\nThe same valid cursor on another endpoint:")
	other := q
	other.Scope = "GET /api/v1/guests"
	_, err = pagination.Paginate(pager, list, pagination.Request{Cursor: lastCursor}, other)
	fmt.Fprintf(w, "  rejected: %v\n", err)

	fmt.Fprintf(w, "\nThe same valid cursor %v later (cursors live %v):\n", 11*time.Minute, codec.TTL())
	now = now.Add(11 * time.Minute)
	_, err = pagination.Paginate(pager, list, pagination.Request{Cursor: lastCursor}, q)
	fmt.Fprintf(w, "  rejected: %v\n", err)
	return nil
}
