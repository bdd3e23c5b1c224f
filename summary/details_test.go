package summary_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/summary"
)

func TestServeDetails(t *testing.T) {
	full := []byte("{\"id\": \"BK1\", \"priceBreakdown\": {\"base\": 1.50,  \"tax\": 2},\n \"policies\": [ \"no pets\" ], \"status\": \"ok\"}")
	tests := []struct {
		name   string
		fields string
		want   string
	}{
		{"sections come back whole, byte for byte, in input order, and nothing else", "policies,priceBreakdown",
			`{"priceBreakdown":{"base": 1.50,  "tax": 2},"policies":[ "no pets" ]}`},
		{"spaces and repeats are ignored", " policies , policies,", `{"policies":[ "no pets" ]}`},
		{"a scalar section is a section too", "id", `{"id":"BK1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := summary.ServeDetails(full, tt.fields)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}

	t.Run("all returns the object itself", func(t *testing.T) {
		got, err := summary.ServeDetails(full, "all")
		require.NoError(t, err)
		assert.Same(t, &full[0], &got[0])
	})
}

func TestServeDetailsRejectsBadRequests(t *testing.T) {
	full := []byte(`{"id":"BK1","priceBreakdown":{},"policies":[]}`)
	tests := []struct {
		name        string
		data        []byte
		fields      string
		wantErr     error
		wantUnknown []string
	}{
		{"an unknown section", full, "policies,pricing,extras", summary.ErrUnknownField, []string{"pricing", "extras"}},
		{"an empty parameter", full, " , ", summary.ErrUnknownField, nil},
		{"a full response that is not an object", []byte(`[1,2]`), "id", summary.ErrNotObject, nil},
		{"a full response that is not JSON", []byte(`{"id":`), "id", summary.ErrInvalidJSON, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is an error that says what to send", func(t *testing.T) {
			_, err := summary.ServeDetails(tt.data, tt.fields)
			require.ErrorIs(t, err, tt.wantErr)
			assert.True(t, strings.HasPrefix(err.Error(), "summary: "), err.Error())
			var ufe *summary.UnknownFieldError
			if tt.wantErr == summary.ErrUnknownField {
				require.ErrorAs(t, err, &ufe)
				assert.Equal(t, tt.wantUnknown, ufe.Fields)
				assert.Equal(t, []string{"id", "priceBreakdown", "policies"}, ufe.Valid)
				assert.Contains(t, err.Error(), "fields=all")
				assert.Contains(t, err.Error(), "id, priceBreakdown, policies")
			}
		})
	}
}

func TestDrillDownFetchesWhatTheSummaryLeftOut(t *testing.T) {
	s := newSummarizer(t, &summary.Options{Budget: gatewayBudget})
	data := mustJSON(verboseBooking())
	r, err := s.Summarize(data, bookingShape)
	require.NoError(t, err)
	fields := r.Summary.Meta.DetailsAvailable.Parameters["fields"]
	rest, err := summary.ServeDetails(data, fields)
	require.NoError(t, err)

	// The summary and the sections it names hold every top-level field.
	got := decode(t, rest).(map[string]any)
	for k, v := range decode(t, r.Summary.Summary).(map[string]any) {
		if _, ok := got[k]; !ok {
			got[k] = v
		}
	}
	assert.Equal(t, decode(t, data), any(got))
}

func TestServeDetailsPaths(t *testing.T) {
	full := []byte(`{"id": "BK1", "guest": {"name": "Ann", "address": {"city": "Rome", "zip": "00100"}, "tags": ["a"]},` +
		` "rooms": [ {"id": 1, "size": 20.50}, {"id": 2}, {"size": 3}, "scalar", [ {"id": 9} ] ],` +
		` "price.total": 12, "price": {"total": 1.50e0, "tax": "\u00e9<b>"}, "empty": [], "s": "\ud800"}`)
	tests := []struct {
		name   string
		fields string
		want   string
	}{
		{"a dotted path keeps its nesting", "guest.address.city", `{"guest":{"address":{"city":"Rome"}}}`},
		{"a path through an array takes the field of every element, as Project does", "rooms.id", `{"rooms":[{"id":1},{"id":2},{},[{"id":9}]]}`},
		{"values come back byte for byte, escapes and number literals included", "price.tax,s,rooms.size", `{"rooms":[{"size":20.50},{},{"size":3},[{}]],"price":{"tax":"\u00e9<b>"},"s":"\ud800"}`},
		{"a top-level field whose name holds a dot is that field", "price.total", `{"price.total":12}`},
		{"top-level fields and paths mix, in input order", "guest.name,id", `{"id":"BK1","guest":{"name":"Ann"}}`},
		{"a path and its prefix give the whole prefix, byte for byte", "guest.name,guest", `{"guest":{"name": "Ann", "address": {"city": "Rome", "zip": "00100"}, "tags": ["a"]}}`},
		{"sibling paths share their parent", "guest.address.zip,guest.tags", `{"guest":{"address":{"zip":"00100"},"tags":["a"]}}`},
		{"an empty array holds every path", "empty.id", `{"empty":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := summary.ServeDetails(full, tt.fields)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}

	t.Run("of duplicate keys the last one wins, at every level", func(t *testing.T) {
		got, err := summary.ServeDetails([]byte(`{"a":{"b":1,"b":2},"c":0,"a":{"b":3,"x":4}}`), "a.b,c")
		require.NoError(t, err)
		assert.Equal(t, `{"c":0,"a":{"b":3}}`, string(got))
	})

	t.Run("the same paths give what Project gives, JSON for JSON", func(t *testing.T) {
		data := mustJSON(verboseBooking())
		paths := []string{"id", "guest.address.city", "priceBreakdown.total", "amenities.code", "propertyDetails"}
		want, _, err := summary.Project(data, paths)
		require.NoError(t, err)
		got, err := summary.ServeDetails(data, strings.Join(paths, ","))
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got))
	})
}

func TestServeDetailsRejectsBadPaths(t *testing.T) {
	full := []byte(`{"id":"BK1","guest":{"name":"Ann"},"rooms":[{"id":1}]}`)
	valid := []string{"id", "guest", "rooms"}
	tests := []struct {
		name    string
		fields  string
		wantErr error
		check   func(t *testing.T, err error)
	}{
		{"a path whose top-level field is missing is an unknown field", "id,gust.name", summary.ErrUnknownField, func(t *testing.T, err error) {
			var ufe *summary.UnknownFieldError
			require.ErrorAs(t, err, &ufe)
			assert.Equal(t, []string{"gust.name"}, ufe.Fields)
			assert.Equal(t, valid, ufe.Valid)
		}},
		{"a path that names nothing below its field is an unknown path", "guest.nmae,rooms.id", summary.ErrUnknownPath, func(t *testing.T, err error) {
			var upe *summary.UnknownPathError
			require.ErrorAs(t, err, &upe)
			assert.Equal(t, []string{"guest.nmae"}, upe.Paths)
			assert.Equal(t, valid, upe.Available)
			assert.Contains(t, err.Error(), "id, guest, rooms")
		}},
		{"a path into a scalar is an unknown path", "rooms.id.x", summary.ErrUnknownPath, nil},
		{"a path with an empty segment is invalid", "guest..name", summary.ErrInvalidPath, func(t *testing.T, err error) {
			var pe *summary.PathError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "guest..name", pe.Path)
		}},
		{"a path that starts with a dot is invalid", ".id", summary.ErrInvalidPath, nil},
		{"a path that ends with a dot is invalid", "guest.", summary.ErrInvalidPath, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := summary.ServeDetails(full, tt.fields)
			require.ErrorIs(t, err, tt.wantErr)
			assert.True(t, strings.HasPrefix(err.Error(), "summary: "), err.Error())
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

func TestDrillDownErrorsStayShort(t *testing.T) {
	full := envObject(5000, false)
	var names []string
	for i := range 1000 {
		names = append(names, fmt.Sprintf("missing_%d_%s", i, strings.Repeat("é", 100)))
	}
	_, err := summary.ServeDetails(full, strings.Join(names, ","))
	var ufe *summary.UnknownFieldError
	require.ErrorAs(t, err, &ufe)
	assert.Len(t, ufe.Fields, 1000, "the error value keeps every unknown name")
	assert.Len(t, ufe.Valid, 5000, "and every valid one")
	msg := err.Error()
	assert.Less(t, len(msg), 8<<10, "the message is short whatever the sizes")
	assert.Contains(t, msg, "and 990 more")
	assert.Contains(t, msg, "and 4900 more")
	assert.Contains(t, msg, `"missing_0_éé`)
	assert.True(t, utf8.ValidString(msg), "names are cut between characters")
}
