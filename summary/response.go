package summary

import (
	"encoding/json"
	"fmt"
)

// Kinds of a [Meta].
const (
	// KindPreview: the summary holds part of the object; the rest is
	// fetched through [Meta.DetailsAvailable].
	KindPreview = "preview"
	// KindFull: the summary holds every field of the object whole.
	KindFull = "full"
)

// FieldsAll is the value of the fields parameter that asks a drill-down for
// the whole object.
const FieldsAll = "all"

// Response is a condensed representation of an object with the way
// to fetch the rest. It marshals as
//
//	{"summary":{...},"meta":{"kind":"preview","totalFields":N,"projectedFields":[...],
//	 "detailsAvailable":{"endpoint":"...","parameters":{"fields":"..."}}}}
//
// T is the type of the summary: a struct of the fields kept, or
// [json.RawMessage] for the summaries a [Summarizer] makes from raw JSON
// ([RawResponse]). The zero value is an empty preview with no
// summary. A Response is a plain value, safe for concurrent reads.
type Response[T any] struct {
	// Summary holds the projected fields.
	Summary T `json:"summary"`
	// Meta describes the summary.
	Meta Meta `json:"meta"`
}

// RawResponse is the non-generic form, whose summary is the JSON the
// projection produced.
type RawResponse = Response[json.RawMessage]

// Meta describes a summary.
//
// The zero Meta has an empty Kind, which marshals as ""; summaries made by
// this package always set it. Meta is a plain value, safe for concurrent
// reads.
type Meta struct {
	// Kind is [KindPreview] or [KindFull].
	Kind string `json:"kind"`
	// TotalFields is the number of top-level fields of the full object.
	TotalFields int `json:"totalFields"`
	// ProjectedFields are the paths of the fields the summary holds, in the
	// form [Project] accepts ("status", "guest.name"): the configured paths
	// in the order given, or the selected ones in summary order.
	ProjectedFields []string `json:"projectedFields"`
	// DetailsAvailable says how to fetch what the summary left out; nil
	// (and omitted from the JSON) when Kind is [KindFull].
	DetailsAvailable *Details `json:"detailsAvailable,omitempty"`
	// OmittedItems counts, per array path, the elements that a [TopN] rule
	// left out; nil (and omitted from the JSON) when no rule left any out.
	OmittedItems map[string]int `json:"omittedItems,omitempty"`
	// OmittedFieldCount is the number of top-level sections the summary
	// left out or cut, set when their names would take more than a tenth
	// of the threshold (by exact count): DetailsAvailable's fields
	// parameter is then "all" instead of the list. Zero (and omitted from
	// the JSON) when the fields parameter lists them all.
	OmittedFieldCount int `json:"omittedFieldCount,omitempty"`
	// OmittedFields lists, when OmittedFieldCount is set, the first of
	// those names, in input order, as many as fit in that tenth of the
	// threshold (by exact count of their JSON array); the
	// OmittedFieldCount - len(OmittedFields) others are not named. Nil
	// (and omitted from the JSON) when none fit or the fields parameter
	// lists them all.
	OmittedFields []string `json:"omittedFields,omitempty"`
}

// Details is the drill-down link of a summary.
//
// The zero value has no endpoint and no parameters. It is a plain value;
// Parameters must not be modified while it is shared.
type Details struct {
	// Endpoint is the endpoint that serves the full object, e.g.
	// "/api/v1/bookings/BK12345".
	Endpoint string `json:"endpoint"`
	// Parameters are the request parameters that fetch the rest: "fields"
	// is a comma-separated list of the top-level sections the summary left
	// out or cut (see [ServeDetails]), or "all" when that list would be
	// too long (see [Meta.OmittedFields]) or the input is not an object.
	Parameters map[string]string `json:"parameters"`
}

// Typed decodes the summary of r into T, for callers that want to read it
// as a Go value. Fields of T that the summary lacks keep their zero value.
func Typed[T any](r RawResponse) (Response[T], error) {
	var s T
	if len(r.Summary) > 0 {
		if err := json.Unmarshal(r.Summary, &s); err != nil {
			return Response[T]{}, fmt.Errorf("summary: decode the summary as %T: %w", s, err)
		}
	}
	return Response[T]{Summary: s, Meta: r.Meta}, nil
}

// marshalRaw writes r in compact form. It is what the budget counts.
func marshalRaw(dst []byte, summary *node, m *Meta) []byte {
	dst = append(dst, `{"summary":`...)
	dst = appendJSON(dst, summary)
	dst = append(dst, `,"meta":`...)
	b, _ := json.Marshal(m) // Meta always marshals
	dst = append(dst, b...)
	return append(dst, '}')
}
