package knowledgegraph_test

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
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/summary"
	"github.com/ctxfit/ctxfit/telemetry"
)

// now is the clock of the tests: the payloads' times are relative to it.
var now = time.Date(2026, 1, 18, 14, 0, 0, 0, time.UTC)

// call is a tool call of the knowledge-graph server and its result.
type call struct {
	tool, args, result string
	want               string // the rendering
}

// calls are results shaped as the Graphiti MCP server's (the data model's
// response schemas); n is the number of items of a list.
func calls(n int) []call {
	var nodes, facts, episodes, wantNodes, wantFacts, wantEpisodes []string
	for i := range n {
		nodes = append(nodes, fmt.Sprintf(`{"uuid":"550e8400-e29b-41d4-a716-4466554400%02d","name":"Entity %d","entity_type":"Person",`+
			`"summary":"Entity %d is an engineer who works on the knowledge graph team and appears in several episodes.","created_at":"2026-01-18T12:00:00Z",`+
			`"labels":["Entity","Person"],"properties":{"team":"graph","location":"Berlin","since":"2024-03-01"}}`, i, i, i))
		wantNodes = append(wantNodes, fmt.Sprintf("%d. Entity %d [Person] - Entity %d is an engineer who works on the knowledge graph team and appears in several episodes.", i+1, i, i))
		facts = append(facts, fmt.Sprintf(`{"uuid":"660e8400-e29b-41d4-a716-4466554400%02d","source":{"name":"Entity %d","uuid":"550e8400-e29b-41d4-a716-4466554400%02d"},`+
			`"target":{"name":"Graphiti","uuid":"770e8400-e29b-41d4-a716-446655440000"},"relation":"WORKS_ON","confidence":0.9,"valid_at":"2025-06-01T00:00:00Z"}`, i, i, i))
		wantFacts = append(wantFacts, fmt.Sprintf("%d. Entity %d --WORKS_ON--> Graphiti (confidence: 0.9)", i+1, i))
		episodes = append(episodes, fmt.Sprintf(`{"uuid":"880e8400-e29b-41d4-a716-4466554400%02d","name":"standup %d","content":"We discussed the release plan, `+
			`the open bugs in the ingestion pipeline and who reviews the migration of the entity store next week.","source_description":"meeting notes",`+
			`"created_at":"2026-01-17T12:00:00Z","valid_at":"2026-01-17T12:00:00Z"}`, i, i))
		wantEpisodes = append(wantEpisodes, fmt.Sprintf("- [1d ago] standup %d - We discussed the release plan, the open bugs in the ingestion pipeline and who reviews the...", i))
	}
	return []call{
		{"search_memory_nodes", `{"query":"engineers"}`, `{"nodes":[` + strings.Join(nodes, ",") + `]}`,
			fmt.Sprintf("Found %d entities for \"engineers\":\n%s\n", n, strings.Join(wantNodes, "\n"))},
		{"search_memory_facts", `{"query":"graph"}`, `{"facts":[` + strings.Join(facts, ",") + `]}`,
			fmt.Sprintf("Found %d relationships for \"graph\":\n%s\n", n, strings.Join(wantFacts, "\n"))},
		{"get_episodes", `{"last_n":10}`, `{"episodes":[` + strings.Join(episodes, ",") + `]}`,
			fmt.Sprintf("Recent episodes (%d):\n%s\n", n, strings.Join(wantEpisodes, "\n"))},
		{"get_status", `{}`, `{"status":"healthy","entity_count":1250,"episode_count":340,"last_updated":"2026-01-18T12:00:00Z","database":"neo4j","version":"0.5.0"}`,
			"Knowledge Graph Status: healthy\nEntities: 1250 | Episodes: 340 | Last update: 2h ago"},
		{"get_status", `{}`, `{"status":"empty","entity_count":0,"episode_count":0}`,
			"Knowledge Graph Status: empty\nEntities: 0 | Episodes: 0 | Last update: never"},
		{"add_memory", `{"name":"Meeting notes"}`, `{"uuid":"550e8400-e29b-41d4-a716-446655440000","name":"Meeting notes","entities_extracted":4,"facts_extracted":7}`,
			"✓ Episode added: \"Meeting notes\" (id: ...55440000)\n  Extracted: 4 entities, 7 facts"},
		{"delete_episode", `{"uuid":"550e8400-e29b-41d4-a716-446655440000"}`, `{"success":true,"uuid":"550e8400-e29b-41d4-a716-446655440000"}`,
			"✓ Deleted: ...55440000"},
		{"delete_entity_edge", `{"uuid":"x"}`, `{"success":false,"uuid":"x","message":"no such edge"}`,
			"✗ Delete failed: no such edge"},
		{"clear_graph", `{}`, `{"success":true,"deleted_entities":1250,"deleted_episodes":340}`,
			"✓ Knowledge graph cleared\n  Removed: 1250 entities, 340 episodes"},
	}
}

// load reads ctxfit.yaml.
func load(t testing.TB) ctxfit.Config {
	t.Helper()
	cfg, err := config.LoadFile("ctxfit.yaml")
	require.NoError(t, err)
	return cfg
}

func TestTheSevenFormatsRenderAsTheDataModelWritesThem(t *testing.T) {
	cfg := load(t)
	formats := map[string]summary.Format{}
	for _, ep := range cfg.Endpoints {
		require.NotNil(t, ep.OutputFormat, ep.Match)
		formats[ep.Match] = ep.OutputFormat.SummaryFormat(ep.Match)
	}
	ids := map[string]bool{}
	for _, f := range formats {
		ids[f.ID] = true
	}
	assert.Len(t, ids, 7, "seven formats")
	f, err := summary.NewFormatter(formats, &summary.FormatOptions{Counter: budget.Estimator{}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	for _, c := range calls(3) {
		t.Run("the "+c.tool+" result "+c.result[:min(len(c.result), 30)]+" renders", func(t *testing.T) {
			got, err := f.RenderArgs(context.Background(), c.tool, []byte(c.result), []byte(c.args))
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestTheConfigurationCompactsTheServersResultsAndLosesNothing(t *testing.T) {
	cfg := load(t)
	cfg.Secret = strings.Repeat("k", 32)
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Now: func() time.Time { return now }})
	require.NoError(t, err)
	defer g.Close()
	exact, err := budget.Exact(budget.O200KBase)
	require.NoError(t, err)
	for _, c := range calls(10) {
		t.Run("a "+c.tool+" result is compacted, or sent as it is when that is smaller", func(t *testing.T) {
			fetch := func(context.Context) (ctxfit.Response, error) {
				return ctxfit.Response{Body: []byte(c.result), ContentType: "application/json"}, nil
			}
			req := ctxfit.Request{Endpoint: c.tool, Path: c.tool, Subject: "s", Filters: json.RawMessage(c.args)}
			res, err := g.Handle(context.Background(), req, fetch)
			require.NoError(t, err)
			if res.Strategy != telemetry.StrategyFormat {
				assert.Equal(t, c.result, string(res.Body), "a result smaller than its answer is sent as it is")
				return
			}
			var body struct {
				Text string `json:"text"`
			}
			require.NoError(t, json.Unmarshal(res.Body, &body))
			assert.Equal(t, c.want, body.Text)
			assert.Less(t, exact.Count(string(res.Body)), exact.Count(c.result), "the answer is smaller")
			all := req
			all.Cursor, all.Fields = res.Details, summary.FieldsAll
			orig, err := g.Handle(context.Background(), all, fetch)
			require.NoError(t, err)
			assert.Equal(t, c.result, string(orig.Body), "the details cursor gives the original back")
		})
	}
}

// BenchmarkSavings reports, for each format, the tokens of the server's
// result, of the rendering and of the answer ctxfit sends (the rendering,
// its details cursor and budget fields, or the result as it is), and the
// savings of the rendering and of the answer, in percent.
func BenchmarkSavings(b *testing.B) {
	cfg := load(b)
	cfg.Secret = strings.Repeat("k", 32)
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Now: func() time.Time { return now }})
	require.NoError(b, err)
	defer g.Close()
	exact, err := budget.Exact(budget.O200KBase)
	require.NoError(b, err)
	for _, c := range calls(10) {
		b.Run(c.tool+"/"+fmt.Sprint(len(c.result))+"B", func(b *testing.B) {
			fetch := func(context.Context) (ctxfit.Response, error) {
				return ctxfit.Response{Body: []byte(c.result), ContentType: "application/json"}, nil
			}
			req := ctxfit.Request{Endpoint: c.tool, Path: c.tool, Subject: "s", Filters: json.RawMessage(c.args)}
			b.ReportAllocs()
			var res ctxfit.Result
			for b.Loop() {
				res, err = g.Handle(context.Background(), req, fetch)
				if err != nil {
					b.Fatal(err)
				}
			}
			raw, rendering, answer := exact.Count(c.result), exact.Count(c.want), exact.Count(string(res.Body))
			b.ReportMetric(float64(raw), "raw-tokens")
			b.ReportMetric(float64(rendering), "rendering-tokens")
			b.ReportMetric(float64(answer), "answer-tokens")
			b.ReportMetric(100*float64(raw-rendering)/float64(raw), "rendering-savings-%")
			b.ReportMetric(100*float64(raw-answer)/float64(raw), "answer-savings-%")
		})
	}
}
