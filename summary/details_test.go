package summary_test

import (
	"strings"
	"testing"

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
