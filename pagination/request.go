package pagination

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/go-playground/validator/v10"

	"github.com/ctxfit/ctxfit/cursor"
)

// Default limits of a [Pager], used when [Options] leaves them zero.
const (
	DefaultLimit = 50  // items per page when the request gives no limit
	MaxLimit     = 200 // the largest limit a request may ask for
)

// Request is what a client sends for one page: how many items at most, and
// where to continue.
//
// The zero Request asks for the first page with the default limit. A Request
// is a plain value, safe to copy and share.
type Request struct {
	// Limit is the largest number of items the page may hold. Zero means the
	// Pager's default limit (50 unless configured); negative values and
	// values above the Pager's maximum (200 unless configured) are rejected
	// with a [*LimitError]. The token budget may make a page shorter.
	Limit int `json:"limit,omitempty"`
	// Cursor is the nextCursor of the previous page; "" asks for the first
	// page.
	Cursor string `json:"cursor,omitempty"`
}

// expect is q as the Pager decodes cursors with it: bound to page cursors.
func expect(q *cursor.Binding) cursor.Binding {
	e := *q
	e.Kind = cursor.KindPage
	return e
}

var validate = validator.New(validator.WithRequiredStructEnabled())

// options are validated after defaults are applied.
type validatedOptions struct {
	DefaultLimit int `validate:"gt=0,ltefield=MaxLimit"`
	MaxLimit     int `validate:"gt=0"`
}

// Limit returns the page limit req asks for: req.Limit, or the default limit
// when it is zero. A negative limit, or one above the maximum, is an error
// that wraps [ErrInvalidLimit] and is a [*LimitError] naming the rule broken.
//
// Limit runs on every paged request, so it checks the two rules itself;
// the validator checks the Pager's options once, in [NewPager].
func (p *Pager) Limit(req Request) (int, error) {
	switch {
	case req.Limit == 0:
		return p.defaultLimit, nil
	case req.Limit < 0:
		return 0, &LimitError{Limit: req.Limit, Max: p.maxLimit, Rule: ruleNotNegative}
	case req.Limit > p.maxLimit:
		return 0, &LimitError{Limit: req.Limit, Max: p.maxLimit, Rule: p.maxRule}
	}
	return req.Limit, nil
}

// ruleNotNegative is the rule a negative limit breaks, in the validator's
// notation that [LimitError.Rule] uses.
const ruleNotNegative = "gte=0"

// newOptionsError turns a validation failure of the Pager options into a
// message that names the field and the rule.
func newOptionsError(err error, o validatedOptions) error {
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return fmt.Errorf("pagination: options: %w", err)
	}
	fe := verrs[0]
	for _, e := range verrs {
		if e.Field() == "MaxLimit" {
			fe = e // report the maximum first: the default is checked against it
		}
	}
	switch {
	case fe.Field() == "MaxLimit":
		return fmt.Errorf("pagination: Options.MaxLimit is %d; it must be > 0 (rule %s), or zero for the default of %d", o.MaxLimit, fe.Tag()+"="+fe.Param(), MaxLimit)
	case fe.Tag() == "ltefield":
		return fmt.Errorf("pagination: Options.DefaultLimit is %d; it must be <= Options.MaxLimit %d (rule ltefield=MaxLimit)", o.DefaultLimit, o.MaxLimit)
	default:
		return fmt.Errorf("pagination: Options.DefaultLimit is %d; it must be > 0 (rule %s), or zero for the default of %d", o.DefaultLimit, fe.Tag()+"="+fe.Param(), DefaultLimit)
	}
}

// maxRule is the rule a limit above maxLimit breaks, in the validator's
// notation that [LimitError.Rule] uses.
func maxRule(maxLimit int) string {
	return "lte=" + strconv.Itoa(maxLimit)
}
