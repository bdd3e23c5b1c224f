package summary_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/summary"
)

// formatNow is the clock of the format tests: the expected outputs'
// relative times are relative to it.
var formatNow = time.Date(2026, 1, 18, 14, 0, 0, 0, time.UTC)

// graphFormats are compact formats of a knowledge-graph server's tools, the
// formats the tests run.
var graphFormats = map[string]summary.Format{
	"search_nodes": {
		ID:     "search_nodes",
		Fields: []string{"nodes.name", "nodes.entity_type", "nodes.summary"},
		Template: `Found {{len .nodes}} entities:
{{range $i, $n := .nodes}}{{inc $i}}. {{$n.name}} [{{$n.entity_type}}] - {{truncate 40 $n.summary}}
{{end}}`,
	},
	"get_episodes": {
		ID:     "get_episodes",
		Fields: []string{"episodes.name", "episodes.content", "episodes.created_at"},
		Template: `Recent episodes ({{len .episodes}}):
{{range .episodes}}- [{{relTime .created_at}}] {{.name}} - {{truncate 30 .content}}
{{end}}`,
	},
	"add_memory": {
		ID:       "add_memory",
		Fields:   []string{"uuid", "name", "entities_extracted", "facts_extracted"},
		Template: `✓ Episode added: "{{.name}}" (id: ...{{last8 .uuid}}) Extracted: {{.entities_extracted}} entities, {{.facts_extracted}} facts`,
	},
}

func newFormatter(t *testing.T, formats map[string]summary.Format, opts *summary.FormatOptions) *summary.Formatter {
	t.Helper()
	if opts == nil {
		opts = &summary.FormatOptions{}
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return formatNow }
	}
	f, err := summary.NewFormatter(formats, opts)
	require.NoError(t, err)
	return f
}

func TestFormatRendersTheSeedFormats(t *testing.T) {
	f := newFormatter(t, graphFormats, nil)
	tests := []struct {
		op   string
		raw  string
		want string
	}{
		{
			op: "search_nodes",
			raw: `{"nodes":[{"uuid":"550e8400-e29b-41d4-a716-446655440000","name":"Alice","entity_type":"Person","summary":"Alice is an engineer who works on the knowledge graph team in Berlin.","created_at":"2026-01-18T12:00:00Z","labels":["Person"]},` +
				`{"uuid":"660e8400-e29b-41d4-a716-446655440001","name":"Graphiti","entity_type":"Project","summary":"A temporal knowledge graph.","created_at":"2026-01-17T12:00:00Z"}]}`,
			want: "Found 2 entities:\n1. Alice [Person] - Alice is an engineer who works on the...\n2. Graphiti [Project] - A temporal knowledge graph.\n",
		},
		{
			op: "get_episodes",
			raw: `{"episodes":[{"uuid":"u1","name":"standup","content":"We discussed the release plan and the open bugs.","created_at":"2026-01-18T12:00:00Z"},` +
				`{"uuid":"u2","name":"retro","content":"Short.","created_at":"2025-12-18T12:00:00Z"},{"uuid":"u3","name":"plan","content":"x","created_at":"2026-01-17T12:00:00Z"}]}`,
			want: "Recent episodes (3):\n- [2h ago] standup - We discussed the release...\n- [1mo ago] retro - Short.\n- [1d ago] plan - x\n",
		},
		{
			op:   "add_memory",
			raw:  `{"uuid":"550e8400-e29b-41d4-a716-446655440000","name":"Meeting notes","entities_extracted":4,"facts_extracted":7}`,
			want: `✓ Episode added: "Meeting notes" (id: ...55440000) Extracted: 4 entities, 7 facts`,
		},
	}
	for _, tt := range tests {
		t.Run("the "+tt.op+" format renders compact text", func(t *testing.T) {
			out := f.Format(context.Background(), tt.op, []byte(tt.raw))
			require.NoError(t, out.Fallback)
			assert.Equal(t, tt.want, out.Text)
			m := out.Metrics
			assert.False(t, m.UsedFallback)
			assert.Equal(t, tt.op, m.Operation)
			assert.Equal(t, formatNow, m.Timestamp)
			assert.Equal(t, len(tt.raw), m.RawBytes)
			assert.Equal(t, len(tt.want), m.CompactBytes)
			c := exactCounter(t)
			assert.Equal(t, c.Count(tt.raw), m.RawTokens)
			assert.Equal(t, c.Count(tt.want), m.CompactTokens)
			assert.InDelta(t, 100*float64(m.RawTokens-m.CompactTokens)/float64(m.RawTokens), m.SavingsPercent, 1e-9)
			assert.Greater(t, m.SavingsPercent, 0.0)
			assert.GreaterOrEqual(t, m.ProcessingTimeMs, 0.0)
		})
	}
}

func TestFormatFallsBackToTheJSON(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	formats := map[string]summary.Format{
		"failing": {ID: "failing", Fields: []string{"name"}, Template: `{{fail .name}}`,
			Transforms: map[string]any{"fail": func(any) (string, error) { return "", errors.New("boom") }}},
		"panicking": {ID: "panicking", Fields: []string{"name"}, Template: `{{explode .name}}`,
			Transforms: map[string]any{"explode": func(any) string { panic("kaboom") }}},
		"slow": {ID: "slow", Fields: []string{"name"}, Template: `{{wait .name}}`,
			Transforms: map[string]any{"wait": func(v any) any { <-release; return v }}},
		"bad_time": {ID: "bad_time", Fields: []string{"name"}, Template: `{{relTime .name}}`},
		"strict":   {ID: "strict", Fields: []string{"name", "missing"}, Required: []string{"missing"}, Template: `{{.missing}}`},
	}
	f := newFormatter(t, formats, &summary.FormatOptions{Timeout: 20 * time.Millisecond})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		op      string
		raw     string
		wantErr error
		wantMsg string
	}{
		{"an operation without a format", context.Background(), "unknown_op", `{"name":"x"}`, summary.ErrNoFormat, `"unknown_op"`},
		{"a transform that returns an error", context.Background(), "failing", `{"name":"x"}`, summary.ErrFormatFailed, "boom"},
		{"a transform that panics", context.Background(), "panicking", `{"name":"x"}`, summary.ErrFormatFailed, "kaboom"},
		{"a transform that runs past the time limit", context.Background(), "slow", `{"name":"x"}`, summary.ErrFormatTimeout, "did not finish within 20ms"},
		{"a context that has ended", cancelled, "slow", `{"name":"x"}`, summary.ErrFormatTimeout, "context canceled"},
		{"relTime on a value that is no time", context.Background(), "bad_time", `{"name":"yesterday"}`, summary.ErrFormatFailed, "not an RFC 3339 timestamp"},
		{"a response that lacks a required field", context.Background(), "strict", `{"name":"x"}`, summary.ErrFormatFailed, `lacks the required field "missing"`},
		{"a response that is not JSON", context.Background(), "failing", `{"name":`, summary.ErrFormatFailed, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" sends the JSON unchanged and says why", func(t *testing.T) {
			out := f.Format(tt.ctx, tt.op, []byte(tt.raw))
			require.ErrorIs(t, out.Fallback, tt.wantErr)
			assert.True(t, strings.HasPrefix(out.Fallback.Error(), "summary: "), out.Fallback.Error())
			assert.Contains(t, out.Fallback.Error(), tt.wantMsg)
			assert.Equal(t, tt.raw, out.Text)
			assert.True(t, out.Metrics.UsedFallback)
			assert.Equal(t, out.Metrics.RawBytes, out.Metrics.CompactBytes)
			assert.Equal(t, out.Metrics.RawTokens, out.Metrics.CompactTokens)
			assert.Zero(t, out.Metrics.SavingsPercent)
		})
	}
}

func TestFormatMaxLengthCutsAtAWordBoundary(t *testing.T) {
	f := newFormatter(t, map[string]summary.Format{
		"status": {ID: "status", Fields: []string{"status", "entity_count"}, MaxLength: 30,
			Template: `Knowledge Graph Status: {{.status}} | Entities: {{.entity_count}}`},
	}, nil)
	out := f.Format(context.Background(), "status", []byte(`{"status":"healthy","entity_count":1234,"database":"neo4j"}`))
	require.NoError(t, out.Fallback)
	assert.Equal(t, "Knowledge Graph Status…", out.Text)
}

func TestNewFormatterRejectsInvalidFormats(t *testing.T) {
	tests := []struct {
		name   string
		format summary.Format
		want   string
	}{
		{"an ID with a dash", summary.Format{ID: "search-nodes", Fields: []string{"a"}, Template: "{{.a}}"}, "letters, digits and underscores"},
		{"a template without a placeholder", summary.Format{ID: "x", Fields: []string{"a"}, Template: "plain"}, "at least one placeholder"},
		{"no fields", summary.Format{ID: "x", Template: "{{.a}}"}, "at least one field"},
		{"a malformed field path", summary.Format{ID: "x", Fields: []string{"a..b"}, Template: "{{.a}}"}, "empty segment"},
		{"a negative maximum length", summary.Format{ID: "x", Fields: []string{"a"}, Template: "{{.a}}", MaxLength: -1}, "MaxLength -1"},
		{"a template that does not parse", summary.Format{ID: "x", Fields: []string{"a"}, Template: "{{.a"}, "does not parse"},
		{"a transform that is not a function", summary.Format{ID: "x", Fields: []string{"a"}, Template: "{{.a}}", Transforms: map[string]any{"t": 42}}, "transform"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is rejected", func(t *testing.T) {
			_, err := summary.NewFormatter(map[string]summary.Format{"op": tt.format}, nil)
			require.ErrorIs(t, err, summary.ErrInvalidFormat)
			var fe *summary.FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.format.ID, fe.ID)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("a negative timeout is rejected", func(t *testing.T) {
		_, err := summary.NewFormatter(nil, &summary.FormatOptions{Timeout: -time.Second})
		require.ErrorIs(t, err, summary.ErrInvalidOptions)
	})
}

func TestRelativeTime(t *testing.T) {
	f := newFormatter(t, map[string]summary.Format{
		"t": {ID: "t", Fields: []string{"at"}, Template: `{{relTime .at}}`},
	}, nil)
	tests := []struct{ at, want string }{
		{"2026-01-18T13:59:30Z", "just now"},
		{"2026-01-18T13:15:00Z", "45m ago"},
		{"2026-01-18T12:00:00Z", "2h ago"},
		{"2026-01-17T12:00:00Z", "1d ago"},
		{"2025-12-18T12:00:00Z", "1mo ago"},
		{"2024-01-01", "2y ago"},
		{"2026-01-18T17:00:00+01:00", "in 2h"},
	}
	for _, tt := range tests {
		t.Run(tt.at+" is "+tt.want, func(t *testing.T) {
			out := f.Format(context.Background(), "t", []byte(`{"at":"`+tt.at+`"}`))
			require.NoError(t, out.Fallback)
			assert.Equal(t, tt.want, out.Text)
		})
	}
}

func TestFormatterIsSafeForConcurrentUse(t *testing.T) {
	f := newFormatter(t, graphFormats, nil)
	raw := []byte(`{"uuid":"550e8400-e29b-41d4-a716-446655440000","name":"n","entities_extracted":1,"facts_extracted":2}`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			out := f.Format(context.Background(), "add_memory", raw)
			assert.NoError(t, out.Fallback)
		})
	}
	wg.Wait()
}

func TestOptionalFieldsAndArguments(t *testing.T) {
	formats := map[string]summary.Format{
		"get_status": {ID: "get_status", Fields: []string{"status", "entity_count", "last_updated", "source.name", "nodes.name"},
			Required: []string{"status"},
			Template: `Status: {{.status}} | Entities: {{.entity_count}} | Last update: {{or (relTime .last_updated) "never"}} | ` +
				`{{.source.name}}|{{len .nodes}}{{range .nodes}}{{.name}};{{end}}`},
		"search_nodes": {ID: "search_nodes", Fields: []string{"nodes.name"},
			Template: `Found {{len .nodes}} entities for "{{.args.query}}"{{with .args.limit}} (limit {{.}}){{end}}`},
	}
	f := newFormatter(t, formats, nil)
	tests := []struct {
		name, op, raw, args, want string
	}{
		{"a response with every field renders them", "get_status",
			`{"status":"ok","entity_count":3,"last_updated":"2026-01-18T12:00:00Z","source":{"name":"db"},"nodes":[{"name":"a"}]}`, "",
			"Status: ok | Entities: 3 | Last update: 2h ago | db|1a;"},
		{"a missing optional field renders empty, or as the template's default", "get_status",
			`{"status":"ok"}`, "",
			"Status: ok | Entities:  | Last update: never | |0"},
		{"a null optional field renders empty", "get_status",
			`{"status":"ok","entity_count":null,"last_updated":null,"nodes":[{"name":null},{}]}`, "",
			"Status: ok | Entities:  | Last update: never | |2;;"},
		{"the template reads the call's arguments", "search_nodes",
			`{"nodes":[{"name":"a"},{"name":"b"}]}`, `{"query":"alice","limit":10}`,
			`Found 2 entities for "alice" (limit 10)`},
		{"a missing argument renders empty", "search_nodes",
			`{"nodes":[]}`, ``,
			`Found 0 entities for ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.RenderArgs(context.Background(), tt.op, []byte(tt.raw), []byte(tt.args))
			require.NoError(t, err, "an optional field never makes the format fall back")
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("a missing required field falls back with an error that names it", func(t *testing.T) {
		_, err := f.RenderArgs(context.Background(), "get_status", []byte(`{"entity_count":3}`), nil)
		require.ErrorIs(t, err, summary.ErrFormatFailed)
		assert.Contains(t, err.Error(), `lacks the required field "status"`)
	})
	t.Run("a required path through an array is present when an element has it or the array is empty", func(t *testing.T) {
		g := newFormatter(t, map[string]summary.Format{"list": {ID: "list", Fields: []string{"nodes.name"},
			Required: []string{"nodes.name"}, Template: `{{len .nodes}}{{range .nodes}} {{.name}}{{end}}`}}, nil)
		got, err := g.RenderArgs(context.Background(), "list", []byte(`{"nodes":[{"id":1},{"name":"b"}]}`), nil)
		require.NoError(t, err)
		assert.Equal(t, "2  b", got)
		got, err = g.RenderArgs(context.Background(), "list", []byte(`{"nodes":[]}`), nil)
		require.NoError(t, err, "a search that found nothing renders its empty range")
		assert.Equal(t, "0", got)
		_, err = g.RenderArgs(context.Background(), "list", []byte(`{"nodes":[{"id":1},{"id":2}]}`), nil)
		require.ErrorIs(t, err, summary.ErrFormatFailed, "no element has the required field")
		assert.Contains(t, err.Error(), `lacks the required field "nodes.name"`)
	})
	t.Run("a required field that is not one of the fields is rejected", func(t *testing.T) {
		_, err := summary.NewFormatter(map[string]summary.Format{"x": {ID: "x", Fields: []string{"a"}, Required: []string{"b"}, Template: "{{.a}}"}}, nil)
		require.ErrorIs(t, err, summary.ErrInvalidFormat)
		assert.Contains(t, err.Error(), `required field "b"`)
	})
}
