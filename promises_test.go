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
	"github.com/ctxfit/ctxfit/internal/rawjson"
	rebuild "github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/shapes"
	"github.com/ctxfit/ctxfit/summary"
	"github.com/ctxfit/ctxfit/telemetry"
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
	worth       int // the tokens of the original as the envelope must write it (escaped, when a text)
	strategies  map[telemetry.Strategy]int
	rebuiltOnce bool
}

// checkPromises follows a request through g to the end and checks the
// two promises and the envelope: every response within the hard cap by
// exact count, ctxfit's fields apart from the data, everything rebuilt
// byte for byte, and reading everything costs at most 1.3 times the
// original (escaped, as the envelope writes a text) plus an envelope per
// response.
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
	// A text travels JSON-escaped in the HTTP envelope (the seed's
	// contract): its worth is what its escaped form costs, which for bytes
	// that are not UTF-8 (\udcXX each) is several times the raw count.
	escaped, _ := rawjson.Escape(nil, resp.Body)
	worth := max(exact.Count(string(resp.Body)), exact.Count(string(escaped)), exact.Count(string(rawjson.EscapeLatin1(nil, resp.Body))))
	c := checked{original: exact.Count(string(resp.Body)), worth: worth, strategies: map[telemetry.Strategy]int{}}
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
		// A summary leaves fields out by design; its details cursor gives
		// them, and the whole.
		require.NotEmpty(t, first.Details, "a summary has a details cursor")
		var sum struct {
			Meta struct {
				DetailsAvailable struct{ Parameters struct{ Fields string } }
			}
		}
		require.NoError(t, json.Unmarshal(first.Body, &sum))
		if leftOut := sum.Meta.DetailsAvailable.Parameters.Fields; leftOut != "" {
			want, err := summary.ServeDetails(resp.Body, leftOut)
			require.NoError(t, err)
			drill := req
			drill.Cursor, drill.Fields = first.Details, leftOut
			got := followAll(t, g, drill, fetch, hardCap)
			require.Equal(t, string(want), string(got), "the left-out fields, byte for byte, through the details cursor")
		}
		all := req
		all.Cursor, all.Fields = first.Details, "all"
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
	assert.LessOrEqual(t, c.tokensSent, c.worth*13/10+envelope*c.responses,
		"reading everything costs at most 1.3x the original (as the envelope escapes it) plus an envelope per response (%d responses)", c.responses)
	return c
}

// followAll follows req and every cursor and part it leads to, checking
// the hard cap on each response, and returns the rebuilt body.
func followAll(t *testing.T, g *ctxfit.Guard, req ctxfit.Request, fetch ctxfit.Fetch, hardCap int) []byte {
	t.Helper()
	handle := func(req ctxfit.Request) (ctxfit.Result, error) {
		res, err := g.Handle(context.Background(), req, fetch)
		if err != nil {
			return res, err
		}
		require.LessOrEqual(t, exact.Count(string(res.Body)), hardCap, "nothing over the hard cap (%s)", res.Strategy)
		return res, nil
	}
	first, err := handle(req)
	require.NoError(t, err)
	if !first.Shaped || first.Next == "" && first.Strategy == "passthrough" {
		return first.Body
	}
	out, _, err := rebuild.Rebuild(first.Body, func(cursor string, part int64) ([]byte, error) {
		next := req
		next.Cursor, next.Part = cursor, part
		res, err := handle(next)
		return res.Body, err
	})
	require.NoError(t, err)
	return out
}

func TestEveryShapeKeepsBothPromises(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	sizes := shapes.Sizes(6000, 40000, 200000)
	for i := range len(sizes) * len(shapes.Shapes) {
		size := sizes[i/len(shapes.Shapes)]
		resp := shapes.Generate(r, i, size)
		cfg := ctxfit.Config{
			Threshold:   500 + r.IntN(4000),
			ChunkTokens: 100 + r.IntN(2500),
			PageSize:    1 + r.IntN(50),
			Mode:        []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay}[r.IntN(2)],
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

// TestATimeOutAnswersACutNeverAnError shapes every shape under a time
// limit too short for any strategy: each answer is the byte-bounded cut,
// within the hard cap, recorded as a fallback, and following it rebuilds
// the response.
func TestATimeOutAnswersACutNeverAnError(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	sizes := shapes.Sizes(6000, 60000)
	for i := range len(sizes) * len(shapes.Shapes) {
		size := sizes[i/len(shapes.Shapes)]
		resp := shapes.Generate(r, i, size)
		cfg := ctxfit.Config{
			Threshold:    500 + r.IntN(2000),
			ShapeTimeout: 1, // a nanosecond: every strategy runs past it
			Mode:         []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay}[r.IntN(2)],
		}
		cfg.HardCap = cfg.Threshold + ctxfit.MinHardCap + r.IntN(3000)
		t.Run(fmt.Sprintf("%s of %d bytes, %s mode", resp.Name, len(resp.Body), cfg.Mode), func(t *testing.T) {
			g, _ := newGuard(t, cfg)
			req := ctxfit.Request{Endpoint: "GET /x", Path: "/x", Subject: "s"}
			res, err := g.Handle(context.Background(), req, func(context.Context) (ctxfit.Response, error) {
				return ctxfit.Response{Body: resp.Body, ContentType: resp.ContentType}, nil
			})
			require.NoError(t, err, "a time-out answers a cut, not an error")
			if res.Shaped {
				assert.Equal(t, telemetry.StrategyCut, res.Strategy)
				assert.Equal(t, telemetry.OutcomeFallback, res.Record.Outcome)
			}
			checkPromises(t, g, req, ctxfit.Response{Body: resp.Body, ContentType: resp.ContentType})
		})
	}
}

// TestRequestParametersNeverBreakTheCap sends every shape with random
// limits, fields and line ranges, valid and not: each answer is within the
// hard cap or a 400 problem, and never the response over budget.
func TestRequestParametersNeverBreakTheCap(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	fields := []string{"", "all", "id", "id,name", "nope", "a.b.c", ",", strings.Repeat("x,", 5000)}
	queries := []string{".", ".[]?", "[..|numbers?]", "[..|strings?]|length", "keys?", ".[0]?", "bad[", "..", "[paths]"}
	patterns := []string{"e", "the|token", "\\d+", "[", ".*", "^$", "東京", strings.Repeat("a", 600), "\\\\u"}
	for i := range 4 * len(shapes.Shapes) {
		resp := shapes.Generate(r, i, 5000+r.IntN(60000))
		cfg := ctxfit.Config{Threshold: 300 + r.IntN(3000), PageSize: 1 + r.IntN(50)}
		cfg.HardCap = cfg.Threshold + ctxfit.MinHardCap + r.IntN(2000)
		g, _ := newGuard(t, cfg)
		req := ctxfit.Request{Endpoint: "x", Path: "/x", Limit: r.IntN(260) - 30, Fields: fields[r.IntN(len(fields))],
			StartLine: r.IntN(40) - 5, EndLine: r.IntN(400) - 5}
		if r.IntN(3) == 0 {
			req.StartLine, req.EndLine = 0, 0
		}
		if r.IntN(3) == 0 {
			req.StartLine, req.EndLine, req.Fields = 0, 0, ""
			req.Search = &ctxfit.Search{Pattern: patterns[r.IntN(len(patterns))], IgnoreCase: r.IntN(2) == 0,
				Literal: r.IntN(4) == 0, Context: r.IntN(4), Path: []string{"", "name", "a.b"}[r.IntN(3)]}
		}
		if r.IntN(4) == 0 {
			req.StartLine, req.EndLine, req.Fields, req.Search = 0, 0, "", nil
			req.Query = queries[r.IntN(len(queries))]
		}
		if r.IntN(3) == 0 {
			req.Format = ctxfit.FormatTOON
		}
		checkParams(t, g, req, ctxfit.Response{Body: resp.Body, ContentType: resp.ContentType})
	}
}

// checkParams follows req through g and checks the cap on every answer.
func checkParams(t *testing.T, g *ctxfit.Guard, req ctxfit.Request, resp ctxfit.Response) {
	t.Helper()
	fetch := func(context.Context) (ctxfit.Response, error) { return resp, nil }
	hardCap := g.Config().HardCap
	for range 2000 {
		res, err := g.Handle(context.Background(), req, fetch)
		if err != nil {
			p := ctxfit.ProblemOf(err, ctxfit.Params{})
			require.Equal(t, 400, p.Status, "bad input is a 400: %v", err)
			doc, _ := json.Marshal(p)
			require.LessOrEqual(t, exact.Count(string(doc)), hardCap, "a problem is within the cap too")
			return
		}
		require.LessOrEqual(t, exact.Count(string(res.Body)), hardCap, "nothing over the hard cap with %+v", req)
		if res.Next == "" {
			return
		}
		req.Cursor = res.Next
	}
	t.Fatal("too many continuations")
}

func FuzzGuard(f *testing.F) {
	r := rand.New(rand.NewPCG(12, 12))
	for i := range len(shapes.Shapes) {
		resp := shapes.Generate(r, i, 3000)
		f.Add(resp.Body, uint16(300), uint16(600), uint8(i), int16(0), int16(0), int16(0), uint8(0))
	}
	f.Add([]byte(`{"a":"\ud800","b":[1e400,-0.0,"<&>"]}`), uint16(10), uint16(0), uint8(1), int16(5), int16(1), int16(3), uint8(2))
	types := []string{"", "application/json", "text/plain", "text/plain; charset=iso-8859-1", "application/vnd.api+json"}
	fields := []string{"", "all", "id", "a,b", "a.b"}
	f.Fuzz(func(t *testing.T, body []byte, threshold, extra uint16, ct uint8, limit, start, end int16, fi uint8) {
		cfg := ctxfit.Config{Threshold: 1 + int(threshold)%3000}
		cfg.HardCap = max(cfg.Threshold, ctxfit.MinHardCap) + int(extra)%2000
		g, _ := newGuard(t, cfg)
		resp := ctxfit.Response{Body: body, ContentType: types[int(ct)%len(types)]}
		req := ctxfit.Request{Endpoint: "x", Path: "/x", Limit: int(limit) % 300, StartLine: int(start), EndLine: int(end),
			Fields: fields[int(fi)%len(fields)]}
		checkParams(t, g, req, resp)
		if req.Limit >= 0 && req.StartLine == 0 && req.EndLine == 0 && req.Fields == "" {
			checkPromises(t, g, ctxfit.Request{Endpoint: "x", Path: "/x"}, resp)
		}
	})
}

func TestTheWidestObjectsKeepBothPromises(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 members, followed to the end")
	}
	for _, members := range []int{10, 1_000, 100_000} {
		t.Run(fmt.Sprintf("%d members", members), func(t *testing.T) {
			var b strings.Builder
			b.WriteString("{")
			for i := range members {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `"VAR_%d":"value <%d> & more"`, i, i)
			}
			b.WriteString("}")
			g, _ := newGuard(t, ctxfit.Config{Threshold: 2000})
			c := checkPromises(t, g, ctxfit.Request{Endpoint: "GET /env", Path: "/env"}, ctxfit.Response{Body: []byte(b.String()), ContentType: "application/json"})
			t.Logf("%d responses, %d tokens sent for %d, %v", c.responses, c.tokensSent, c.original, c.strategies)
		})
	}
}
