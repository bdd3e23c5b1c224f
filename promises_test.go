package ctxfit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	rebuild "github.com/ctxfit/ctxfit/internal/follow"
	"github.com/ctxfit/ctxfit/internal/shapes"
)

// envelopeKeys are the only members a shaped response has at its top
// level: ctxfit's fields never mix with the data.
var envelopeKeys = map[string]bool{
	"outline": true, "items": true, "members": true, "content": true, "chunkIndex": true, "totalChunks": true,
	"nextCursor": true, "partCursor": true, "meta": true, "metadata": true, "summary": true,
}

// checked is what checkPromises measured.
type checked struct {
	responses   int
	tokensSent  int
	original    int
	strategies  map[string]int
	rebuiltOnce bool
}

// checkPromises follows a request through g to the end and checks the
// two promises and the envelope: every response within the hard cap by
// exact count, ctxfit's fields apart from the data, everything rebuilt
// byte for byte, and reading everything costs at most 1.3 times the
// original plus an envelope per response.
func checkPromises(t *testing.T, g *ctxfit.Guard, req ctxfit.Request, resp ctxfit.Response) checked {
	t.Helper()
	ctx := context.Background()
	fetch := func(context.Context) (ctxfit.Response, error) { return resp, nil }
	hardCap := g.Config().HardCap
	for _, ep := range g.Config().Endpoints {
		if ep.Match == req.Endpoint && ep.HardCap != 0 {
			hardCap = ep.HardCap
		}
	}
	c := checked{original: exact.Count(string(resp.Body)), strategies: map[string]int{}}
	check := func(res ctxfit.Result) {
		t.Helper()
		c.responses++
		c.strategies[res.Strategy]++
		n := exact.Count(string(res.Body))
		c.tokensSent += n
		require.LessOrEqual(t, n, hardCap, "nothing over the hard cap (%s, response %d)", res.Strategy, c.responses)
		if !res.Shaped {
			return
		}
		var top map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(res.Body, &top), "a shaped response is JSON")
		for k := range top {
			require.True(t, envelopeKeys[k], "the envelope's %q is not ctxfit's: fields mix with the data", k)
		}
	}
	first, err := g.Handle(ctx, req, fetch)
	require.NoError(t, err)
	check(first)
	if !first.Shaped {
		assert.Equal(t, resp.Body, first.Body, "a pass-through is the response itself")
		return c
	}
	body := first.Body
	if first.Strategy == "summary" {
		// A summary leaves fields out by design; its drill-down gives the
		// whole.
		all := req
		all.Fields = "all"
		res, err := g.Handle(ctx, all, fetch)
		require.NoError(t, err)
		check(res)
		if !res.Shaped {
			require.Equal(t, resp.Body, res.Body, "fields=all is the whole object")
			return c
		}
		req, body = all, res.Body
	}
	call := func(cursor string, part int64) ([]byte, error) {
		next := req
		next.Cursor, next.Part = cursor, part
		res, err := g.Handle(ctx, next, fetch)
		if err != nil {
			return nil, err
		}
		check(res)
		return res.Body, nil
	}
	rebuilt, _, err := rebuild.Rebuild(body, call)
	require.NoError(t, err)
	require.Equal(t, string(resp.Body), string(rebuilt), "nothing lost, byte for byte")
	c.rebuiltOnce = true
	const envelope = 400 // tokens a response's envelope (cursors, meta, outline share) may add
	assert.LessOrEqual(t, c.tokensSent, c.original*13/10+envelope*c.responses,
		"reading everything costs at most 1.3x the original plus an envelope per response (%d responses)", c.responses)
	return c
}

func TestEveryShapeKeepsBothPromises(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for i := range 3 * len(shapes.Shapes) {
		size := []int{6000, 40000, 200000}[i/len(shapes.Shapes)]
		resp := shapes.Generate(r, i, size)
		cfg := ctxfit.Config{
			Threshold:   500 + r.IntN(4000),
			ChunkTokens: 100 + r.IntN(2500),
			PageSize:    1 + r.IntN(50),
			Mode:        []string{ctxfit.ModeStore, ctxfit.ModeReplay}[r.IntN(2)],
		}
		cfg.HardCap = cfg.Threshold + ctxfit.MinHardCap + r.IntN(3000)
		cfg.MaxPageSize = max(cfg.PageSize, 200)
		t.Run(fmt.Sprintf("%s of %d bytes, %s mode", resp.Name, len(resp.Body), cfg.Mode), func(t *testing.T) {
			g, _ := newGuard(t, cfg)
			filters := json.RawMessage(`{"q":"` + strings.Repeat("f", r.IntN(20000)) + `"}`)
			c := checkPromises(t, g, ctxfit.Request{Endpoint: "GET /x", Path: "/x", Filters: filters, Subject: "s"}, ctxfit.Response{Body: resp.Body, ContentType: resp.ContentType})
			t.Logf("%d responses, %d tokens sent for %d, %v", c.responses, c.tokensSent, c.original, c.strategies)
		})
	}
}
