package summary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfit/ctxfit/budget"
)

// maxParseInput bounds the inputs the internal fuzz targets parse.
const maxParseInput = 64 << 10

// toAny converts n to what encoding/json decodes (numbers as json.Number).
func toAny(n *node) any {
	switch n.kind {
	case kindNull:
		return nil
	case kindBool:
		return n.lit == "true"
	case kindNumber:
		return json.Number(n.raw)
	case kindString:
		return n.lit
	case kindArray:
		out := make([]any, len(n.vals))
		for i, v := range n.vals {
			out[i] = toAny(v)
		}
		return out
	}
	out := make(map[string]any, len(n.keys))
	for i, k := range n.keys {
		out[k] = toAny(n.vals[i])
	}
	return out
}

// FuzzParse checks the parser against encoding/json: it accepts exactly
// the same inputs, decodes them to the same value, and keeps the raw text
// of the value; a parse guided by paths (comma-separated in paths) projects
// to what a full parse projects to, and a shallow parse finds the same
// top-level fields. Seeds are in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5e3,-0,"x\u00e9\ud800",true,null],"b":{"c":{}},"a":{"d":"\n"}}`), "a.d,b")
	f.Fuzz(func(t *testing.T, data []byte, paths string) {
		if len(data) > maxParseInput {
			t.Skip()
		}
		ctx := context.Background()
		n, err := parse(ctx, data)
		valid := json.Valid(data)
		if valid != (err == nil) {
			t.Fatalf("json.Valid %t, parse error %v, on %q", valid, err, data)
		}
		if !valid {
			return
		}
		var want any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := toAny(n); !reflect.DeepEqual(got, want) {
			t.Fatalf("parse gives %#v, encoding/json %#v, on %q", got, want, data)
		}
		if !bytes.Equal(n.raw, bytes.Trim(data, " \t\r\n")) {
			t.Fatalf("raw %q of %q", n.raw, data)
		}

		shallow, err := parseShallow(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		a, b := topKeys(n), topKeys(shallow)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("shallow top-level fields %q, full %q", b, a)
		}

		// A parse for a summary gives the same candidates, and the same
		// projection of configured fields, as a full parse.
		sp, err := parseForSummary(ctx, data, Shape{})
		if err != nil {
			t.Fatalf("a parse for a summary fails on valid JSON: %v", err)
		}
		if n.kind == kindObject {
			want, _ := candidates(nil, n, 20, nil)
			got, _ := candidates(nil, sp, 20, nil)
			if len(want) != len(got) {
				t.Fatalf("%d candidates from a parse for a summary, %d from a full one, on %q", len(got), len(want), data)
			}
			for i := range want {
				w, g := want[i], got[i]
				if w.path != g.path || w.score != g.score || !bytes.Equal(appendJSON(nil, w.value), appendJSON(nil, g.value)) {
					t.Fatalf("candidate %q (%d) from a parse for a summary, %q (%d) from a full one, on %q", g.path, g.score, w.path, w.score, data)
				}
			}
		}
		if ps := strings.Split(paths, ","); !slices.Contains(ps, "") {
			fp, err := parseForSummary(ctx, data, Shape{Fields: ps})
			if _, _, cerr := compilePaths(ps); cerr != nil {
				if !errors.Is(err, ErrInvalidPath) {
					t.Fatalf("a malformed path gives %v", err)
				}
			} else if err != nil {
				t.Fatalf("a parse for configured fields fails on valid JSON: %v", err)
			}
			if err != nil {
				return
			}
			want, _, werr := projectNode(nil, n, ps)
			got, _, gerr := projectNode(nil, fp, ps)
			if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(appendJSON(nil, want), appendJSON(nil, got)) {
				t.Fatalf("configured fields %q project differently after a parse for a summary, on %q", paths, data)
			}
		}

		tFull, uniq, err := compilePaths(strings.Split(paths, ","))
		if err != nil || len(uniq) == 0 {
			return
		}
		tGuided, _, _ := compilePaths(strings.Split(paths, ","))
		g, err := parseGuided(ctx, data, tGuided)
		if err != nil {
			t.Fatalf("a guided parse fails on valid JSON: %v", err)
		}
		want1, _, _ := project(nil, n, tFull)
		got1, _, _ := project(nil, g, tGuided)
		if (want1 == nil) != (got1 == nil) || want1 != nil && !bytes.Equal(appendJSON(nil, want1), appendJSON(nil, got1)) {
			t.Fatalf("guided projection differs on %q with %q", data, paths)
		}
		if m1, m2 := tFull.misses(nil, false), tGuided.misses(nil, false); len(m1) != len(m2) {
			t.Fatalf("guided misses %q, full %q", m2, m1)
		}
	})
}

// FuzzCountApart checks that counting a text in segments cut where
// cutsApart allows gives the exact count of the whole, with and without a
// limit. Seeds are in testdata/fuzz/FuzzCountApart.
func FuzzCountApart(f *testing.F) {
	f.Add(`{"name":"Ann","n":12345,"t":true,"s":"don't","x":"\u00e9"}`, uint16(3), uint16(5))
	c, err := budget.Exact(budget.O200KBase)
	if err != nil {
		f.Fatal(err)
	}
	cl, err := budget.Exact(budget.CL100KBase)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, segment, limit uint16) {
		if len(text) > maxParseInput {
			t.Skip()
		}
		for _, counter := range []budget.Counter{c, cl} {
			s := &Summarizer{counter: counter}
			whole := counter.Count(text)
			got, err := s.countIn(nil, text, -1, int(segment%64)+1)
			if err != nil || got != whole {
				t.Fatalf("count in segments %d, whole %d (%v) on %q", got, whole, err, text)
			}
			lim := int(limit % 200)
			got, err = s.countIn(nil, text, lim, int(segment%64)+1)
			if err != nil || (whole <= lim) != (got <= lim) || whole <= lim && got != whole {
				t.Fatalf("count up to %d in segments %d, whole %d (%v) on %q", lim, got, whole, err, text)
			}
		}
	})
}
