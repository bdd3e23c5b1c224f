package summary_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/summary"
)

// maxFuzzInput bounds the inputs the fuzz targets parse.
const maxFuzzInput = 64 << 10

// decodeValid decodes data as encoding/json does, numbers as json.Number,
// and reports whether it is exactly one JSON value.
func decodeValid(data []byte) (any, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// FuzzProject projects random JSON on random paths (comma-separated in
// paths): it must never panic, must accept exactly the JSON that
// encoding/json accepts, and must never return a field that is not in the
// input. Seeds are in testdata/fuzz/FuzzProject.
func FuzzProject(f *testing.F) {
	f.Add([]byte(`{"id":1,"price":{"base":2,"tax":3},"rooms":[{"id":1},{"id":2},3]}`), "id,price.base,rooms.id")
	f.Add([]byte(`[{"a":{"b":[{"c":1}]}},{"a":2}]`), "a.b.c")
	f.Add([]byte(`{"a":1,"a":{"b":2}}`), "a.b")
	f.Add([]byte(`"scalar"`), "a")
	f.Add([]byte(`{"a":[]}`), "a.b,a")
	f.Fuzz(func(t *testing.T, data []byte, paths string) {
		if len(data) > maxFuzzInput {
			t.Skip()
		}
		var ps []string
		if paths != "" {
			ps = strings.Split(paths, ",")
		}
		got, kept, err := summary.Project(data, ps)
		in, valid := decodeValid(data)
		if !valid {
			if !errors.Is(err, summary.ErrInvalidJSON) {
				t.Fatalf("invalid JSON %q accepted: err %v", data, err)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, summary.ErrInvalidPath) && !errors.Is(err, summary.ErrUnknownPath) {
				t.Fatalf("unexpected error on valid JSON: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "summary: ") {
				t.Fatalf("message %q lacks the package prefix", err)
			}
			return
		}
		out, ok := decodeValid(got)
		if !ok {
			t.Fatalf("the projection %q is not valid JSON", got)
		}
		if at, ok := partOf(out, in, "$"); !ok {
			t.Fatalf("the projection %s holds %s, which is not in the input %s", got, at, data)
		}
		for _, p := range kept {
			if !strings.Contains(","+paths+",", ","+p+",") {
				t.Fatalf("reported path %q was not asked for", p)
			}
		}
	})
}

// FuzzAutoSelect summarizes random JSON objects with automatic selection
// and a random budget: it must never panic, never return a field that is
// not in the input (long text may be cut, with its marker), keep every
// identity field when it summarizes, and pass small inputs through
// unchanged. Seeds are in testdata/fuzz/FuzzAutoSelect.
func FuzzAutoSelect(f *testing.F) {
	f.Add([]byte(`{"id":"BK1","status":"ok","guest":{"guestId":"G","name":"Ann","notes":"a b c d e f g h i j k l m n o p q r s t u v w x y z"},"tags":["a"],"n":null}`), uint16(5), uint16(40), uint8(10))
	f.Add([]byte(`{"a":{"b":{"c":{"d":1}}},"list":[1,2,3],"empty":{},"e":[]}`), uint16(1), uint16(1), uint8(0))
	f.Add([]byte(`{"text":"ééééééééééééééééééééé ééééé"}`), uint16(2), uint16(30), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, threshold, summaryTokens uint16, textLimit uint8) {
		if len(data) > maxFuzzInput {
			t.Skip()
		}
		th := int(threshold)%2000 + 1
		s, err := summary.New(&summary.Options{
			Budget:        budget.Budget{Threshold: th, HardCap: 1 << 20},
			SummaryTokens: int(summaryTokens)%2000 + 1,
			TextLimit:     int(textLimit) + 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Summarize(data, summary.Shape{Endpoint: "/x/{id}"})
		if err != nil {
			if !errors.Is(err, summary.ErrInvalidJSON) && !errors.Is(err, summary.ErrNotObject) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		if !r.Summarized {
			if !bytes.Equal(r.Response, data) || r.TokensBefore > th {
				t.Fatalf("pass-through changed the input or was over the threshold")
			}
			return
		}
		in, ok := decodeValid(data)
		if !ok {
			t.Fatalf("invalid JSON %q was summarized", data)
		}
		var resp summary.RawSummaryResponse
		if err := json.Unmarshal(r.Response, &resp); err != nil {
			t.Fatalf("the response %q does not decode: %v", r.Response, err)
		}
		out, ok := decodeValid(resp.Summary)
		if !ok {
			t.Fatalf("the summary %q is not valid JSON", resp.Summary)
		}
		if at, ok := partOf(out, in, "$"); !ok {
			t.Fatalf("the summary %s holds %s, which is not in the input %s", resp.Summary, at, data)
		}
		sum, _ := out.(map[string]any)
		for k, v := range in.(map[string]any) {
			switch v.(type) {
			case string, json.Number:
			default:
				continue
			}
			if _, kept := sum[k]; identityKey.MatchString(k) && !kept {
				t.Fatalf("identity field %q was dropped from %s", k, resp.Summary)
			}
		}
	})
}

// identityKey matches names that are surely identity fields.
var identityKey = regexp.MustCompile(`^(id|uuid|key|slug|[a-z]+Id|[a-z]+_id)$`)
