package pagination_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/pagination"
)

func TestLimit(t *testing.T) {
	p := newPager(t, nil, nil)
	items := records(500)
	tests := []struct {
		name    string
		limit   int
		want    int    // effective limit; 0 when rejected
		wantErr string // message of the rejection
		rule    string
	}{
		{name: "zero means the default of 50", limit: 0, want: 50},
		{name: "one is accepted", limit: 1, want: 1},
		{name: "the maximum of 200 is accepted", limit: 200, want: 200},
		{
			name: "201 is above the maximum", limit: 201, rule: "lte=200",
			wantErr: "pagination: limit 201 exceeds the maximum of 200 (rule lte=200); request at most 200 items per page and follow nextCursor for the rest",
		},
		{
			name: "500 is above the maximum", limit: 500, rule: "lte=200",
			wantErr: "pagination: limit 500 exceeds the maximum of 200 (rule lte=200); request at most 200 items per page and follow nextCursor for the rest",
		},
		{
			name: "-1 is negative", limit: -1, rule: "gte=0",
			wantErr: "pagination: limit -1 must not be negative (rule gte=0); omit limit or send 0 for the default page size, or a value from 1 to 200",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := pagination.Request{Limit: tt.limit}
			got, err := p.Limit(req)
			resp, perr := pagination.Paginate(p, items, req, listQuery)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.NoError(t, perr)
				assert.Equal(t, tt.want, got)
				assert.LessOrEqual(t, resp.Meta.PageSize, tt.want)
				assert.Positive(t, resp.Meta.PageSize)
				return
			}
			for _, err := range []error{err, perr} {
				require.Error(t, err)
				assert.EqualError(t, err, tt.wantErr)
				assert.ErrorIs(t, err, pagination.ErrInvalidLimit)
				var le *pagination.LimitError
				require.ErrorAs(t, err, &le)
				assert.Equal(t, pagination.LimitError{Limit: tt.limit, Max: 200, Rule: tt.rule}, *le)
			}
		})
	}
}

func TestLimitWithConfiguredLimits(t *testing.T) {
	p := newPager(t, nil, &pagination.Options{DefaultLimit: 5, MaxLimit: 10})

	got, err := p.Limit(pagination.Request{})
	require.NoError(t, err)
	assert.Equal(t, 5, got, "zero means the configured default")

	_, err = p.Limit(pagination.Request{Limit: 11})
	assert.EqualError(t, err, "pagination: limit 11 exceeds the maximum of 10 (rule lte=10); request at most 10 items per page and follow nextCursor for the rest")

	resp, err := pagination.Paginate(p, records(100), pagination.Request{}, listQuery)
	require.NoError(t, err)
	assert.Equal(t, 5, resp.Meta.PageSize)
}

// The per-request check is written by hand (the validator checks only the
// options, in NewPager); these are the errors the validator's rules gave.
func TestLimitRejectsABadLimitAsTheValidatorDid(t *testing.T) {
	p := newPager(t, nil, &pagination.Options{DefaultLimit: 5, MaxLimit: 10})
	tests := []struct {
		name  string
		limit int
		want  pagination.LimitError
		msg   string
	}{
		{"a negative limit breaks gte=0", -3, pagination.LimitError{Limit: -3, Max: 10, Rule: "gte=0"},
			"pagination: limit -3 must not be negative (rule gte=0); omit limit or send 0 for the default page size, or a value from 1 to 10"},
		{"the most negative limit breaks gte=0", -1 << 62, pagination.LimitError{Limit: -1 << 62, Max: 10, Rule: "gte=0"},
			"pagination: limit -4611686018427387904 must not be negative (rule gte=0); omit limit or send 0 for the default page size, or a value from 1 to 10"},
		{"one above the maximum breaks lte=10", 11, pagination.LimitError{Limit: 11, Max: 10, Rule: "lte=10"},
			"pagination: limit 11 exceeds the maximum of 10 (rule lte=10); request at most 10 items per page and follow nextCursor for the rest"},
		{"a huge limit breaks lte=10", 1 << 62, pagination.LimitError{Limit: 1 << 62, Max: 10, Rule: "lte=10"},
			"pagination: limit 4611686018427387904 exceeds the maximum of 10 (rule lte=10); request at most 10 items per page and follow nextCursor for the rest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Limit(pagination.Request{Limit: tt.limit})
			require.EqualError(t, err, tt.msg)
			var le *pagination.LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.want, *le)
		})
	}
	for _, limit := range []int{1, 5, 10} {
		got, err := p.Limit(pagination.Request{Limit: limit})
		require.NoError(t, err)
		assert.Equal(t, limit, got, "a limit from 1 to the maximum is accepted as it is")
	}
}

func TestRequestJSONNames(t *testing.T) {
	var req pagination.Request
	require.NoError(t, json.Unmarshal([]byte(`{"limit":20,"cursor":"abc"}`), &req))
	assert.Equal(t, pagination.Request{Limit: 20, Cursor: "abc"}, req)

	b, err := json.Marshal(pagination.Request{Limit: 20, Cursor: "abc"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"limit":20,"cursor":"abc"}`, string(b))
}

func TestNewPager(t *testing.T) {
	codec := newCodec(t, nil)
	tests := []struct {
		name    string
		opts    *pagination.Options
		wantErr string
	}{
		{name: "nil options mean the defaults", opts: nil},
		{name: "zero options mean the defaults", opts: &pagination.Options{}},
		{name: "a default limit equal to the maximum is accepted", opts: &pagination.Options{DefaultLimit: 200}},
		{name: "a custom budget is accepted", opts: &pagination.Options{Budget: budget.Budget{Threshold: 100, HardCap: 100}}},
		{
			name:    "a default limit above the maximum is rejected",
			opts:    &pagination.Options{DefaultLimit: 300},
			wantErr: "pagination: Options.DefaultLimit is 300; it must be <= Options.MaxLimit 200 (rule ltefield=MaxLimit)",
		},
		{
			name:    "a negative default limit is rejected",
			opts:    &pagination.Options{DefaultLimit: -1},
			wantErr: "pagination: Options.DefaultLimit is -1; it must be > 0 (rule gt=0), or zero for the default of 50",
		},
		{
			name:    "a negative maximum is rejected",
			opts:    &pagination.Options{MaxLimit: -5},
			wantErr: "pagination: Options.MaxLimit is -5; it must be > 0 (rule gt=0), or zero for the default of 200",
		},
		{
			name:    "a hard cap below the threshold is rejected",
			opts:    &pagination.Options{Budget: budget.Budget{Threshold: 100, HardCap: 50}},
			wantErr: "pagination: Options.Budget: budget: hardCap 50 must be >= threshold 100",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := pagination.NewPager(codec, tt.opts)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				assert.Nil(t, p)
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, p)
		})
	}

	t.Run("a nil codec is rejected", func(t *testing.T) {
		_, err := pagination.NewPager(nil, nil)
		assert.EqualError(t, err, "pagination: NewPager needs a cursor codec; create one with cursor.NewCodec")
	})

	t.Run("the options are copied", func(t *testing.T) {
		opts := &pagination.Options{Budget: budget.Budget{Threshold: 100, HardCap: 200}}
		p, err := pagination.NewPager(codec, opts)
		require.NoError(t, err)
		opts.Budget.Threshold = 1
		assert.Equal(t, budget.Budget{Threshold: 100, HardCap: 200}, p.Budget())
	})

	t.Run("a zero budget means the default", func(t *testing.T) {
		p, err := pagination.NewPager(codec, nil)
		require.NoError(t, err)
		assert.Equal(t, budget.Default(), p.Budget())
	})
}

func TestErrorsAreBranchable(t *testing.T) {
	var err error = &pagination.ItemTooLargeError{Index: 3, Tokens: 20000, HardCap: 12000}
	assert.True(t, errors.Is(err, pagination.ErrItemTooLarge))
	assert.EqualError(t, err, "pagination: item 3 takes 20000 tokens on a page of its own, more than the hard cap of 12000; it cannot be paginated and must be summarized or chunked")
}
