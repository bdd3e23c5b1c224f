package mcpcore

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAReadRangeIsTheLinesOrBytesItNames(t *testing.T) {
	data := []byte("one\ntwo\nthree\nfour")
	tests := []struct {
		query, want, err string
	}{
		{query: "", want: string(data)},
		{query: "lines=1-1", want: "one\n"},
		{query: "lines=2-3", want: "two\nthree\n"},
		{query: "lines=3-", want: "three\nfour"},
		{query: "lines=4-99", want: "four"},
		{query: "lines=5-", err: "line 5 is past the end: the original has 4 lines"},
		{query: "lines=0-2", err: "A at least 1"},
		{query: "lines=3-2", err: "B must be a number at least A"},
		{query: "lines=x", err: "is not a range"},
		{query: "bytes=0-2", want: "one"},
		{query: "bytes=4-", want: "two\nthree\nfour"},
		{query: "bytes=17-1000", want: "r"},
		{query: "bytes=18-", err: "byte 18 is past the end: the original has 18 bytes"},
		{query: "bytes=0-1&lines=1-2", err: "lines or bytes, not both"},
		{query: "page=2", err: `unknown parameter "page"`},
		{query: "%zz", err: "not a query"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r, err := parseRange(tt.query)
			var got []byte
			if err == nil {
				got, err = r.of(data)
			}
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestALineRangeOfAFileEndingInANewlineStopsAtItsLastLine(t *testing.T) {
	r, err := parseRange("lines=3-")
	require.NoError(t, err)
	_, err = r.of([]byte("a\nb\n"))
	assert.ErrorContains(t, err, "the original has 2 lines")
	r, err = parseRange("lines=2-")
	require.NoError(t, err)
	got, err := r.of([]byte("a\nb\n"))
	require.NoError(t, err)
	assert.Equal(t, "b\n", string(got))
}

// FuzzReadRange: any query over any data either errs or gives a
// contiguous part of the data, never panics.
func FuzzReadRange(f *testing.F) {
	f.Add("lines=2-3", []byte("a\nb\nc\nd"))
	f.Add("bytes=0-", []byte("abc"))
	f.Add("lines=1-", []byte(""))
	f.Add("bytes=99999999999999999999-", []byte("x"))
	f.Fuzz(func(t *testing.T, query string, data []byte) {
		r, err := parseRange(query)
		if err != nil {
			return
		}
		got, err := r.of(data)
		if err != nil {
			return
		}
		if !bytes.Contains(data, got) {
			t.Fatalf("%q of %q gave %q, not a part of it", query, data, got)
		}
	})
}
