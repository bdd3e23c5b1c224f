package ctxfit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	rebuild "github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/shapes"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/summary"
	"github.com/ctxfit/ctxfit/telemetry"
)

// nodesFormat is a search_nodes format, as a settings file writes it.
func nodesFormat() *ctxfit.OutputFormat {
	return &ctxfit.OutputFormat{
		FormatID: "search_nodes",
		Template: "Found {{len .nodes}} entities:\n{{range $i, $n := .nodes}}{{inc $i}}. {{$n.name}} [{{$n.entity_type}}] - " +
			"{{$n.summary}} ({{$n.created_at}}, id {{$n.uuid}})\n{{end}}",
		ExtractFields: []string{"nodes.uuid", "nodes.name", "nodes.entity_type", "nodes.summary", "nodes.created_at"},
		Transforms: map[string]string{
			"nodes.created_at": "relativeTime", "nodes.uuid": "truncateUuid", "nodes.summary": "truncateText:60",
		},
	}
}

// nodes is a search_nodes response of n entities, each with properties
// the format leaves out; the guard's test clock reads 2026-11-21 12:00 UTC.
func nodes(n, propertyBytes int) []byte {
	var b strings.Builder
	b.WriteString(`{"nodes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"uuid":"550e8400-e29b-41d4-a716-4466554%05d","name":"Entity %d","entity_type":"Person",`+
			`"summary":"A person who appears in episode %d and in several others, with a long description that goes on","created_at":"2026-11-21T10:00:00Z",`+
			`"labels":["a","b"],"properties":{"notes":%q}}`, i, i, i, strings.Repeat("note ", propertyBytes/5))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// formatTime is the clock of formatGuard, unless opts set one.
var formatTime = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// formatGuard is a guard whose tool search_nodes has format, with the
// wrapper settings w and opts (a fixed clock when opts.Now is nil).
func formatGuard(t *testing.T, format *ctxfit.OutputFormat, w ctxfit.WrapperConfig, opts ctxfit.Options) *ctxfit.Guard {
	t.Helper()
	opts.Config = ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Hour), AdmissionWait: ctxfit.Duration(time.Hour),
		Endpoints: []ctxfit.Endpoint{{Match: "search_nodes", OutputFormat: format}}, Wrapper: w}
	if opts.Now == nil {
		opts.Now = func() time.Time { return formatTime }
	}
	g, err := ctxfit.New(&opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	return g
}

var nodesReq = ctxfit.Request{Endpoint: "search_nodes", Path: "search_nodes", Subject: "s"}

// compactBody is the body of the format strategy.
type compactBody struct {
	Text string `json:"text"`
	Meta struct {
		Format          string `json:"format"`
		OriginalTokens  int    `json:"originalTokens"`
		DetailsCursor   string `json:"detailsCursor"`
		EstimatedTokens int    `json:"estimatedTokens"`
	} `json:"meta"`
}

// original follows a format result's details cursor with fields=all to
// the end, checking the hard cap on the way, and returns what it rebuilt.
func original(t *testing.T, g *ctxfit.Guard, req ctxfit.Request, first ctxfit.Result, fetch ctxfit.Fetch, hardCap int) []byte {
	t.Helper()
	require.NotEmpty(t, first.Details, "a compact rendering has a details cursor")
	var body compactBody
	require.NoError(t, json.Unmarshal(first.Body, &body))
	require.Equal(t, first.Details, body.Meta.DetailsCursor, "the body carries the details cursor")
	all := req
	all.Cursor, all.Fields = first.Details, summary.FieldsAll
	return followAll(t, g, all, fetch, hardCap)
}

// followFrom rebuilds the original of the first response of req, whatever
// its strategy: through the details cursor of a compact rendering or a
// summary (with fields=all), else through its cursors and parts, checking
// the hard cap on the way. Unlike checkPromises it does not ask again, so
// a format that fell back (past its time limit, under load) is followed as
// it was sent.
func followFrom(t *testing.T, g *ctxfit.Guard, req ctxfit.Request, first ctxfit.Result, fetch ctxfit.Fetch, hardCap int) []byte {
	t.Helper()
	switch {
	case first.Strategy == telemetry.StrategyFormat:
		return original(t, g, req, first, fetch, hardCap)
	case first.Strategy == telemetry.StrategyChunking && first.Details != "":
		// A rendering in chunks: its details cursor leads to the original.
		all := req
		all.Cursor, all.Fields = first.Details, summary.FieldsAll
		return followAll(t, g, all, fetch, hardCap)
	case first.Strategy == telemetry.StrategySummary:
		all := req
		all.Cursor, all.Fields = first.Details, summary.FieldsAll
		return followAll(t, g, all, fetch, hardCap)
	case !first.Shaped:
		return first.Body
	}
	out, _, err := rebuild.Rebuild(first.Body, func(cursor string, part int64) ([]byte, error) {
		next := req
		next.Cursor, next.Part = cursor, part
		res, err := g.Handle(context.Background(), next, fetch)
		if err == nil {
			require.LessOrEqual(t, exact.Count(string(res.Body)), hardCap, "nothing over the hard cap (%s)", res.Strategy)
		}
		return res.Body, err
	})
	require.NoError(t, err)
	return out
}

func TestAFormattedResponseIsCompactWithinTheCapAndLeadsBackToTheOriginal(t *testing.T) {
	for _, tc := range []struct {
		name          string
		entities      int
		propertyBytes int
	}{
		{"an original under the hard cap comes back whole", 12, 3000},
		{"an original over the hard cap comes back in pages", 40, 4000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := formatGuard(t, nodesFormat(), ctxfit.WrapperConfig{}, ctxfit.Options{})
			raw := nodes(tc.entities, tc.propertyBytes)
			fetch := serve(raw, "application/json")
			res, err := g.Handle(context.Background(), nodesReq, fetch)
			require.NoError(t, err)

			require.Equal(t, telemetry.StrategyFormat, res.Strategy)
			assert.Equal(t, telemetry.StrategyFormat, res.Record.Strategy, "telemetry names the strategy")
			n := exact.Count(string(res.Body))
			assert.LessOrEqual(t, n, g.Config().HardCap, "within the hard cap by exact count")
			assert.Less(t, n, exact.Count(string(raw)), "smaller than the original")
			var body compactBody
			require.NoError(t, json.Unmarshal(res.Body, &body))
			assert.Equal(t, "search_nodes", body.Meta.Format)
			assert.Equal(t, n, body.Meta.EstimatedTokens, "the budget fields are the exact count")
			lines := strings.Split(body.Text, "\n")
			assert.Equal(t, fmt.Sprintf("Found %d entities:", tc.entities), lines[0])
			assert.Equal(t, "1. Entity 0 [Person] - A person who appears in episode 0 and in several others... (2h ago, id ...55400000)", lines[1],
				"the transforms ran: relativeTime on the guard's clock, truncateUuid, truncateText")
			assert.Contains(t, res.Guidance, "details cursor")

			got := original(t, g, nodesReq, res, fetch, g.Config().HardCap)
			assert.Equal(t, string(raw), string(got), "nothing lost, byte for byte")
		})
	}
}

func TestAFormatFallsBackToTheOtherStrategies(t *testing.T) {
	broken := *nodesFormat()
	broken.Template = "{{index .nodes 100000}}" // fails when it runs
	for _, tc := range []struct {
		name   string
		format ctxfit.OutputFormat
		w      ctxfit.WrapperConfig
		raw    []byte
		logged string // in the transformation log, "" for nothing
	}{
		{"a template that fails", broken, ctxfit.WrapperConfig{}, nodes(40, 1000), "index out of range"},
		{"a transform that fails", func() ctxfit.OutputFormat {
			f := *nodesFormat()
			f.Transforms = map[string]string{"nodes.name": "relativeTime"}
			return f
		}(), ctxfit.WrapperConfig{}, nodes(40, 1000), "relTime"},
		{"a rendering over the budget", func() ctxfit.OutputFormat {
			f := *nodesFormat()
			f.Template = "{{range .nodes}}{{.summary}}{{.summary}}{{.summary}}{{.summary}}{{.summary}}{{.summary}}{{end}}"
			f.Transforms = nil
			return f
		}(), ctxfit.WrapperConfig{}, nodes(200, 10), "is not smaller than the response"},
		{"a rendering past the time limit", func() ctxfit.OutputFormat {
			f := *nodesFormat()
			f.Template = "{{range .nodes}}{{range $.nodes}}{{.name}}{{end}}{{end}}" // 160,000 names: far past 2 ms
			return f
		}(), ctxfit.WrapperConfig{SlowThresholdMs: 1, TimeoutMs: 2}, nodes(400, 10), "did not finish within 2ms"},
		{"compact output turned off", *nodesFormat(), ctxfit.WrapperConfig{CompactOutput: new(bool)}, nodes(40, 1000), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logFile, metricsFile := filepath.Join(t.TempDir(), "formats.jsonl"), filepath.Join(t.TempDir(), "metrics.jsonl")
			tc.w.LogFile, tc.w.CollectMetrics, tc.w.MetricsFile = logFile, true, metricsFile
			g := formatGuard(t, &tc.format, tc.w, ctxfit.Options{}) // a fixed clock: no run is slow
			fetch := serve(tc.raw, "application/json")
			res, err := g.Handle(context.Background(), nodesReq, fetch)
			require.NoError(t, err)
			assert.NotEqual(t, telemetry.StrategyFormat, res.Strategy, "shaped as if there were no format")
			assert.True(t, res.Shaped)
			assert.LessOrEqual(t, exact.Count(string(res.Body)), g.Config().HardCap)
			checkPromises(t, g, nodesReq, ctxfit.Response{Body: tc.raw, ContentType: "application/json"})
			require.NoError(t, g.Close())

			metrics := readLines[summary.Metrics](t, metricsFile)
			if tc.w.CompactOutput != nil {
				assert.Empty(t, metrics, "no format was tried")
			} else {
				require.NotEmpty(t, metrics, "a line for each response the format was tried on")
				for _, m := range metrics {
					assert.True(t, m.UsedFallback)
					assert.Equal(t, m.RawBytes, m.CompactBytes, "what was sent is not the rendering")
					assert.Zero(t, m.SavingsPercent)
				}
			}

			entries := readLines[summary.TransformationLog](t, logFile)
			if tc.logged == "" {
				assert.Empty(t, entries)
				return
			}
			require.NotEmpty(t, entries)
			e := entries[0]
			if strings.Contains(tc.name, "fails") || strings.Contains(tc.name, "time limit") {
				assert.Equal(t, summary.LogError, e.Level)
			} else {
				assert.Equal(t, summary.LogInfo, e.Level, "a rendering not sent for its size is no error")
			}
			assert.Equal(t, "search_nodes", e.Operation)
			assert.Equal(t, len(tc.raw), e.InputSize)
			assert.True(t, e.UsedFallback)
			assert.Contains(t, e.Error, tc.logged)
			assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, e.ID, "a random UUID")
			require.Len(t, metrics, len(entries), "a log entry for each metrics line of a fallback")
			for i, e := range entries {
				m := metrics[i]
				assert.Equal(t, m.Operation, e.Operation, "the log and the metrics agree")
				assert.True(t, m.Timestamp.Equal(e.Timestamp), "the log and the metrics agree")
				assert.Equal(t, m.RawBytes, e.InputSize, "the log and the metrics agree")
				assert.Equal(t, m.ProcessingTimeMs, e.ProcessingTimeMs, "the log and the metrics agree")
				assert.Equal(t, m.UsedFallback, e.UsedFallback, "the log and the metrics agree")
			}
		})
	}
}

// readLines decodes a JSON Lines file; a missing file has none.
func readLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), "each line is one JSON value: %s", sc.Text())
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	return out
}

func TestMetricsAreAppendedAsJSONLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"operation":"earlier"}`+"\n"), 0o600))
	g := formatGuard(t, nodesFormat(), ctxfit.WrapperConfig{CollectMetrics: true, MetricsFile: path}, ctxfit.Options{})
	raw := nodes(30, 1000)
	first, err := g.Handle(context.Background(), nodesReq, serve(raw, "application/json"))
	require.NoError(t, err)
	require.Equal(t, telemetry.StrategyFormat, first.Strategy)
	// Concurrent requests: each appends its line whole. Under load a
	// rendering may pass the format's time limit (100 ms of real time) and
	// fall back; its line says so.
	const requests = 16
	var wg sync.WaitGroup
	for range requests {
		wg.Go(func() {
			_, err := g.Handle(context.Background(), nodesReq, serve(raw, "application/json"))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	res, err := g.Handle(context.Background(), nodesReq, serve(nodes(5, 10), "application/json"))
	require.NoError(t, err)
	assert.Equal(t, telemetry.StrategyFormat, res.Strategy, "a response under the threshold is formatted too")
	require.NoError(t, g.Close())

	lines := readLines[summary.Metrics](t, path)
	require.Len(t, lines, 1+1+requests+1, "the file is appended to, a line per response the format was tried on")
	lines = lines[:len(lines)-1]
	assert.Equal(t, "earlier", lines[0].Operation)
	var body compactBody
	require.NoError(t, json.Unmarshal(first.Body, &body))
	rawTokens := exact.Count(string(raw))
	for i, m := range lines[1:] {
		assert.Equal(t, "search_nodes", m.Operation)
		assert.Equal(t, formatTime, m.Timestamp.UTC(), "the guard's clock")
		assert.Equal(t, len(raw), m.RawBytes)
		assert.Equal(t, rawTokens, m.RawTokens, "the original is under the hard cap: counted exactly")
		assert.InDelta(t, 100*float64(m.RawTokens-m.CompactTokens)/float64(m.RawTokens), m.SavingsPercent, 1e-9)
		assert.Zero(t, m.ProcessingTimeMs, "measured on the guard's clock, which stands still")
		if i == 0 || !m.UsedFallback {
			assert.False(t, m.UsedFallback)
			assert.Equal(t, len(body.Text), m.CompactBytes, "the bytes of the rendering sent")
			assert.Equal(t, exact.Count(body.Text), m.CompactTokens, "its tokens")
			assert.Less(t, m.CompactTokens, m.RawTokens)
		} else {
			assert.Equal(t, m.RawBytes, m.CompactBytes)
		}
	}
}

func TestAMetricsFileThatCannotBeWrittenNeverFailsARequest(t *testing.T) {
	var logs syncbuf.Buffer
	path := filepath.Join(t.TempDir(), "no-such-dir", "metrics.jsonl")
	g := formatGuard(t, nodesFormat(), ctxfit.WrapperConfig{CollectMetrics: true, MetricsFile: path},
		ctxfit.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 3 {
		res, err := g.Handle(context.Background(), nodesReq, serve(nodes(30, 1000), "application/json"))
		require.NoError(t, err)
		assert.Equal(t, telemetry.StrategyFormat, res.Strategy)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "cannot open"), "the failure is logged once: the file is opened once")
}

// tickingClock moves on by step each time it is read.
type tickingClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *tickingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

func TestSlowRunsAreLogged(t *testing.T) {
	for _, tc := range []struct {
		name string
		step time.Duration // what the guard's clock moves while the format runs
		slow bool
	}{
		{"a run past the slow threshold is logged as slow", 60 * time.Millisecond, true},
		{"a run under it is not", 10 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			clk := &tickingClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), step: tc.step}
			format := *nodesFormat()
			format.Transforms = nil // relativeTime would read the clock too
			g := formatGuard(t, &format, ctxfit.WrapperConfig{}, ctxfit.Options{Now: clk.now, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
			res, err := g.Handle(context.Background(), nodesReq, serve(nodes(30, 1000), "application/json"))
			require.NoError(t, err)
			assert.Equal(t, telemetry.StrategyFormat, res.Strategy, "slow, but within the time limit: sent")
			if !tc.slow {
				assert.NotContains(t, logs.String(), "ran slowly")
				return
			}
			var entry struct {
				Level, Msg, Operation string
				ProcessingTimeMs      float64
				UsedFallback          bool
			}
			require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(logs.String())), &entry), logs.String())
			assert.Equal(t, "WARN", entry.Level)
			assert.Equal(t, "ctxfit: output format ran slowly", entry.Msg)
			assert.Equal(t, "search_nodes", entry.Operation)
			assert.Equal(t, 60.0, entry.ProcessingTimeMs, "measured on the guard's clock")
			assert.False(t, entry.UsedFallback)
		})
	}
}

// TestFormattedResponsesKeepBothPromises sends generated responses to an
// endpoint with a format, under random budgets: every response within the
// hard cap by exact count, and the original rebuilt byte for byte, through
// the details cursor of a compact rendering or through the other
// strategies' cursors when the format falls back.
func TestFormattedResponsesKeepBothPromises(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	recordsFormat := &ctxfit.OutputFormat{Template: "{{range .}}{{.id}} {{.name}}\n{{end}}", ExtractFields: []string{"id", "name"},
		Transforms: map[string]string{"name": "truncateText:12"}}
	strategies := map[telemetry.Strategy]int{}
	for i := range 40 {
		cfg := ctxfit.Config{Threshold: 500 + r.IntN(4000), PageSize: 1 + r.IntN(50), Mode: []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay}[r.IntN(2)]}
		cfg.HardCap = cfg.Threshold + ctxfit.MinHardCap + r.IntN(3000)
		var raw []byte
		format := nodesFormat()
		switch i % 3 {
		case 0, 1:
			raw = nodes(1+r.IntN(120), r.IntN(3000))
		default:
			resp := shapes.Generate(r, r.IntN(len(shapes.Shapes)), []int{6000, 40000}[r.IntN(2)])
			raw, format = resp.Body, recordsFormat
		}
		cfg.Endpoints = []ctxfit.Endpoint{{Match: "search_nodes", OutputFormat: format}}
		t.Run(fmt.Sprintf("case %d: %d bytes, threshold %d, hard cap %d, %s mode", i, len(raw), cfg.Threshold, cfg.HardCap, cfg.Mode), func(t *testing.T) {
			g, _ := newGuard(t, cfg)
			resp := ctxfit.Response{Body: raw, ContentType: "application/json"}
			fetch := serve(raw, "application/json")
			first, err := g.Handle(context.Background(), nodesReq, fetch)
			require.NoError(t, err)
			strategies[first.Strategy]++
			require.LessOrEqual(t, exact.Count(string(first.Body)), cfg.HardCap, "nothing over the hard cap (%s)", first.Strategy)
			if first.Strategy == telemetry.StrategyFormat {
				var body compactBody
				require.NoError(t, json.Unmarshal(first.Body, &body))
				assert.LessOrEqual(t, exact.Count(body.Text), cfg.Threshold, "a compact rendering fits the budget")
				assert.Less(t, exact.Count(body.Text), exact.Count(string(raw)), "and is smaller than the response")
			}
			got := followFrom(t, g, nodesReq, first, fetch, cfg.HardCap)
			require.Equal(t, string(resp.Body), string(got), "nothing lost, byte for byte (%s)", first.Strategy)
		})
	}
	t.Logf("first responses by strategy: %v", strategies)
	assert.Positive(t, strategies[telemetry.StrategyFormat], "some generated responses are formatted")
	assert.Greater(t, len(strategies), 1, "and some fall back")
}

// BenchmarkFormatStrategy measures the first response of a search_nodes
// result with a format that always fits (projection, decoding, rendering,
// the details cursor), beside the same result shaped without a format:
//
//	go test -run '^$' -bench FormatStrategy -benchtime 20x .
func BenchmarkFormatStrategy(b *testing.B) {
	short := &ctxfit.OutputFormat{Template: "Found {{len .nodes}} entities; the first is {{(index .nodes 0).name}}",
		ExtractFields: []string{"nodes.name"}}
	for _, size := range []struct {
		name     string
		entities int
	}{{"100KB", 200}, {"1MB", 2000}} {
		raw := nodes(size.entities, 250)
		for _, tc := range []struct {
			name   string
			format *ctxfit.OutputFormat
		}{{"format", short}, {"no format", nil}} {
			b.Run(size.name+"/"+tc.name, func(b *testing.B) {
				g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: secret, StoreMaxBytes: 1 << 30,
					ShapeTimeout: ctxfit.Duration(time.Minute), AdmissionWait: ctxfit.Duration(time.Minute),
					Endpoints: []ctxfit.Endpoint{{Match: "search_nodes", OutputFormat: tc.format}}}})
				if err != nil {
					b.Fatal(err)
				}
				defer g.Close()
				fetch := serve(raw, "application/json")
				b.ReportAllocs()
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					res, err := g.Handle(context.Background(), nodesReq, fetch)
					if err != nil || (tc.format != nil) != (res.Strategy == telemetry.StrategyFormat) {
						b.Fatalf("strategy %s, err %v", res.Strategy, err)
					}
				}
			})
		}
	}
}

func TestAFormatAppliesToResponsesOfEverySize(t *testing.T) {
	status := func(notes int) []byte {
		return []byte(`{"status":"healthy","entity_count":1250,"episode_count":340,"last_updated":"2026-11-21T10:00:00Z","database":"neo4j",` +
			`"version":"1.0.0","notes":"` + strings.Repeat("a note on the graph ", notes) + `"}`)
	}
	statusFormat := &ctxfit.OutputFormat{FormatID: "get_status", Template: "{{.status}}", ExtractFields: []string{"status"}}
	for _, tc := range []struct {
		name      string
		format    *ctxfit.OutputFormat
		threshold int // of the endpoint; 0 for the default
		raw       []byte
		formatted bool
	}{
		{"a response under the threshold gets its rendering", nodesFormat(), 0, nodes(4, 400), true},
		{"a response over a small threshold gets a 3-token rendering", statusFormat, 100, status(60), true},
		{"a response under a small threshold gets a 3-token rendering", statusFormat, 2000, status(60), true},
		{"a response smaller than the rendering's details cursor stays as it is", statusFormat, 0, status(0), false},
		{"a rendering that is not smaller is not sent", &ctxfit.OutputFormat{Template: strings.Repeat("{{.status}} ", 60),
			ExtractFields: []string{"status"}}, 0, status(0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := ctxfit.Options{Now: func() time.Time { return formatTime }}
			opts.Config = ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Hour), AdmissionWait: ctxfit.Duration(time.Hour),
				Endpoints: []ctxfit.Endpoint{{Match: "search_nodes", Threshold: tc.threshold, OutputFormat: tc.format}}}
			g, err := ctxfit.New(&opts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			fetch := serve(tc.raw, "application/json")
			res, err := g.Handle(context.Background(), nodesReq, fetch)
			require.NoError(t, err)
			if !tc.formatted {
				assert.NotEqual(t, telemetry.StrategyFormat, res.Strategy)
				if !res.Shaped {
					assert.Equal(t, string(tc.raw), string(res.Body), "sent as it is")
				}
				return
			}
			require.Equal(t, telemetry.StrategyFormat, res.Strategy)
			var body compactBody
			require.NoError(t, json.Unmarshal(res.Body, &body))
			n := exact.Count(string(res.Body))
			assert.Less(t, n, exact.Count(string(tc.raw)), "the answer is smaller than the response")
			assert.LessOrEqual(t, n, g.Config().HardCap, "within the hard cap")
			assert.Equal(t, n, body.Meta.EstimatedTokens, "the budget fields are the exact count")
			got := original(t, g, nodesReq, res, fetch, g.Config().HardCap)
			assert.Equal(t, string(tc.raw), string(got), "the details cursor leads back to the original")
		})
	}
}

func TestAFormatReadsTheArgumentsAndOptionalFields(t *testing.T) {
	format := &ctxfit.OutputFormat{FormatID: "search_nodes",
		Template:       `Found {{len .nodes}} entities for "{{.args.query}}"{{with .message}} ({{.}}){{end}}:{{range .nodes}} {{.name}} [{{or .entity_type "?"}}];{{end}}`,
		ExtractFields:  []string{"nodes.name", "nodes.entity_type", "message"},
		RequiredFields: []string{"nodes.name"},
	}
	pad := strings.Repeat("x", 2000)
	for _, tc := range []struct {
		name, raw string
		want      string // "" when the format falls back
		logged    string
	}{
		{"the arguments and every field render", `{"nodes":[{"name":"Alice","entity_type":"Person","p":"` + pad + `"}],"message":"partial"}`,
			`Found 1 entities for "alice" (partial): Alice [Person];`, ""},
		{"a missing optional field renders empty or as the default", `{"nodes":[{"name":"Alice","p":"` + pad + `"}]}`,
			`Found 1 entities for "alice": Alice [?];`, ""},
		{"a missing required field falls back with a log entry naming it", `{"nodes":[{"id":"Alice","p":"` + pad + `"}]}`,
			"", `lacks the required field "nodes.name"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "formats.jsonl")
			g := formatGuard(t, format, ctxfit.WrapperConfig{LogFile: logFile}, ctxfit.Options{})
			req := nodesReq
			req.Filters = json.RawMessage(`{"query":"alice"}`)
			res, err := g.Handle(context.Background(), req, serve([]byte(tc.raw), "application/json"))
			require.NoError(t, err)
			require.NoError(t, g.Close())
			entries := readLines[summary.TransformationLog](t, logFile)
			if tc.want == "" {
				assert.NotEqual(t, telemetry.StrategyFormat, res.Strategy)
				require.Len(t, entries, 1)
				assert.Equal(t, summary.LogError, entries[0].Level)
				assert.Contains(t, entries[0].Error, tc.logged)
				return
			}
			require.Equal(t, telemetry.StrategyFormat, res.Strategy, "an optional field never makes the format fall back")
			var body compactBody
			require.NoError(t, json.Unmarshal(res.Body, &body))
			assert.Equal(t, tc.want, body.Text)
			assert.Empty(t, entries)
		})
	}
}

// renderingOf is what format renders of raw with the arguments args, on
// the clock of formatGuard.
func renderingOf(t *testing.T, format *ctxfit.OutputFormat, raw, args []byte) string {
	t.Helper()
	f, err := summary.NewFormatter(map[string]summary.Format{"search_nodes": format.SummaryFormat("search_nodes")},
		&summary.FormatOptions{Now: func() time.Time { return formatTime }, Timeout: time.Hour})
	require.NoError(t, err)
	text, err := f.RenderArgs(context.Background(), "search_nodes", raw, args)
	require.NoError(t, err)
	return text
}

// chunkBody is the body of a chunk of a compact rendering.
type chunkBody struct {
	Content       string  `json:"content"`
	NextCursor    *string `json:"nextCursor"`
	DetailsCursor string  `json:"detailsCursor"`
}

func TestARenderingOverTheThresholdIsSentInChunksThatLeadToItAndToTheOriginal(t *testing.T) {
	// A format that keeps much of each entity: its rendering is smaller
	// than the response, and larger than small thresholds.
	verbose := &ctxfit.OutputFormat{FormatID: "search_nodes",
		Template:      "Found {{len .nodes}} entities for {{printf \"%q\" .args.query}}:\n{{range $i, $n := .nodes}}{{inc $i}}. {{$n.name}} [{{$n.entity_type}}] - {{$n.summary}} (id {{$n.uuid}})\n{{end}}",
		ExtractFields: []string{"nodes.uuid", "nodes.name", "nodes.entity_type", "nodes.summary"}}
	type tc struct {
		name               string
		entities, notes    int
		threshold, hardCap int
		mode               ctxfit.Mode
	}
	cases := []tc{
		{"a rendering over the threshold under the hard cap, store mode", 60, 400, 500, 3000, ctxfit.ModeStore},
		{"a rendering over the hard cap, store mode", 200, 400, 500, 1500, ctxfit.ModeStore},
		{"a rendering over the hard cap, replay mode", 200, 400, 500, 1500, ctxfit.ModeReplay},
		{"a rendering of a response over the hard cap, replay mode", 150, 2000, 1000, 2500, ctxfit.ModeReplay},
	}
	if !testing.Short() {
		r := rand.New(rand.NewPCG(28, 1))
		for i := range 12 {
			c := tc{entities: 20 + r.IntN(200), notes: r.IntN(2000), threshold: 300 + r.IntN(1500),
				mode: []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay}[r.IntN(2)]}
			c.hardCap = c.threshold + ctxfit.MinHardCap + r.IntN(2000)
			c.name = fmt.Sprintf("generated case %d: %d entities, threshold %d, hard cap %d, %s mode", i, c.entities, c.threshold, c.hardCap, c.mode)
			cases = append(cases, c)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			metricsFile := filepath.Join(t.TempDir(), "metrics.jsonl")
			opts := ctxfit.Options{Now: func() time.Time { return formatTime }}
			opts.Config = ctxfit.Config{Secret: secret, ShapeTimeout: ctxfit.Duration(time.Hour), AdmissionWait: ctxfit.Duration(time.Hour),
				Mode: tc.mode, Threshold: tc.threshold, HardCap: tc.hardCap,
				Endpoints: []ctxfit.Endpoint{{Match: "search_nodes", OutputFormat: verbose}},
				Wrapper:   ctxfit.WrapperConfig{CollectMetrics: true, MetricsFile: metricsFile}}
			g, err := ctxfit.New(&opts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			raw := nodes(tc.entities, tc.notes)
			req := nodesReq
			req.Filters = []byte(`{"query":"person"}`)
			rendering := renderingOf(t, verbose, raw, req.Filters)
			require.Greater(t, exact.Count(rendering), tc.threshold, "the case renders over the threshold")
			require.Less(t, exact.Count(rendering), exact.Count(string(raw)), "and smaller than the response")
			fetch := serve(raw, "application/json")

			first, err := g.Handle(context.Background(), req, fetch)
			require.NoError(t, err)
			require.Equal(t, telemetry.StrategyChunking, first.Strategy, "the rendering, shaped by the budget")
			require.LessOrEqual(t, exact.Count(string(first.Body)), tc.hardCap, "within the hard cap by exact count")
			var body chunkBody
			require.NoError(t, json.Unmarshal(first.Body, &body))
			assert.True(t, strings.HasPrefix(rendering, body.Content), "the first chunk is the rendering's start")
			assert.True(t, strings.HasPrefix(body.Content, "Found "+strconv.Itoa(tc.entities)+` entities for "person":`), "the template read the arguments")
			require.NotEmpty(t, first.Details, "the first chunk has a details cursor")
			assert.Equal(t, first.Details, body.DetailsCursor, "in the body too")
			assert.Contains(t, first.Guidance, "compact rendering")
			assert.Contains(t, first.Guidance, "details cursor")

			rebuilt, _, err := rebuild.Rebuild(first.Body, func(cursor string, part int64) ([]byte, error) {
				next := req
				next.Cursor, next.Part = cursor, part
				res, err := g.Handle(context.Background(), next, fetch)
				if err == nil {
					require.LessOrEqual(t, exact.Count(string(res.Body)), tc.hardCap, "nothing over the hard cap (%s)", res.Strategy)
				}
				return res.Body, err
			})
			require.NoError(t, err)
			assert.Equal(t, rendering, string(rebuilt), "the chunks are the rendering, byte for byte")

			all := req
			all.Cursor, all.Fields = first.Details, summary.FieldsAll
			assert.Equal(t, string(raw), string(followAll(t, g, all, fetch, tc.hardCap)), "the details cursor leads to the original, byte for byte")

			require.NoError(t, g.Close())
			metrics := readLines[summary.Metrics](t, metricsFile)
			require.Len(t, metrics, 1, "the first response tried the format")
			assert.False(t, metrics[0].UsedFallback, "the rendering was sent")
			assert.Equal(t, len(rendering), metrics[0].CompactBytes)
			assert.Equal(t, exact.Count(rendering), metrics[0].CompactTokens, "exact tokens")
		})
	}
}
