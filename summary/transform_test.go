package summary_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/summary"
)

func TestFieldTransformsRewriteValuesBeforeTheTemplate(t *testing.T) {
	const raw = `{"episodes":[` +
		`{"uuid":"550e8400-e29b-41d4-a716-446655440000","name":"Standup","created_at":"2026-01-18T12:00:00Z","content":"This is a long text that needs truncation","tags":["x","y"]},` +
		`{"uuid":"abc","name":"Retro","created_at":"2026-01-17T14:00:00Z","content":"Short","tags":null}]}`
	tests := []struct {
		name       string
		transforms map[string]string
		template   string
		want       string
	}{
		{"relativeTime reads the formatter's clock", map[string]string{"episodes.created_at": summary.TransformRelativeTime},
			"{{range .episodes}}{{.created_at}};{{end}}", "2h ago;1d ago;"},
		{"truncateUuid keeps the last 8 characters after ...", map[string]string{"episodes.uuid": summary.TransformTruncateUUID},
			"{{range .episodes}}{{.uuid}};{{end}}", "...55440000;abc;"},
		{"truncateText:N cuts at a word boundary", map[string]string{"episodes.content": "truncateText:22"},
			"{{range .episodes}}{{.content}};{{end}}", "This is a long text...;Short;"},
		{"a path to a list rewrites each value, and null is left alone (printed empty)", map[string]string{"episodes.tags": "truncateText:4"},
			"{{range .episodes}}{{.tags}};{{end}}", "[x y];;"},
		{"a path the response lacks is skipped", map[string]string{"episodes.missing": summary.TransformRelativeTime},
			"{{len .episodes}}", "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFormatter(t, map[string]summary.Format{"get_episodes": {
				ID: "get_episodes", Template: tt.template, FieldTransforms: tt.transforms,
				Fields: []string{"episodes.uuid", "episodes.created_at", "episodes.content", "episodes.tags"},
			}}, nil)
			got, err := f.Render(context.Background(), "get_episodes", []byte(raw))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			out := f.Format(context.Background(), "get_episodes", []byte(raw))
			assert.Equal(t, tt.want, out.Text, "Format renders the same text")
		})
	}

	t.Run("a transform that fails falls back to the JSON", func(t *testing.T) {
		f := newFormatter(t, map[string]summary.Format{"op": {ID: "op", Template: "{{.name}}", Fields: []string{"name"},
			FieldTransforms: map[string]string{"name": summary.TransformRelativeTime}}}, nil)
		_, err := f.Render(context.Background(), "op", []byte(`{"name":"not a time"}`))
		require.ErrorIs(t, err, summary.ErrFormatFailed)
		assert.Contains(t, err.Error(), `transform relativeTime of name: relTime: "not a time" is not an RFC 3339 timestamp or a date`)
		assert.Equal(t, `{"name":"not a time"}`, f.Format(context.Background(), "op", []byte(`{"name":"not a time"}`)).Text)
	})

	t.Run("the format's ID is reported by operation", func(t *testing.T) {
		f := newFormatter(t, graphFormats, nil)
		assert.Equal(t, "search_nodes", f.ID("search_nodes"))
		assert.Empty(t, f.ID("unknown"))
	})
}

func TestNewFormatterRejectsInvalidFieldTransforms(t *testing.T) {
	for name, tr := range map[string]map[string]string{
		"an unknown transform":          {"a": "shout"},
		"truncateText without a length": {"a": "truncateText"},
		"truncateText with a tiny one":  {"a": "truncateText:2"},
		"relativeTime with an argument": {"a": "relativeTime:5"},
		"an empty path segment":         {"a..b": "truncateUuid"},
	} {
		t.Run(name+" is rejected", func(t *testing.T) {
			_, err := summary.NewFormatter(map[string]summary.Format{"op": {ID: "op", Template: "{{.a}}", Fields: []string{"a"}, FieldTransforms: tr}}, nil)
			require.ErrorIs(t, err, summary.ErrInvalidFormat)
		})
	}
}
