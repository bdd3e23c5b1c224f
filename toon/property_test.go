package toon_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/internal/testing/shapes"
	"github.com/ctxfit/ctxfit/toon"
)

var delimiters = []toon.Delimiter{toon.Comma, toon.Tab, toon.Pipe}

// roundTrip encodes data, checks the TOON is well formed, decodes it and
// checks that the result is data as a JSON value, keys in order. It
// returns the TOON.
func roundTrip(t *testing.T, data []byte, opts *toon.Options) string {
	t.Helper()
	out, err := toon.Encode(nil, data, opts)
	require.NoError(t, err, "input: %s", data)
	wellFormed(t, out, opts)
	back, err := toon.Decode(nil, out, opts)
	require.NoError(t, err, "TOON:\n%s", out)
	require.Equal(t, toon.Normal(data), string(back), "TOON:\n%s", out)
	return string(out)
}

// wellFormed checks the whitespace rules of spec §12 on what Encode wrote:
// LF only, no trailing space or newline, indentation by whole levels of
// spaces.
func wellFormed(t *testing.T, out []byte, opts *toon.Options) {
	t.Helper()
	indent := toon.DefaultIndent
	if opts != nil && opts.Indent > 0 {
		indent = opts.Indent
	}
	if len(out) == 0 {
		return
	}
	assert.NotEqual(t, byte('\n'), out[len(out)-1], "a trailing newline")
	for i, ln := range strings.Split(string(out), "\n") {
		require.NotEmpty(t, ln, "line %d is empty", i+1)
		assert.NotContains(t, ln, "\r", "line %d", i+1)
		assert.False(t, strings.HasSuffix(ln, " "), "line %d ends in a space: %q", i+1, ln)
		body := strings.TrimLeft(ln, " ")
		assert.Zero(t, (len(ln)-len(body))%indent, "line %d is indented by %d spaces", i+1, len(ln)-len(body))
		assert.False(t, strings.HasPrefix(body, "\t"), "line %d is indented with a tab", i+1)
	}
}

// TestEveryGeneratedTableRoundTripsAsATable: a uniform array of objects
// with primitive values is one header line and one row per object, with
// every delimiter and indentation, and decodes to exactly the input.
func TestEveryGeneratedTableRoundTripsAsATable(t *testing.T) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 1))
		rows := 1 + r.IntN(40)
		data := shapes.Values{R: r}.Table(rows)
		opts := &toon.Options{Delimiter: delimiters[seed%3], Indent: 1 + int(seed%4)}
		out := roundTrip(t, data, opts)
		lines := strings.Split(out, "\n")
		require.Len(t, lines, rows+1, "seed %d: a header and a row per object:\n%s", seed, out)
		assert.Regexp(t, `^\[`+strconv.Itoa(rows)+`[\t|]?\]\{.*\}:$`, lines[0], "seed %d", seed)

		// The same array as a field of an object, and pretty-printed.
		var pretty bytes.Buffer
		require.NoError(t, json.Indent(&pretty, append(append([]byte(`{"items": `), data...), '}'), "", "  "))
		out = roundTrip(t, pretty.Bytes(), opts)
		require.Len(t, strings.Split(out, "\n"), rows+1, "seed %d", seed)
	}
}

// TestEveryGeneratedTreeRoundTrips: values that mix every form of array
// and object decode to exactly the input, and white space in the input
// changes nothing in the TOON.
func TestEveryGeneratedTreeRoundTrips(t *testing.T) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 2))
		data := shapes.Values{R: r}.Tree(50 + r.IntN(3000))
		opts := &toon.Options{Delimiter: delimiters[seed%3]}
		out := roundTrip(t, data, opts)

		var pretty bytes.Buffer
		require.NoError(t, json.Indent(&pretty, data, " ", "\t"))
		again, err := toon.Encode(nil, pretty.Bytes(), opts)
		require.NoError(t, err)
		assert.Equal(t, out, string(again), "seed %d: the same TOON from the pretty-printed input", seed)
	}
}

// TestTheShapesOfRealServersRoundTripOrAreRefused: every shape of the
// corpus either round-trips exactly or is refused with ErrUnsupported
// (invalid UTF-8, lone surrogates, numbers beyond float64, deep nesting),
// and texts that are not JSON are ErrInvalidJSON.
func TestTheShapesOfRealServersRoundTripOrAreRefused(t *testing.T) {
	encoded, refused := 0, map[string]int{}
	for i := range 4 * len(shapes.Shapes) {
		r := rand.New(rand.NewPCG(uint64(i), 3))
		resp := shapes.Generate(r, i, 2000+r.IntN(20000))
		out, err := toon.Encode(nil, resp.Body, nil)
		switch {
		case !rawjson.Valid(resp.Body):
			require.ErrorIs(t, err, toon.ErrInvalidJSON, resp.Name)
		case err != nil:
			require.ErrorIs(t, err, toon.ErrUnsupported, resp.Name)
			refused[reason(err)]++
		default:
			encoded++
			back, err := toon.Decode(nil, out, nil)
			require.NoError(t, err, resp.Name)
			require.Equal(t, toon.Normal(resp.Body), string(back), resp.Name)
		}
	}
	t.Logf("encoded %d shapes; refused: %v", encoded, refused)
	assert.Positive(t, encoded)
}

// reason is the kind of an ErrUnsupported, for the log.
func reason(err error) string {
	msg := err.Error()
	for _, r := range []string{"not valid Unicode", "repeated", "float64", "nesting", "exponent"} {
		if strings.Contains(msg, r) {
			return r
		}
	}
	return msg
}

var canonicalForm = regexp.MustCompile(`^(0|-?[1-9][0-9]*(\.[0-9]*[1-9])?|-?0\.[0-9]*[1-9]|-?[1-9](\.[0-9]*[1-9])?e[+-][1-9][0-9]*)$`)

// TestCanonicalNumbersAreExact: the canonical form of any JSON number is
// the same mathematical value, in the form spec §2 prescribes: an
// exponent exactly outside [1e-6, 1e21), no leading or trailing zeros.
func TestCanonicalNumbersAreExact(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	digits := func(n int, leading bool) string {
		var b strings.Builder
		for i := range n {
			d := byte('0' + r.IntN(10))
			if i == 0 && !leading && d == '0' && n > 1 {
				d = '1'
			}
			b.WriteByte(d)
		}
		return b.String()
	}
	lo, hi := new(big.Rat).SetFrac64(1, 1000000), new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(21), nil))
	for range 20000 {
		var num strings.Builder
		if r.IntN(2) == 0 {
			num.WriteByte('-')
		}
		num.WriteString(digits(1+r.IntN(25), false))
		if r.IntN(2) == 0 {
			num.WriteString("." + digits(1+r.IntN(25), true))
		}
		if r.IntN(2) == 0 {
			num.WriteString([]string{"e", "E"}[r.IntN(2)] + []string{"", "+", "-"}[r.IntN(3)] + strconv.Itoa(r.IntN(400)))
		}
		in := num.String()
		require.True(t, rawjson.Valid([]byte(in)), in)
		got, ok := toon.CanonicalNumber(in)
		require.True(t, ok, in)
		require.Regexp(t, canonicalForm, got, "the canonical form of %s", in)

		want, _ := new(big.Rat).SetString(in)
		have, ok := new(big.Rat).SetString(got)
		require.True(t, ok, got)
		require.Zero(t, want.Cmp(have), "%s is %s", in, got)
		abs := new(big.Rat).Abs(have)
		inRange := have.Sign() == 0 || abs.Cmp(lo) >= 0 && abs.Cmp(hi) < 0
		assert.Equal(t, !inRange, strings.Contains(got, "e"), "%s is %s", in, got)
	}
}

func TestCanonicalNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0": "0", "-0.0": "0", "0e5": "0", "-0E-7": "0", "0.000": "0",
		"1": "1", "1.0": "1", "1.50": "1.5", "-7": "-7", "100": "100", "1e2": "100", "1E+6": "1000000",
		"0.000001": "0.000001", "1e-6": "0.000001", "1e-7": "1e-7", "0.0000001": "1e-7", "-1.5e-7": "-1.5e-7",
		"100000000000000000000": "100000000000000000000", "1e21": "1e+21", "1.5e21": "1.5e+21",
		"12345678901234567890123": "1.2345678901234567890123e+22", "0.1234567890123456789": "0.1234567890123456789",
		"1e400": "1e+400", "1e-400": "1e-400", "123.456e1": "1234.56", "123.456e-5": "0.00123456",
		"0.30000000000000004": "0.30000000000000004", "9007199254740993": "9007199254740993",
	} {
		got, ok := toon.CanonicalNumber(in)
		require.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	_, ok := toon.CanonicalNumber("1e1000000000000000")
	assert.False(t, ok, "an exponent of 10^15")
}

// TestNumbersOverflowExactlyBeyondFloat64: Encode refuses a number exactly
// when strconv.ParseFloat reads it as an infinity.
func TestNumbersOverflowExactlyBeyondFloat64(t *testing.T) {
	for _, in := range []string{"1.7976931348623157e308", "1.7976931348623158e308", "1.79769313486231580793728971405301e308",
		"1.7976931348623159e308", "1e309", "-1e309", "1e308", "99e307", "1e400", "1e-400", "1" + strings.Repeat("0", 308), "1" + strings.Repeat("0", 309)} {
		c, ok := toon.CanonicalNumber(in)
		require.True(t, ok)
		_, err := strconv.ParseFloat(in, 64)
		want := err != nil && errors.Is(err, strconv.ErrRange) && !strings.Contains(in, "e-")
		assert.Equal(t, want, toon.Overflows(c), "%s (%s)", in, c)
		_, err = toon.Encode(nil, []byte(in), nil)
		assert.Equal(t, want, err != nil, fmt.Sprintf("%s: %v", in, err))
	}
}
