package mediatype

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	tests := []struct {
		ct   string
		want Kind
	}{
		{"application/json", JSON},
		{"application/json; charset=utf-8", JSON},
		{" Application/JSON ;charset=utf-8", JSON},
		{"application/problem+json", JSON},
		{"application/vnd.api+JSON", JSON},
		{"text/x-report+json", JSON},
		{"application/x-ndjson", Text},
		{"application/jsonl", Text},
		{"text/plain", Text},
		{"TEXT/markdown; charset=utf-8", Text},
		{"text/event-stream", Other},
		{"Text/Event-Stream; charset=utf-8", Other},
		{"application/octet-stream", Other},
		{"application/jsonp", Other},
		{"image/png", Other},
		{"json", Other},
		{"/json", Other},
		{"text/", Other},
		{"", None},
		{" ; charset=utf-8", None},
	}
	for _, tt := range tests {
		t.Run(tt.ct, func(t *testing.T) {
			assert.Equal(t, tt.want, Of(tt.ct))
		})
	}
}

func TestOfDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { _ = Of("Application/Problem+JSON; charset=utf-8") })
	assert.Zero(t, allocs)
}

func FuzzOf(f *testing.F) {
	for _, s := range []string{"application/json", "text/plain; a=b", "a/+json", ";", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		k := Of(ct)
		assert.Contains(t, []Kind{Other, JSON, Text, None}, k)
		// Parameters never change the kind.
		if k != None && !strings.Contains(ct, ";") {
			assert.Equal(t, k, Of(ct+"; charset=utf-8"))
		}
	})
}
