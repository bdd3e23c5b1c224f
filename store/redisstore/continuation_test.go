package redisstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/internal/testing/contbench"
	rebuild "github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/redistest"
	"github.com/ctxfit/ctxfit/store/redisstore"
)

// What a Guard keeps in Redis, its continuations read back by range
// (GETRANGE): these tests follow every cursor through a real redis-server,
// and the benchmark compares a continuation from a large snapshot with one
// from a small one.

// redisGuard returns a Guard in store mode whose snapshots are in the
// Redis at url, under a prefix of the test's own.
func redisGuard(tb testing.TB, url string, cfg ctxfit.Config) *ctxfit.Guard {
	tb.Helper()
	st, err := redisstore.Open(url, &redisstore.Options{Prefix: "ctxfit:" + tb.Name() + ":", Timeout: patient})
	require.NoError(tb, err)
	cfg.Secret = "a test secret of thirty-two bytes or more, fixed"
	cfg.ShapeTimeout, cfg.AdmissionWait = ctxfit.Duration(time.Hour), ctxfit.Duration(time.Hour)
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Store: st})
	require.NoError(tb, err)
	tb.Cleanup(func() {
		_ = g.Close()
		_ = st.Close()
	})
	return g
}

func TestFollowingEveryCursorThroughRedisGivesTheOriginal(t *testing.T) {
	url := redistest.URL(t)
	pretty, err := json.MarshalIndent(corpus.Items(400), "", "    ")
	require.NoError(t, err)
	str, err := json.Marshal(string(contbench.Log(1 << 20)))
	require.NoError(t, err)
	rootString := append(append([]byte("\n  "), str...), "  \n"...)
	for _, c := range []struct {
		name        string
		body        []byte
		contentType string
	}{
		{"the pages of a 1 MB list", contbench.List(1 << 20), "application/json"},
		{"the pages of an indented list", pretty, "application/json"},
		{"the chunks of a 1 MB log", contbench.Log(1 << 20), "text/plain"},
		{"the chunks of a JSON string with white space around it", rootString, "application/json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := redisGuard(t, url, ctxfit.Config{Threshold: 2000, HardCap: 4000})
			ctx := context.Background()
			req := ctxfit.Request{Endpoint: "x", Path: "/x"}
			fetch := func(context.Context) (ctxfit.Response, error) {
				return ctxfit.Response{Body: c.body, ContentType: c.contentType}, nil
			}
			first, err := g.Handle(ctx, req, fetch)
			require.NoError(t, err)
			require.NotEmpty(t, first.Next, "the response is continued")
			got, stats, err := rebuild.Rebuild(first.Body, func(cursor string, part int64) ([]byte, error) {
				next := req
				next.Cursor, next.Part = cursor, part
				res, err := g.Handle(ctx, next, fetch)
				return res.Body, err
			})
			require.NoError(t, err)
			require.Greater(t, stats.Responses, 10)
			require.Equal(t, string(c.body), string(got), "nothing lost, byte for byte, through Redis")
		})
	}
}

// BenchmarkRedisContinuation: the second page (or chunk) of a snapshot in
// Redis, from a 10 MB snapshot against a 100 KB one ("x-small"; the goal
// is at most 1.5), as the root package's BenchmarkContinuation measures it
// for the in-memory store:
//
//	go test -run '^$' -bench RedisContinuation -benchtime 1000x ./store/redisstore
func BenchmarkRedisContinuation(b *testing.B) {
	url := redistest.URL(b)
	contbench.Run(b, func(b *testing.B) *ctxfit.Guard { return redisGuard(b, url, ctxfit.Config{}) })
}
