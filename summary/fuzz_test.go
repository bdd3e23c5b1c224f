package summary_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
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
		validPartOf(t, "projection", got, in, data)
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
		if passedThrough(t, r, data, th) {
			return
		}
		in, ok := decodeValid(data)
		if !ok {
			t.Fatalf("invalid JSON %q was summarized", data)
		}
		var resp summary.RawResponse
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

// validPartOf checks that got, the output of an operation (what) on data,
// decoded as in, is valid JSON that holds only fields of data, and returns
// it decoded.
func validPartOf(t *testing.T, what string, got []byte, in any, data []byte) any {
	t.Helper()
	out, ok := decodeValid(got)
	if !ok {
		t.Fatalf("the %s %q is not valid JSON", what, got)
	}
	if at, ok := partOf(out, in, "$"); !ok {
		t.Fatalf("the %s %s holds %s, which is not in the input %s", what, got, at, data)
	}
	return out
}

// passedThrough reports whether r passed input through, and checks that
// it did so unchanged and at most at the threshold.
func passedThrough(t *testing.T, r *summary.Result, input []byte, threshold int) bool {
	t.Helper()
	if r.Summarized {
		return false
	}
	if !bytes.Equal(r.Response, input) || r.TokensBefore > threshold {
		t.Fatalf("pass-through changed the input or was over the threshold")
	}
	return true
}

// identityKey matches names that are surely identity fields.
var identityKey = regexp.MustCompile(`^(id|uuid|key|slug|[a-z]+Id|[a-z]+_id)$`)

// wideDeep builds an object from fuzz input: wide members whose keys and
// values are cut from text (strings, numbers, booleans, nulls, small lists,
// nested objects), then a chain of deep objects, each with a few scalars.
func wideDeep(text []byte, wide, deep int) []byte {
	piece := func(i int) string {
		if len(text) == 0 {
			return ""
		}
		a := i % len(text)
		return string(text[a:min(len(text), a+1+i%23)])
	}
	m := func(k string, v any) string {
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		return string(kb) + ":" + string(vb)
	}
	var b strings.Builder
	b.WriteString(`{"id":"W1"`)
	for i := range wide {
		b.WriteByte(',')
		k := piece(i) + strconv.Itoa(i)
		switch i % 7 {
		case 0, 1:
			b.WriteString(m(k, piece(i*3)))
		case 2:
			b.WriteString(m(k, i*13))
		case 3:
			b.WriteString(m(k, i%2 == 0))
		case 4:
			b.WriteString(m(k, nil))
		case 5:
			b.WriteString(m(k, []string{piece(i), piece(i + 1)}))
		default:
			b.WriteString(m(k, map[string]any{"id": i, piece(i + 2): piece(i + 5), "text": string(text)}))
		}
	}
	for d := range deep {
		fmt.Fprintf(&b, `,%s,"next":{`, m("name", piece(d)))
		b.WriteString(m("id", d))
	}
	b.WriteString(strings.Repeat("}", deep))
	b.WriteByte('}')
	return []byte(b.String())
}

// FuzzSummarize summarizes random JSON, and wide and deep objects built from
// the fuzz input, with random budgets: it must never panic, fail only with
// the documented errors, pass small inputs through unchanged, and, when it
// summarizes, return valid JSON within the hard cap by exact count, with
// TokensAfter its exact count and the names of left-out fields within a
// tenth of the threshold. Seeds are in testdata/fuzz/FuzzSummarize.
func FuzzSummarize(f *testing.F) {
	f.Add([]byte(`{"id":"BK1","name":"n","items":[{"a":1}],"guest":{"guestId":"G","notes":"a b c d"}}`), uint16(0), uint16(0), uint16(20), uint16(100), uint8(10))
	f.Add([]byte("env\xffvar"), uint16(1500), uint16(3), uint16(400), uint16(500), uint8(40))
	f.Add([]byte("level"), uint16(2), uint16(400), uint16(100), uint16(0), uint8(0))
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, wide, deep, threshold, hardCap uint16, textLimit uint8) {
		if len(data) > maxFuzzInput {
			t.Skip()
		}
		input := data
		if wide > 0 || deep > 0 {
			input = wideDeep(data, int(wide)%3000, int(deep)%500)
		}
		th := int(threshold)%4000 + 1
		hc := th + int(hardCap)%4000
		s, err := summary.New(&summary.Options{Counter: c, Budget: budget.Budget{Threshold: th, HardCap: hc}, TextLimit: int(textLimit) + 1})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Summarize(input, summary.Shape{Endpoint: "/x/{id}"})
		if err != nil {
			if !errors.Is(err, summary.ErrInvalidJSON) && !errors.Is(err, summary.ErrNotObject) && !errors.Is(err, summary.ErrTooLarge) {
				t.Fatalf("unexpected error: %v", err)
			}
			if _, ok := decodeValid(input); ok && errors.Is(err, summary.ErrInvalidJSON) {
				t.Fatalf("valid JSON rejected: %v", err)
			}
			return
		}
		if passedThrough(t, r, input, th) {
			return
		}
		if !json.Valid(r.Response) {
			t.Fatalf("the summary %q is not valid JSON", r.Response)
		}
		if n := c.Count(string(r.Response)); n > hc || n != r.TokensAfter {
			t.Fatalf("the summary takes %d tokens (TokensAfter %d), over the hard cap %d", n, r.TokensAfter, hc)
		}
		if n := c.Count(string(input)); n != r.TokensBefore {
			t.Fatalf("TokensBefore %d, exact count %d", r.TokensBefore, n)
		}
		m := r.Summary.Meta
		if m.DetailsAvailable == nil {
			return
		}
		list := m.DetailsAvailable.Parameters["fields"]
		names, _ := json.Marshal(list)
		if list == summary.FieldsAll && m.OmittedFields != nil {
			names, _ = json.Marshal(m.OmittedFields)
		}
		if list == summary.FieldsAll && m.OmittedFields == nil {
			names = nil
		}
		if n := c.Count(string(names)); n > th/10 {
			t.Fatalf("the left-out names %s take %d tokens, over a tenth of the threshold %d", names, n, th)
		}
	})
}

// FuzzServeDetails serves random fields parameters (top-level fields, dotted
// paths, paths through arrays) from random JSON: it must never panic, accept
// exactly the JSON encoding/json accepts, fail only with the documented
// errors, and return valid JSON that holds what [summary.Project] returns
// for the same paths, top-level values byte for byte as in the input.
// Seeds are in testdata/fuzz/FuzzServeDetails.
func FuzzServeDetails(f *testing.F) {
	f.Add([]byte(`{"id":"BK1","guest":{"name":"Ann","address":{"city":"Rome"}},"rooms":[{"id":1},{"id":2},3]}`), "guest.address.city,rooms.id")
	f.Add([]byte(`{"a.b":1,"a":{"b":2}}`), "a.b")
	f.Add([]byte(`{"a" : [ {"b" : 1.50 } ] , "a":{"b":"\u00e9"}}`), "a.b, a ,x.")
	f.Fuzz(func(t *testing.T, data []byte, fields string) {
		if len(data) > maxFuzzInput || len(fields) > 1024 {
			t.Skip()
		}
		got, err := summary.ServeDetails(data, fields)
		var names []string
		for _, n := range strings.Split(fields, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		if slices.Contains(names, summary.FieldsAll) {
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("fields=all did not return the input: %v", err)
			}
			return
		}
		in, valid := decodeValid(data)
		if !valid {
			if !errors.Is(err, summary.ErrInvalidJSON) {
				t.Fatalf("invalid JSON %q accepted: err %v", data, err)
			}
			return
		}
		obj, isObject := in.(map[string]any)
		if !isObject {
			if !errors.Is(err, summary.ErrNotObject) {
				t.Fatalf("a JSON %T accepted: err %v", in, err)
			}
			return
		}
		literal := false // a name that is a top-level field holding a dot
		for _, n := range names {
			if _, ok := obj[n]; ok && strings.Contains(n, ".") {
				literal = true
			}
		}
		want, _, perr := summary.Project(data, names)
		if err != nil {
			if !errors.Is(err, summary.ErrUnknownField) && !errors.Is(err, summary.ErrUnknownPath) && !errors.Is(err, summary.ErrInvalidPath) {
				t.Fatalf("unexpected error: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "summary: ") {
				t.Fatalf("message %q lacks the package prefix", err)
			}
			if perr == nil && len(names) > 0 && !literal {
				t.Fatalf("ServeDetails fails (%v) where Project gives %s", err, want)
			}
			return
		}
		out := validPartOf(t, "drill-down", got, in, data)
		if literal {
			return
		}
		if perr != nil {
			t.Fatalf("Project fails (%v) where ServeDetails gives %s", perr, got)
		}
		if w, _ := decodeValid(want); !reflect.DeepEqual(w, out) {
			t.Fatalf("ServeDetails gives %s, Project %s", got, want)
		}
		for k, raw := range topLevelRaw(t, data) {
			if slices.Contains(names, k) && !bytes.Contains(got, raw) {
				t.Fatalf("the field %q is not byte for byte %s in %s", k, raw, got)
			}
		}
	})
}

// topLevelRaw returns the raw text of each top-level field of the JSON
// object data (of duplicates, the last).
func topLevelRaw(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		out[k.(string)] = raw
	}
	return out
}
