package summary_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/summary"
)

// fieldName is a field the second part of FuzzFormatRender renders: a
// top-level name its template can write as {{.name}}.
var fieldName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,15}$`)

// FuzzFormatRender renders random JSON, with random call arguments,
// through formats made of random extract fields (the lenient projection),
// required fields, templates, field transforms and length limits:
//
//   - it never panics, and an error is always the fallback's
//     (ErrFormatFailed or ErrFormatTimeout);
//   - the output is bounded: at most MaxLength characters;
//   - with a template that prints each of its top-level fields, a field the
//     object lacks renders empty unless it is required, and a missing
//     required field falls back with an error that names it.
//
// Seeds are the f.Add calls and testdata/fuzz/FuzzFormatRender.
func FuzzFormatRender(f *testing.F) {
	f.Add([]byte(`{"nodes":[{"name":"a","summary":"x"},{"name":"b"}],"message":"ok"}`), []byte(`{"query":"a"}`),
		"nodes.name,nodes.summary,message", "nodes.name", "{{len .nodes}} for {{.args.query}}:{{range .nodes}} {{.name}}{{end}} {{.message}}", "nodes.summary=truncateText:3", uint16(40))
	f.Add([]byte(`{"status":"healthy"}`), []byte(`{}`), "status,last_updated", "status", "", "", uint16(0))
	f.Add([]byte(`{"success":true}`), []byte(`null`), "success,message", "message", "", "", uint16(5))
	f.Add([]byte(`{"a":null,"b":{"c":[1,2,{"d":"e"}]}}`), []byte(`{"x":[1]}`), "a,b.c.d,b.z", "", "{{.a}}|{{.b.c}}|{{index .args.x 0}}", "b.c.d=relativeTime", uint16(0))
	f.Add([]byte(`[{"a":1},{"a":2}]`), []byte(`{}`), "a", "a", "{{range .}}{{.a}}{{end}}", "", uint16(3))
	f.Add([]byte(`{"t":"2026-01-01T00:00:00Z","u":"550e8400-e29b-41d4-a716-446655440000"}`), []byte(`{}`), "t,u", "t",
		"{{relTime .t}} {{last8 .u}} {{truncate 4 .u}}", "t=relativeTime,u=truncateUuid", uint16(12))
	f.Fuzz(func(t *testing.T, data, args []byte, fields, required, tmpl, transforms string, maxLength uint16) {
		if len(data) > maxFuzzInput || len(args) > maxFuzzInput || len(tmpl) > 4096 {
			t.Skip()
		}
		format := summary.Format{ID: "fuzz", Fields: splitList(fields), Required: splitList(required), MaxLength: int(maxLength % 4096)}
		for _, tr := range splitList(transforms) {
			path, name, _ := strings.Cut(tr, "=")
			if format.FieldTransforms == nil {
				format.FieldTransforms = map[string]string{}
			}
			format.FieldTransforms[path] = name
		}
		// A template that prints each field that is a plain name: its
		// output says which fields the response lacked.
		var printed []string
		if tmpl == "" {
			var b strings.Builder
			for _, p := range format.Fields {
				if fieldName.MatchString(p) && !slices.Contains(printed, p) && p != "args" {
					printed = append(printed, p)
					b.WriteString(p + "=[{{." + p + "}}];")
				}
			}
			if len(printed) == 0 {
				t.Skip()
			}
			tmpl = b.String()
		}
		format.Template = tmpl
		fm, err := summary.NewFormatter(map[string]summary.Format{"op": format}, &summary.FormatOptions{Timeout: 2 * time.Second,
			Now: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }})
		if err != nil {
			return // a format that does not compile is refused up front
		}
		text, err := fm.RenderArgs(context.Background(), "op", data, args)
		if err != nil {
			if !errors.Is(err, summary.ErrFormatFailed) && !errors.Is(err, summary.ErrFormatTimeout) {
				t.Fatalf("an error that is no fallback: %v", err)
			}
		} else if format.MaxLength > 0 && utf8.RuneCountInString(text) > format.MaxLength {
			t.Fatalf("%d characters out of a format of MaxLength %d", utf8.RuneCountInString(text), format.MaxLength)
		}
		if len(printed) == 0 || format.MaxLength != 0 || len(format.FieldTransforms) > 0 {
			return
		}
		obj, ok := decodeValid(data)
		m, isObject := obj.(map[string]any)
		if !ok || !isObject || hasDuplicateKeys(data) {
			return
		}
		var missingRequired []string
		for _, p := range printed {
			if _, present := m[p]; !present && slices.Contains(format.Required, p) {
				missingRequired = append(missingRequired, p)
			}
		}
		if len(missingRequired) > 0 {
			if err == nil {
				t.Fatalf("the required fields %v are missing and the format did not fall back: %q", missingRequired, text)
			}
			named := false
			for _, p := range missingRequired {
				named = named || strings.Contains(err.Error(), strconv.Quote(p))
			}
			if !named {
				t.Fatalf("the fallback names none of the missing required fields %v: %v", missingRequired, err)
			}
			return
		}
		if err != nil && !errors.Is(err, summary.ErrFormatTimeout) {
			t.Fatalf("a response with every required field fell back: %v", err)
		}
		if err != nil {
			return
		}
		for _, p := range printed {
			if v, present := m[p]; (!present || v == nil) && !strings.Contains(text, p+"=[];") {
				t.Fatalf("the missing optional field %q does not render empty: %q", p, text)
			}
		}
	})
}

// splitList splits a comma-separated list; "" is none.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// hasDuplicateKeys reports whether data, a JSON object, may hold a name
// twice at its top level (encoding/json keeps the last; the projection may
// keep either): a cheap, conservative check.
func hasDuplicateKeys(data []byte) bool {
	seen := map[string]bool{}
	for _, k := range regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:`).FindAllSubmatch(data, -1) {
		if seen[string(k[1])] {
			return true
		}
		seen[string(k[1])] = true
	}
	return false
}
