package summary_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/summary"
)

func TestProject(t *testing.T) {
	booking := `{"id":"BK1","status":"confirmed","price":{"basePrice":100.50,"tax":1e1,"total":110.5},` +
		`"guest":{"name":"Ann","address":{"city":"Rome","zip":"00100"}},` +
		`"rooms":[{"id":1,"beds":2},{"id":2,"beds":1},{"beds":3},"a scalar"],"tags":["a","b"]}`
	tests := []struct {
		name  string
		data  string
		paths []string
		want  string
	}{
		{"a top-level field is kept whole", booking, []string{"price"}, `{"price":{"basePrice":100.50,"tax":1e1,"total":110.5}}`},
		{"a nested path keeps its nesting", booking, []string{"price.basePrice"}, `{"price":{"basePrice":100.50}}`},
		{"a path two levels down keeps both levels", booking, []string{"guest.address.city"}, `{"guest":{"address":{"city":"Rome"}}}`},
		{"a path through an array takes the field of every object element", booking, []string{"rooms.id"}, `{"rooms":[{"id":1},{"id":2},{}]}`},
		{"fields come out in input order whatever the order of the paths", booking, []string{"status", "id", "tags"}, `{"id":"BK1","status":"confirmed","tags":["a","b"]}`},
		{"a path and its prefix give the whole prefix", booking, []string{"price.tax", "price"}, `{"price":{"basePrice":100.50,"tax":1e1,"total":110.5}}`},
		{"sibling paths share their parent", booking, []string{"price.total", "price.basePrice", "guest.name"}, `{"price":{"basePrice":100.50,"total":110.5},"guest":{"name":"Ann"}}`},
		{"numbers keep their literal text", `{"n":1.500,"m":-0e-0,"big":123456789012345678901234567890}`, []string{"n", "m", "big"}, `{"n":1.500,"m":-0e-0,"big":123456789012345678901234567890}`},
		{"the paths apply to each element of an array", `[{"id":1,"x":2},{"id":2,"y":3}]`, []string{"id"}, `[{"id":1},{"id":2}]`},
		{"an empty array holds every path", `{"id":1,"rooms":[]}`, []string{"rooms.id"}, `{"rooms":[]}`},
		{"repeated paths count once", booking, []string{"id", "id"}, `{"id":"BK1"}`},
		{"no paths give the input, compacted", "{ \"b\" : [1, 2],\n \"a\": null }", nil, `{"b":[1,2],"a":null}`},
		{"of duplicate keys the last value wins", `{"a":1,"b":2,"a":3}`, []string{"a"}, `{"a":3}`},
		{"strings are re-encoded as encoding/json writes them", `{"s":"\u00e9<tag>\/"}`, []string{"s"}, `{"s":"é\u003ctag\u003e/"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, paths, err := summary.Project([]byte(tt.data), tt.paths)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assertPartOf(t, decode(t, got), decode(t, []byte(tt.data)))
			if len(tt.paths) > 0 {
				assert.Subset(t, tt.paths, paths)
			}
		})
	}
}

func TestProjectReportsPathsThatNameNothing(t *testing.T) {
	data := []byte(`{"id":1,"status":"ok","price":{"total":3},"rooms":[{"id":1}]}`)
	tests := []struct {
		name      string
		paths     []string
		wantPaths []string
	}{
		{"a missing top-level field", []string{"id", "prices"}, []string{"prices"}},
		{"a missing nested field", []string{"price.tax"}, []string{"price.tax"}},
		{"a path into a scalar", []string{"status.code"}, []string{"status.code"}},
		{"a missing field of array elements", []string{"rooms.size", "id"}, []string{"rooms.size"}},
		{"several, in the order given", []string{"zeta", "id", "alpha"}, []string{"zeta", "alpha"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is an UnknownPathError listing the available fields", func(t *testing.T) {
			_, _, err := summary.Project(data, tt.paths)
			require.ErrorIs(t, err, summary.ErrUnknownPath)
			var upe *summary.UnknownPathError
			require.ErrorAs(t, err, &upe)
			assert.Equal(t, tt.wantPaths, upe.Paths)
			assert.Equal(t, []string{"id", "status", "price", "rooms"}, upe.Available)
			assert.True(t, strings.HasPrefix(err.Error(), "summary: "))
			assert.Contains(t, err.Error(), "the top-level fields are: id, status, price, rooms")
		})
	}
}

func TestProjectRejectsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		paths   []string
		wantErr error
	}{
		{"an empty path", `{"a":1}`, []string{""}, summary.ErrInvalidPath},
		{"a path with an empty segment", `{"a":1}`, []string{"a..b"}, summary.ErrInvalidPath},
		{"a path ending in a dot", `{"a":1}`, []string{"a."}, summary.ErrInvalidPath},
		{"truncated JSON", `{"a":1`, []string{"a"}, summary.ErrInvalidJSON},
		{"two JSON values", `{"a":1} {"a":2}`, []string{"a"}, summary.ErrInvalidJSON},
		{"an empty input", ``, []string{"a"}, summary.ErrInvalidJSON},
		{"a path into a scalar input", `42`, []string{"a"}, summary.ErrUnknownPath},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is rejected", func(t *testing.T) {
			_, _, err := summary.Project([]byte(tt.data), tt.paths)
			require.ErrorIs(t, err, tt.wantErr)
			assert.True(t, strings.HasPrefix(err.Error(), "summary: "), err.Error())
		})
	}
	t.Run("a PathError names the path", func(t *testing.T) {
		_, _, err := summary.Project([]byte(`{}`), []string{".a"})
		var pe *summary.PathError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, ".a", pe.Path)
	})
}

func TestProjectValue(t *testing.T) {
	type address struct {
		City string `json:"city"`
		Zip  string `json:"zip"`
	}
	type guest struct {
		Name    string  `json:"name"`
		Address address `json:"address"`
	}
	got, paths, err := summary.ProjectValue(guest{Name: "Ann", Address: address{City: "Rome", Zip: "00100"}}, []string{"address.city"})
	require.NoError(t, err)
	assert.Equal(t, `{"address":{"city":"Rome"}}`, string(got))
	assert.Equal(t, []string{"address.city"}, paths)

	_, _, err = summary.ProjectValue(func() {}, []string{"a"})
	assert.ErrorContains(t, err, "summary: marshal")
}
