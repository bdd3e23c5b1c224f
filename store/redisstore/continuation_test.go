package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/corpus"
	rebuild "github.com/ctxfit/ctxfit/internal/follow"
	"github.com/ctxfit/ctxfit/internal/redistest"
	"github.com/ctxfit/ctxfit/store/redisstore"
)

// What a Guard keeps in Redis, its continuations read back by range
// (GETRANGE): these tests follow every cursor through a real redis-server,
// and the benchmark compares a continuation from a large snapshot with one
// from a small one.

// listOf returns a JSON list of corpus items of about n bytes.
func listOf(n int) []byte {
	one, _ := json.Marshal(corpus.Items(1)[0])
	b, _ := json.Marshal(corpus.Items(max(1, n/(len(one)+1))))
	return b
}

// logOf returns a text log of about n bytes.
func logOf(n int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2026-11-24T08:%02d:%02dZ INFO request %d served in %d ms for /api/v1/bookings?page=%d\n", i/60%60, i%60, i, i%97, i%13)
	}
	return []byte(b.String())
}

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
	for _, c := range []struct {
		name        string
		body        []byte
		contentType string
	}{
		{"the pages of a 1 MB list", listOf(1 << 20), "application/json"},
		{"the pages of an indented list", pretty, "application/json"},
		{"the chunks of a 1 MB log", logOf(1 << 20), "text/plain"},
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
//	go test -run '^$' -bench RedisContinuation -benchtime 200x ./store/redisstore
func BenchmarkRedisContinuation(b *testing.B) {
	url := redistest.URL(b)
	for _, kind := range []struct {
		name        string
		make        func(int) []byte
		contentType string
	}{
		{"list", listOf, "application/json"},
		{"text", logOf, "text/plain"},
	} {
		var small float64
		for _, size := range []struct {
			name  string
			bytes int
		}{{"100KB", 100 << 10}, {"10MB", 10 << 20}} {
			b.Run(kind.name+"/"+size.name, func(b *testing.B) {
				g := redisGuard(b, url, ctxfit.Config{})
				body := kind.make(size.bytes)
				fetch := func(context.Context) (ctxfit.Response, error) {
					return ctxfit.Response{Body: body, ContentType: kind.contentType}, nil
				}
				req := ctxfit.Request{Endpoint: "data", Path: "/data"}
				res, err := g.Handle(context.Background(), req, fetch)
				if err != nil || res.Next == "" {
					b.Fatal(err, res.Strategy)
				}
				req.Cursor = res.Next // the second page
				runtime.GC()          // not the garbage of making a 10 MB body
				b.ReportAllocs()
				for b.Loop() {
					if res, err := g.Handle(context.Background(), req, fetch); err != nil || len(res.Body) == 0 {
						b.Fatal(err)
					}
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				if size.name == "100KB" {
					small = ns
				} else if small > 0 {
					b.ReportMetric(ns/small, "x-small")
				}
			})
		}
	}
}
