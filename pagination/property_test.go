package pagination_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/pagination"
)

// words gives random items a mix of what tokenizers meet in API output.
var words = []string{
	"the", "booking", "guest", "confirmed", "2025-11-01", "USD", "1200.00", "id", "PR789",
	"amenities", "wifi", "pool", "é", "naïve", "東京", "データ", "😀", "<b>", "a&b", "\"quoted\"",
	"tab\there", "line\nbreak", "0123456789", "https://example.com/x?y=1", "   ", "ZZZZZZZZ",
}

// headroom is more than the tokens of any empty page with a cursor: a page
// of an item of at most hardCap-headroom bytes is within the hard cap (a
// token is at least one byte), so that these lists never hold an item too
// large to page.
const headroom = 300

// randomList returns n records whose marshalled size varies from a few bytes
// to maxBytes.
func randomList(rng *rand.Rand, n, maxBytes int) []record {
	items := make([]record, n)
	for i := range items {
		var size int
		switch r := rng.IntN(100); {
		case r < 70:
			size = rng.IntN(40)
		case r < 95:
			size = rng.IntN(400)
		default:
			size = rng.IntN(maxBytes)
		}
		var sb strings.Builder
		for sb.Len() < size {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		items[i] = record{ID: i, Name: "item", Notes: sb.String()}
		for {
			b, _ := json.Marshal(items[i])
			if len(b) <= maxBytes {
				break
			}
			items[i].Notes = items[i].Notes[:len(items[i].Notes)/2]
		}
	}
	return items
}

// TestPropertyNothingLostNothingOverBudget pages random lists under random
// budgets and limits, following nextCursor to the end, and checks that every
// item comes back exactly once and in order, and that every page is within
// the threshold by exact count unless it holds a single item (which is
// within the hard cap).
func TestPropertyNothingLostNothingOverBudget(t *testing.T) {
	counter := exactCounter(t)
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if testing.Short() {
		seeds = seeds[:3]
	}
	for _, seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		n := rng.IntN(5001)
		if seed == 1 {
			n = 5000 // always one list of the largest size
		}
		threshold := int(50 * math.Pow(80, rng.Float64())) // 50 to 4,000, log-uniform
		hardCap := threshold + rng.IntN(2*threshold+1) + headroom
		b := budget.Budget{Threshold: threshold, HardCap: hardCap}
		raw := seed%2 == 0
		if raw && raceEnabled {
			// Each raw page scans the whole array: keep the race run short.
			n = min(n, 600)
		}
		path := "Paginate"
		if raw {
			path = "PaginateJSON"
		}
		name := fmt.Sprintf("seed %d: %s returns all %d items once and in order with threshold %d and hard cap %d", seed, path, n, threshold, hardCap)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			items := randomList(rng, n, min(hardCap-headroom, 6*threshold))
			p := newPager(t, nil, &pagination.Options{Budget: b, Counter: counter})
			limits := make([]int, 64)
			for i := range limits {
				if rng.IntN(4) == 0 {
					limits[i] = 0
				} else {
					limits[i] = 1 + rng.IntN(200)
				}
			}
			var data []byte
			var want []json.RawMessage
			if raw {
				var err error
				data, err = json.MarshalIndent(items, "", " ") // white space the pages must not keep
				require.NoError(t, err)
				want = rawElements(t, data)
			}

			req := pagination.Request{}
			next := 0 // the ID expected next
			single, fitted, fill := 0, 0, 0.0
			for page := 0; ; page++ {
				req.Limit = limits[page%len(limits)]
				var got []json.RawMessage
				var meta pagination.Meta
				var cursor string
				var tokens int
				if raw {
					r, err := p.PaginateJSON(data, req, listQuery)
					require.NoError(t, err, "page %d", page)
					got, meta, cursor = r.Items, r.Meta, r.NextCursor
					tokens = pageTokens(t, counter, r)
					for i, it := range r.Items {
						require.Equal(t, string(want[next+i]), string(it), "page %d item %d is the element byte for byte", page, i)
					}
				} else {
					r, err := pagination.Paginate(p, items, req, listQuery)
					require.NoError(t, err, "page %d", page)
					meta, cursor = r.Meta, r.NextCursor
					tokens = pageTokens(t, counter, r)
					for i, it := range r.Items {
						require.Equal(t, next+i, it.ID, "page %d item %d", page, i)
					}
					got = make([]json.RawMessage, len(r.Items))
				}
				limit := req.Limit
				if limit == 0 {
					limit = pagination.DefaultLimit
				}
				require.LessOrEqual(t, len(got), limit, "page %d holds at most the limit", page)
				require.Equal(t, len(got), meta.PageSize, "page %d: pageSize", page)
				require.Equal(t, n, meta.TotalCount, "page %d: totalCount", page)
				require.Equal(t, meta.HasMore, cursor != "", "page %d: nextCursor set exactly when hasMore", page)
				require.LessOrEqual(t, tokens, hardCap, "page %d is within the hard cap", page)
				if len(got) > 1 {
					require.LessOrEqual(t, tokens, threshold, "page %d of %d items is within the threshold", page, len(got))
				} else {
					single++
				}
				next += len(got)
				if !meta.HasMore {
					break
				}
				require.NotEmpty(t, got, "page %d: a page before the end is never empty", page)
				if len(got) > 1 && len(got) < limit {
					fitted++ // cut by the budget, not the limit
					fill += float64(tokens) / float64(threshold)
				}
				req.Cursor = cursor
			}
			assert.Equal(t, n, next, "every item was returned")
			t.Logf("single-item pages: %d; pages cut by the budget: %d, filled to %.1f%% of the threshold on average",
				single, fitted, 100*fill/float64(max(1, fitted)))
		})
	}
}
