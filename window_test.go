package ctxfit_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	rebuild "github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/store"
)

// readCounter is a store.Memory that counts what its readers take: whole
// snapshots (Get) and ranges (GetRange).
type readCounter struct {
	*store.Memory
	mu                sync.Mutex
	gets, rangeBytes  int
	largestRangeBytes int
}

func (c *readCounter) Get(ctx context.Context, id string) ([]byte, bool, error) {
	c.mu.Lock()
	c.gets++
	c.mu.Unlock()
	return c.Memory.Get(ctx, id)
}

func (c *readCounter) GetRange(ctx context.Context, id string, start, end int64) ([]byte, bool, error) {
	data, ok, err := c.Memory.GetRange(ctx, id, start, end)
	c.mu.Lock()
	c.rangeBytes += len(data)
	c.largestRangeBytes = max(c.largestRangeBytes, len(data))
	c.mu.Unlock()
	return data, ok, err
}

// reads returns and resets the counts.
func (c *readCounter) reads() (gets, rangeBytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gets, rangeBytes = c.gets, c.rangeBytes
	c.gets, c.rangeBytes = 0, 0
	return gets, rangeBytes
}

func TestContinuationsReadOnlyWhatTheySend(t *testing.T) {
	pretty := strings.ReplaceAll(string(listOf(300<<10)), "},{", "},\n"+strings.Repeat(" ", 700)+"{")
	var bigItems strings.Builder
	bigItems.WriteString("[")
	for i := range 3 {
		if i > 0 {
			bigItems.WriteString(",")
		}
		bigItems.WriteString(`{"id":1,"blob":"` + strings.Repeat("b", 200<<10) + `"},3,` + `[` + strings.Repeat("7,", 40000) + `7]`)
	}
	bigItems.WriteString("]")
	logString, err := json.Marshal(string(logOf(512 << 10)))
	require.NoError(t, err)
	rootString := append(append([]byte(" \n "), logString...), " \n"...)
	field := append(append([]byte(`{"id":7,"log":`), logString...), '}')
	cases := []struct {
		name        string
		body        []byte
		contentType string
		// bounded: each continuation reads at most this many bytes of the
		// snapshot, and never the whole of it (0: values larger than any
		// page make it read more, and parts read the whole snapshot).
		bounded int
	}{
		{"the pages of a 512 KB list read about a page each", listOf(512 << 10), "application/json", 64 << 10},
		{"the chunks of a 512 KB log read about a chunk each", logOf(512 << 10), "text/plain", 64 << 10},
		{"pages whose separators hold more white space than a window reads before it", []byte(pretty), "application/json", 256 << 10},
		{"elements larger than a window", []byte(bigItems.String()), "application/json", 0},
		{"the chunks of a 512 KB JSON string, white space around it, read about a chunk each", rootString, "application/json", 64 << 10},
		{"the chunks of a 512 KB string in an object read about a chunk each", field, "application/json", 64 << 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &readCounter{Memory: store.NewMemory(&store.MemoryOptions{MaxBytes: 1 << 30})}
			g, err := ctxfit.New(&ctxfit.Options{Store: st, Config: ctxfit.Config{Secret: secret, Threshold: 2000, HardCap: 4000,
				ShapeTimeout: ctxfit.Duration(time.Hour), AdmissionWait: ctxfit.Duration(time.Hour)}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			ctx := context.Background()
			req := ctxfit.Request{Endpoint: "x", Path: "/x"}
			fetch := serve(c.body, c.contentType)
			first, err := g.Handle(ctx, req, fetch)
			require.NoError(t, err)
			require.True(t, first.Shaped)
			st.reads()
			continuations := 0
			rebuilt, _, err := rebuild.Rebuild(first.Body, func(cursor string, part int64) ([]byte, error) {
				next := req
				next.Cursor, next.Part = cursor, part
				res, err := g.Handle(ctx, next, fetch)
				if err != nil {
					return nil, err
				}
				gets, n := st.reads()
				if c.bounded > 0 && part == 0 {
					continuations++
					assert.Zero(t, gets, "a continuation does not read the whole snapshot")
					assert.LessOrEqual(t, n, c.bounded, "a continuation reads about what it sends")
				}
				assert.LessOrEqual(t, exact.Count(string(res.Body)), 4000, "nothing over the hard cap")
				return res.Body, nil
			})
			require.NoError(t, err)
			require.Equal(t, string(c.body), string(rebuilt), "nothing lost, byte for byte")
			if c.bounded > 0 {
				assert.Greater(t, continuations, 10)
			} else {
				assert.Greater(t, st.largestRangeBytes, 100<<10, "the windows grew to hold the large values")
			}
		})
	}
}
