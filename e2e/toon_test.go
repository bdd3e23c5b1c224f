package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/internal/testing/shapes"
	"github.com/ctxfit/ctxfit/toon"
)

// toonCase is one input of e2e/ts/toon.test.mjs: JSON and what toon.Encode
// wrote for it.
type toonCase struct {
	Name      string `json:"name"`
	JSON      string `json:"json"`
	TOON      string `json:"toon"`
	Delimiter string `json:"delimiter"`
	Indent    int    `json:"indent"`
}

// TestTheReferenceTOONImplementationReadsAndWritesWhatToonDoes runs
// e2e/ts/toon.test.mjs over generated inputs: tables and trees of every
// form (internal/testing/shapes.Values), the example bookings as rows, page by
// page and whole, and as listed, and edge cases of numbers, strings and
// keys. The JavaScript side checks that the reference decoders (v3 and v4)
// read toon.Encode's output as JSON.parse reads the input; this side
// checks that toon.Decode reads the reference encoder's output of each
// input as JSON.parse read it. It needs Node 20 or later and the npm
// dependencies: (cd e2e/ts && npm ci --no-audit --no-fund), which test.sh
// does. Without node it is skipped, except under CI=true, where it fails.
func TestTheReferenceTOONImplementationReadsAndWritesWhatToonDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed; the end-to-end tests need Node 20 or later")
		}
		t.Skip("node is not installed")
	}
	dir, err := filepath.Abs("ts")
	require.NoError(t, err)
	for _, pkg := range []string{"toon", "toon-v4"} {
		_, err := os.Stat(filepath.Join(dir, "node_modules", "@toon-format", pkg, "package.json"))
		require.NoError(t, err, "@toon-format/%s is missing: run (cd e2e/ts && npm ci --no-audit --no-fund), as test.sh does", pkg)
	}

	cases := toonCases(t)
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "cases.json"), filepath.Join(tmp, "reference.json")
	b, err := json.Marshal(cases)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(in, b, 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=dot", "toon.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "CTXFIT_E2E_TOON_CASES="+in, "CTXFIT_E2E_TOON_OUT="+out)
	stdout, err := cmd.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", stdout)

	b, err = os.ReadFile(out)
	require.NoError(t, err)
	var results []struct {
		Name   string `json:"name"`
		Parsed string `json:"parsed"` // JSON.stringify(JSON.parse(json))
		TOON   string `json:"toon"`   // the reference encoder's
	}
	require.NoError(t, json.Unmarshal(b, &results))
	require.Len(t, results, len(cases), "a result per case")
	for i, r := range results {
		c := cases[i]
		require.Equal(t, c.Name, r.Name)
		t.Run(c.Name, func(t *testing.T) {
			got, err := toon.Decode(nil, []byte(r.TOON), &toon.Options{Indent: c.Indent})
			require.NoError(t, err, "the reference encoder's TOON:\n%s", r.TOON)
			if c.Name == reordered {
				// The reference encoder writes one table in the first object's
				// key order (which toon.Encode does not do, to keep each order):
				// the same objects, not the same key order.
				assert.Error(t, sameJSON(r.Parsed, string(got)), "the reference encoder loses the key order:\n%s", r.TOON)
				want, err := rawjson.Canonical(nil, []byte(r.Parsed))
				require.NoError(t, err)
				have, err := rawjson.Canonical(nil, got)
				require.NoError(t, err)
				assert.Equal(t, string(want), string(have))
				return
			}
			assert.NoError(t, sameJSON(r.Parsed, string(got)), "toon.Decode reads the reference encoder's TOON as JSON.parse read the input:\n%s\n%s", r.Parsed, got)
		})
	}
}

// reordered is the case that the reference encoder does not keep as it is.
const reordered = "objects with the same keys in another order"

// toonCases generates the inputs of the test and encodes them, with the
// three delimiters and two indentations in turn.
func toonCases(t *testing.T) []toonCase {
	t.Helper()
	var cases []toonCase
	add := func(name string, data []byte) {
		i := len(cases)
		delim := []toon.Delimiter{toon.Comma, toon.Tab, toon.Pipe}[i%3]
		opts := &toon.Options{Delimiter: delim, Indent: 2 + 2*(i/3%2)}
		out, err := toon.Encode(nil, data, opts)
		require.NoError(t, err, "%s: %s", name, data)
		cases = append(cases, toonCase{Name: name, JSON: string(data), TOON: string(out), Delimiter: string(rune(delim)), Indent: opts.Indent})
	}
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 5))
		add(fmt.Sprintf("table %d", seed), shapes.Values{R: r, Float64Exact: seed%4 != 0}.Table(1+r.IntN(30)))
		add(fmt.Sprintf("tree %d", seed), shapes.Values{R: r, Float64Exact: seed%4 != 0}.Tree(200+r.IntN(3000)))
	}

	rows := bookingtools.BookingRows("")
	for p := 0; p < len(rows); p += 50 {
		b, err := json.Marshal(rows[p : p+50])
		require.NoError(t, err)
		add(fmt.Sprintf("bookings page %d (rows %d to %d)", p/50+1, p+1, p+50), b)
	}
	b, err := json.Marshal(rows)
	require.NoError(t, err)
	add("all 500 bookings as rows", b)
	b, err = json.Marshal(bookingtools.ListBookings(""))
	require.NoError(t, err)
	add("all 500 bookings as listed (tags a list)", b)
	b, err = json.Marshal(map[string]any{"query": "", "total": 3, "results": bookingtools.BookingRows("")[:3]})
	require.NoError(t, err)
	add("a search result: fields beside a table", b)

	for _, c := range []struct{ name, data string }{
		{"numbers in every spelling", `[0,-0,-0.0,1.0,2.50,1e6,1E+6,1e-6,1E-7,-1.5e-7,1e21,1.5e+21,100000000000000000000,` +
			`12345678901234567890123,9007199254740993,0.1234567890123456789,1e-400,1.7976931348623157e308,5e-324]`},
		{"strings a row must quote", `[{"s":""},{"s":" x"},{"s":"x "},{"s":"-"},{"s":"- x"},{"s":"#x"},{"s":"+1"},{"s":"05"},` +
			`{"s":"1e5"},{"s":"true"},{"s":"null"},{"s":"a,b"},{"s":"a|b"},{"s":"a\tb"},{"s":"a:b"},{"s":"\"q\""},{"s":"[1]"},` +
			`{"s":"{}"},{"s":"\\"},{"s":"\n"},{"s":"\u0000"},{"s":"\u00a0x"},{"s":"x\u2028"},{"s":"\ufeff"},{"s":"é😀"}]`},
		{"keys that must be quoted", `{"a b":1,"a,b":2,"a|b":3,"a:b":4,"":5,"123":6,"-x":7,"#x":8,"[i]":9,"é":10,"a.b":11,"x\ny":12}`},
		{reordered, `[{"a":1,"b":2},{"b":3,"a":4}]`},
		{"empty containers everywhere", `{"a":[],"o":{},"l":[[],{},[{}],[[]]],"t":[{"e":[]}]}`},
		{"a lone string", `"hello, world"`},
		{"an empty object", `{}`},
		{"an empty array", `[]`},
	} {
		add(c.name, []byte(c.data))
	}
	return cases
}

// sameJSON reports how two JSON texts differ as values, keys in order and
// numbers by exact value, or nil when they do not.
func sameJSON(a, b string) error {
	da, db := json.NewDecoder(strings.NewReader(a)), json.NewDecoder(strings.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	for {
		ta, errA := da.Token()
		tb, errB := db.Token()
		switch {
		case errors.Is(errA, io.EOF) && errors.Is(errB, io.EOF):
			return nil
		case errA != nil || errB != nil:
			return fmt.Errorf("%v / %v", errA, errB)
		}
		na, okA := ta.(json.Number)
		nb, okB := tb.(json.Number)
		if okA && okB {
			ra, _ := new(big.Rat).SetString(string(na))
			rb, _ := new(big.Rat).SetString(string(nb))
			if ra == nil || rb == nil || ra.Cmp(rb) != 0 {
				return fmt.Errorf("the numbers %s and %s differ", na, nb)
			}
			continue
		}
		if !reflect.DeepEqual(ta, tb) {
			return fmt.Errorf("%#v and %#v differ", ta, tb)
		}
	}
}
