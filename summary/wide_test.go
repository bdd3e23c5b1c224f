package summary_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/summary"
)

// envObject returns an object of n variables shaped like server-everything's
// get-env result: upper-case names, values that are paths, flags and
// words, and (when identity is set) an id, a name and a type at the end.
func envObject(n int, identity bool) []byte {
	words := []string{"NPM", "CONFIG", "PATH", "HOME", "NODE", "CACHE", "USER", "SHELL", "LANG", "TERM", "XDG", "DATA", "DIRS", "RUNTIME"}
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%s_%s_%d":`, words[i%len(words)], words[(i*7+3)%len(words)], i)
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `"/usr/local/lib/node_modules/pkg%d/bin:/usr/bin:/bin"`, i)
		case 1:
			b.WriteString(`"1"`)
		case 2:
			fmt.Fprintf(&b, `"value of variable %d"`, i)
		default:
			b.WriteString(`"en_US.UTF-8"`)
		}
	}
	if identity {
		b.WriteString(`,"id":"env-42","name":"server environment","type":"environment"`)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// wideCheck is what a summary of a wide object says, read back from it.
type wideCheck struct {
	meta      summary.Meta
	sum       map[string]any
	partial   []string // the top-level fields not in the summary whole, in input order
	listToks  int      // exact tokens of the names the meta lists
	respToks  int
	threshold int
}

// checkWide summarizes data and reads the summary back.
func checkWide(t *testing.T, s *summary.Summarizer, data []byte) wideCheck {
	t.Helper()
	c := exactCounter(t)
	r, err := s.Summarize(data, summary.Shape{Endpoint: "/env"})
	require.NoError(t, err)
	require.True(t, r.Summarized)
	w := wideCheck{meta: r.Summary.Meta, respToks: c.Count(string(r.Response)), threshold: s.Budget().Threshold}
	assert.Equal(t, w.respToks, r.TokensAfter)
	assert.Equal(t, c.Count(string(data)), r.TokensBefore, "the input is counted exactly, in segments when long")
	w.sum = decode(t, r.Summary.Summary).(map[string]any)
	full := decode(t, data).(map[string]any)
	for _, k := range orderedKeys(t, data) {
		if v, ok := w.sum[k]; !ok || !reflect.DeepEqual(v, full[k]) {
			w.partial = append(w.partial, k)
		}
	}
	require.NotNil(t, w.meta.DetailsAvailable)
	fields := w.meta.DetailsAvailable.Parameters["fields"]
	if fields == summary.FieldsAll {
		names, err := json.Marshal(w.meta.OmittedFields)
		require.NoError(t, err)
		if w.meta.OmittedFields != nil {
			w.listToks = c.Count(string(names))
		}
	} else {
		quoted, err := json.Marshal(fields)
		require.NoError(t, err)
		w.listToks = c.Count(string(quoted))
	}
	return w
}

// orderedKeys returns the top-level keys of the JSON object data in input
// order.
func orderedKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytesReader(data))
	_, err := dec.Token()
	require.NoError(t, err)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

// assertBoundedList checks the rules of the left-out names: at most a tenth
// of the threshold; the whole list in the fields parameter, or "all" with
// the first names in input order and their number.
func assertBoundedList(t *testing.T, w wideCheck) {
	t.Helper()
	assert.LessOrEqual(t, w.listToks, w.threshold/10, "the left-out names take at most a tenth of the threshold")
	fields := w.meta.DetailsAvailable.Parameters["fields"]
	if fields != summary.FieldsAll {
		assert.Equal(t, strings.Join(w.partial, ","), fields, "the fields parameter names every section left out or cut")
		assert.Nil(t, w.meta.OmittedFields)
		assert.Zero(t, w.meta.OmittedFieldCount)
		return
	}
	assert.Equal(t, len(w.partial), w.meta.OmittedFieldCount, "omittedFieldCount counts every section left out or cut")
	require.LessOrEqual(t, len(w.meta.OmittedFields), len(w.partial))
	if len(w.meta.OmittedFields) > 0 {
		assert.Equal(t, w.partial[:len(w.meta.OmittedFields)], w.meta.OmittedFields, "the listed names are the first ones, in input order")
	}
}

func TestWideObjectsShowValuesAndABoundedListOfTheRest(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		budget budget.Budget
	}{
		{"303 variables with the gateway budget", envObject(303, false), gatewayBudget},
		{"1,504 variables with the default budget", envObject(1504, false), budget.Default()},
		{"1,504 variables with an id, a name and a type at the end", envObject(1504, true), budget.Default()},
		{"16,000 variables with the gateway budget", envObject(16_000, true), gatewayBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSummarizer(t, &summary.Options{Budget: tt.budget})
			w := checkWide(t, s, tt.data)
			assertBoundedList(t, w)
			assert.Equal(t, summary.FieldsAll, w.meta.DetailsAvailable.Parameters["fields"], "too many names to list them all")
			assert.LessOrEqual(t, w.respToks, tt.budget.Threshold/4, "within the summary budget")
			assert.Greater(t, len(w.sum), 10, "the summary shows real values")
			assert.GreaterOrEqual(t, w.respToks-w.listToks, w.respToks/2, "values and structure, not names, make most of the summary")
			if strings.Contains(tt.name, "an id") {
				for _, k := range []string{"id", "name", "type"} {
					assert.Contains(t, w.sum, k, "identity fields come first")
				}
			}
			t.Logf("%d tokens: %d values, %d of %d left-out names listed in %d tokens",
				w.respToks, len(w.sum), len(w.meta.OmittedFields), w.meta.OmittedFieldCount, w.listToks)
		})
	}

	t.Run("a short list of left-out sections stays in the fields parameter", func(t *testing.T) {
		s := newSummarizer(t, &summary.Options{Budget: gatewayBudget})
		w := checkWide(t, s, mustJSON(verboseBooking()))
		assertBoundedList(t, w)
		assert.NotEqual(t, summary.FieldsAll, w.meta.DetailsAvailable.Parameters["fields"])
		assert.NotContains(t, string(mustJSON(w.meta)), "omittedField")
	})

	t.Run("fields=all fetches everything the summary left out", func(t *testing.T) {
		data := envObject(1504, true)
		s := newSummarizer(t, nil)
		r, err := s.Summarize(data, summary.Shape{})
		require.NoError(t, err)
		rest, err := summary.ServeDetails(data, r.Summary.Meta.DetailsAvailable.Parameters["fields"])
		require.NoError(t, err)
		assert.Equal(t, data, rest)
	})
}

// TestPropertyWideSummariesBoundTheirLists summarizes generated wide
// objects with random budgets: the left-out names always take at most a
// tenth of the threshold, the list is the whole list or its first names
// with their number, the summary stays within its budget by exact count
// (unless its meta alone is over it), and the summary with the sections the fields parameter fetches holds the
// whole object.
func TestPropertyWideSummariesBoundTheirLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 10))
	for i := range 40 {
		n := 5 + rng.IntN(3000)
		threshold := 20 + rng.IntN(6000)
		data := envObject(n, rng.IntN(2) == 0)
		b := budget.Budget{Threshold: threshold, HardCap: 3 * threshold}
		name := fmt.Sprintf("case %d: %d fields, threshold %d", i, n, threshold)
		t.Run(name, func(t *testing.T) {
			s := newSummarizer(t, &summary.Options{Budget: b})
			r, err := s.Summarize(data, summary.Shape{})
			require.NoError(t, err)
			if !r.Summarized {
				return
			}
			w := checkWide(t, s, data)
			assertBoundedList(t, w)
			if w.respToks > max(threshold/4, 1) {
				// Over the summary budget only when the summary with no
				// field but the identity ones is over it already.
				for _, p := range w.meta.ProjectedFields {
					assert.Equal(t, "id", p, "only identity fields in a summary over its budget")
				}
			}

			rest, err := summary.ServeDetails(data, w.meta.DetailsAvailable.Parameters["fields"])
			require.NoError(t, err)
			got := decode(t, rest).(map[string]any)
			for k, v := range w.sum {
				if _, ok := got[k]; !ok {
					got[k] = v
				}
			}
			assert.Equal(t, decode(t, data), any(got), "nothing is out of reach")
		})
	}
}
