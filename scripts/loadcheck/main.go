// Command loadcheck is the correctness side of scripts/load.sh. While wrk
// loads the wrapped server(s), it
//
//   - walks the bookings list through its nextCursors again and again
//     (unfiltered in both orders, and filtered by status), page by page
//     alternating between the -urls given (a cursor issued by A is followed
//     on B), and checks that the walk returns exactly the bookings of
//     bookings.Filter, in order: none lost, none twice;
//   - sends bad cursors (garbage and a tampered real one) and expects 400;
//   - samples VmRSS of the -pids from /proc/PID/status and checks it stays
//     under -rss-limit.
//
// A walk whose snapshot was evicted from the bounded store under the load
// (400 cursor_stale) is counted and started again: that is the documented
// behaviour, not a loss. After -duration, one walk of each kind runs to the
// end on each URL as the last word. Any 5xx, unexpected status, lost or
// duplicated item, or RSS above the limit makes it exit 1.
//
//	go run ./scripts/loadcheck -urls http://127.0.0.1:8081 -duration 10s -pids 1234 -rss-limit 281018368
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
)

type variant struct{ status, order string }

var variants = []variant{
	{"", ""},
	{"", bookings.OrderCreatedDesc},
	{"pending", ""},
	{"cancelled", bookings.OrderCreatedDesc},
}

type checker struct {
	urls   []string
	client *http.Client

	mu       sync.Mutex
	failures []string
	walks    int
	items    int
	evicted  int
	badOK    int
}

func (c *checker) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.failures) < 20 {
		c.failures = append(c.failures, fmt.Sprintf(format, args...))
	}
}

type page struct {
	Items []struct {
		ID string `json:"id"`
	} `json:"items"`
	NextCursor string `json:"nextCursor"`
}

type problem struct {
	Code string `json:"code"`
}

var errStale = errors.New("cursor_stale")

// get fetches base+path and returns the status and body.
func (c *checker) get(ctx context.Context, rawURL string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// walk follows the cursors of one variant from the first page to the last,
// page i on c.urls[(start+i)%len], and checks the ids. It returns errStale
// when the snapshot was evicted and a transport error as is; content
// failures are recorded.
func (c *checker) walk(ctx context.Context, v variant, start int) error {
	q := url.Values{}
	if v.status != "" {
		q.Set("status", v.status)
	}
	if v.order != "" {
		q.Set("order", v.order)
	}
	want, _ := bookings.Filter(v.status, v.order)
	var got []string
	cursor := ""
	for i := 0; ; i++ {
		if i > 2*len(want)+2 {
			c.fail("walk %v: more than %d pages", v, i)
			return nil
		}
		qq := url.Values{}
		for k, vs := range q {
			qq[k] = vs
		}
		if cursor != "" {
			qq.Set("cursor", cursor)
		}
		u := c.urls[(start+i)%len(c.urls)] + "/api/v1/bookings"
		if len(qq) > 0 {
			u += "?" + qq.Encode()
		}
		status, body, err := c.get(ctx, u)
		if err != nil {
			return err
		}
		if status == http.StatusBadRequest {
			var p problem
			if json.Unmarshal(body, &p) == nil && p.Code == "cursor_stale" {
				return errStale
			}
		}
		if status != http.StatusOK {
			c.fail("walk %v page %d on %s: status %d: %.300s", v, i, c.urls[(start+i)%len(c.urls)], status, body)
			return nil
		}
		var p page
		if err := json.Unmarshal(body, &p); err != nil {
			c.fail("walk %v page %d: not a page: %v: %.200s", v, i, err, body)
			return nil
		}
		if len(p.Items) == 0 && p.NextCursor != "" {
			c.fail("walk %v page %d: empty page with a nextCursor", v, i)
			return nil
		}
		for _, it := range p.Items {
			got = append(got, it.ID)
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	c.compare(v, want, got)
	return nil
}

func (c *checker) compare(v variant, want []bookings.Booking, got []string) {
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	var dup, lost []string
	for id, n := range seen {
		if n > 1 {
			dup = append(dup, id)
		}
	}
	wantSet := map[string]bool{}
	for _, b := range want {
		wantSet[b.ID] = true
		if seen[b.ID] == 0 {
			lost = append(lost, b.ID)
		}
	}
	var extra []string
	for id := range seen {
		if !wantSet[id] {
			extra = append(extra, id)
		}
	}
	if len(dup)+len(lost)+len(extra) > 0 {
		c.fail("walk %v: %d items, want %d: lost %v, duplicated %v, unexpected %v", v, len(got), len(want), head(lost), head(dup), head(extra))
		return
	}
	for i, b := range want {
		if got[i] != b.ID {
			c.fail("walk %v: item %d is %s, want %s (order)", v, i, got[i], b.ID)
			return
		}
	}
	c.mu.Lock()
	c.walks++
	c.items += len(got)
	c.mu.Unlock()
}

func head(s []string) []string {
	if len(s) > 5 {
		return append(s[:5:5], "...")
	}
	return s
}

// badCursors sends a garbage and a tampered cursor and expects 400.
func (c *checker) badCursors(ctx context.Context, n int) error {
	base := c.urls[n%len(c.urls)] + "/api/v1/bookings"
	_, body, err := c.get(ctx, base)
	if err != nil {
		return err
	}
	var p page
	_ = json.Unmarshal(body, &p)
	bad := []string{"garbage-" + strconv.Itoa(n)}
	if cur := p.NextCursor; len(cur) > 10 {
		b := []byte(cur)
		i := len(b) / 2
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		bad = append(bad, string(b))
	}
	for _, cur := range bad {
		status, body, err := c.get(ctx, base+"?cursor="+url.QueryEscape(cur))
		if err != nil {
			return err
		}
		if status != http.StatusBadRequest {
			c.fail("bad cursor %q: status %d, want 400: %.200s", cur, status, body)
			continue
		}
		c.mu.Lock()
		c.badOK++
		c.mu.Unlock()
	}
	return nil
}

func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, errors.New("no VmRSS")
}

func main() {
	urls := flag.String("urls", "", "comma-separated base URLs of the wrapped server(s); walks alternate between them page by page")
	duration := flag.Duration("duration", 10*time.Second, "how long to walk under load before the final walks")
	pids := flag.String("pids", "", "comma-separated PIDs whose VmRSS is sampled")
	rssLimit := flag.Int64("rss-limit", 0, "VmRSS limit in bytes (0: no limit)")
	flag.Parse()
	c := &checker{client: &http.Client{Timeout: 60 * time.Second}}
	for u := range strings.SplitSeq(*urls, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			c.urls = append(c.urls, u)
		}
	}
	if len(c.urls) == 0 {
		fmt.Fprintln(os.Stderr, "loadcheck: -urls is required")
		os.Exit(2)
	}
	var pidList []int
	for p := range strings.SplitSeq(*pids, ",") {
		if p = strings.TrimSpace(p); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil {
				fmt.Fprintln(os.Stderr, "loadcheck: bad pid", p)
				os.Exit(2)
			}
			pidList = append(pidList, n)
		}
	}

	// RSS sampler.
	maxRSS := make(map[int]int64)
	samples := 0
	stopRSS := make(chan struct{})
	rssDone := make(chan struct{})
	go func() {
		defer close(rssDone)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			for _, pid := range pidList {
				rss, err := vmRSS(pid)
				if err != nil {
					c.fail("pid %d: %v (did the server die?)", pid, err)
					continue
				}
				maxRSS[pid] = max(maxRSS[pid], rss)
			}
			samples++
			select {
			case <-stopRSS:
				return
			case <-t.C:
			}
		}
	}()

	ctx := context.Background()
	deadline := time.Now().Add(*duration)
	n := 0
	for time.Now().Before(deadline) {
		v := variants[n%len(variants)]
		err := c.walk(ctx, v, n)
		switch {
		case errors.Is(err, errStale):
			c.mu.Lock()
			c.evicted++
			c.mu.Unlock()
		case err != nil:
			c.fail("walk %v: %v", v, err)
		}
		if n%4 == 0 {
			if err := c.badCursors(ctx, n); err != nil {
				c.fail("bad cursors: %v", err)
			}
		}
		n++
	}
	// The last word: every kind of walk, starting on every instance, must
	// complete now that the load is (about) over. Evictions get a few
	// retries, as wrk's last requests may still be in flight.
	for _, v := range variants {
		for start := range c.urls {
			var err error
			for range 5 {
				if err = c.walk(ctx, v, start); !errors.Is(err, errStale) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if err != nil {
				c.fail("final walk %v from %s: %v", v, c.urls[start], err)
			}
		}
	}
	close(stopRSS)
	<-rssDone

	var rss []string
	for _, pid := range pidList {
		m := maxRSS[pid]
		rss = append(rss, fmt.Sprintf("%d:%.1fMiB", pid, float64(m)/(1<<20)))
		if *rssLimit > 0 && m > *rssLimit {
			c.fail("pid %d: VmRSS peaked at %.1f MiB, above the limit of %.1f MiB", pid, float64(m)/(1<<20), float64(*rssLimit)/(1<<20))
		}
	}
	fmt.Printf("CHECKRESULT walks=%d items=%d evicted_restarts=%d bad_cursor_400=%d rss_samples=%d max_rss=%s failures=%d\n",
		c.walks, c.items, c.evicted, c.badOK, samples, strings.Join(rss, ","), len(c.failures))
	for _, f := range c.failures {
		fmt.Println("FAIL:", f)
	}
	if len(c.failures) > 0 || c.walks == 0 {
		os.Exit(1)
	}
}
