package ctxfit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/itchyny/gojq"

	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/telemetry"
)

// A query (Request.Query) is a jq expression (https://jqlang.org/manual/,
// as github.com/itchyny/gojq implements it) evaluated over the JSON of a
// response: the response itself without a cursor, or the one a cursor
// belongs to. Its results, as a JSON array, are shaped like any response:
// within the hard cap they come whole; over it, in pages or chunks with
// cursors. Object keys come out sorted, numbers as the data wrote them.
//
// A query runs within Config.ShapeTimeout and stops when its client goes
// (the functions gojq runs in one long step are ctxfit's own, which check
// the context as they go: queryfuncs.go), sees no environment variables
// ($ENV is empty), reads no other input, and its output is bounded by
// maxQueryOutput, measured before it is written. No step builds a value
// past a bound: a string or array that +, *, add or join would make (an
// array counted at 16 bytes an item), or a JSON text tojson or tostring
// would write, over max(64 MiB, 4 times the data), or an integer over
// 2^18 bits (about 78,900 digits, from *), is an error that says so (see
// minQueryValue, maxQueryIntBits). No step writes out or walks a value
// past that bound either: string interpolation, the formats (@json,
// @text, @csv, @tsv, @html, @uri, @sh, @base64), comparisons of two
// values that are not literals, sort, unique, min, max and explode check the
// JSON length of what they read first (a value that holds itself twice,
// doubled forty times, is small in memory and a terabyte walked). An
// update (.[N] = x, |=, setpath, pick, fromstream) that would fill an
// array up to an index past that bound is an error, and what the query's
// steps build in all (what arrays collect, the strings and arrays its
// steps make, what its updates add, what fromjson parses) is counted
// against the same bound (jqFuncs.hold), so that [range(1e9)] stops at it,
// not at the time limit; a collection gives back what it built and does
// not hold (jqFuncs.released).
// A query that breaks a limit, or on which gojq panics, is a clear error.

// Limits of a query.
const (
	maxQuery       = 1000     // bytes of a jq expression
	maxQueryOutput = 16 << 20 // bytes of its results, as JSON
)

// query serves the results of the jq expression expr over s.data.
func (s *shaper) query(expr string) (Result, error) {
	out, n, err := runQuery(s.ctx, s.data, expr)
	var qp *queryPanic
	if errors.As(err, &qp) {
		// A bug of the jq engine or of ctxfit's functions, not a cut of the
		// response: the caller reads that its query failed. The panic's
		// value may hold anything (data): it goes to the log only.
		s.g.logger.Error("ctxfit: a query panicked", "endpoint", s.req.Endpoint, "query", shorten(expr, 200),
			"panic", fmt.Sprint(qp.value), "stack", qp.stack)
		return Result{}, err
	}
	if err != nil {
		if s.ctx.Err() != nil {
			return Result{}, errTimeout
		}
		return Result{}, err
	}
	// The results are a snapshot of their own: cursors point into them.
	s.data, s.view, s.snap, s.id = out, "query="+expr, nil, ""
	s.cutOf(0, len(out)) // past the time limit from here, a cut of the results
	s.measure(out)
	if s.rec.TokensBefore <= s.rl.budget.HardCap {
		rec := withSizes(s.rec, out, s.rec.TokensBefore, telemetry.StrategyQuery, telemetry.OutcomeShaped)
		return Result{Body: out, ContentType: jsonType, Shaped: true, Strategy: telemetry.StrategyQuery, Record: rec,
			Guidance: fmt.Sprintf("The query returned %s result%s (%s tokens).", thousands(n), plural(n), thousands(s.rec.TokensBefore))}, nil
	}
	start, end, _ := rawjson.Root(out)
	res, err := s.serveValue(start, end)
	if err == nil {
		res.Guidance = fmt.Sprintf("The query returned %s result%s (about %s tokens), in pages. ", thousands(n), plural(n), thousands(s.rec.TokensBefore)) + res.Guidance
	}
	return res, err
}

// queryTestOptions are compiler options tests add to every query (a
// function that panics); nil outside tests.
var queryTestOptions []gojq.CompilerOption

// queryPanic is the error of a query that panicked while it compiled or
// ran: its message says so, without the panic's value, which may hold
// anything.
type queryPanic struct {
	value any
	stack string
}

func (*queryPanic) Error() string {
	return ErrBadRequest.Error() + ": the query stopped on an internal error of the jq engine (logged for the operator); " +
		"write it another way (other functions, or a simpler expression)"
}

func (*queryPanic) Unwrap() error { return ErrBadRequest }

// runQuery evaluates expr over the JSON data and returns its results as a
// JSON array, and how many there are. A panic while the query compiles or
// runs is a *queryPanic error.
func runQuery(ctx context.Context, data []byte, expr string) (_ []byte, _ int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &queryPanic{value: p, stack: string(debug.Stack())}
		}
	}()
	switch {
	case strings.TrimSpace(expr) == "":
		return nil, 0, fmt.Errorf("%w: the query is empty; pass a jq expression such as .items[0] or [.[] | select(.status == \"open\")]", ErrBadRequest)
	case len(expr) > maxQuery:
		return nil, 0, fmt.Errorf("%w: the query is %d bytes, at most %d; shorten it", ErrBadRequest, len(expr), maxQuery)
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, 0, queryError(expr, err)
	}
	opts := append(withBoundedFunctions(ctx, q, expr, queryValueLimit(len(data))), gojq.WithEnvironLoader(func() []string { return nil }))
	opts = append(opts, queryTestOptions...)
	code, err := gojq.Compile(q, opts...)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: the query does not compile: %v; fix it (jq syntax: https://jqlang.org/manual/)", ErrBadRequest, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var input any
	if err := dec.Decode(&input); err != nil {
		return nil, 0, fmt.Errorf("%w: a query needs a JSON response, and this one is not JSON; use a search instead", ErrBadRequest)
	}
	out := []byte{'['}
	n := 0
	iter := code.RunWithContext(ctx, input)
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := v.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break
			}
			if ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
			return nil, 0, fmt.Errorf("%w: the query failed on this data: %s; fix the expression (for example guard a step with ? or select)", ErrBadRequest, shorten(err.Error(), 300))
		}
		// An array that holds itself twice, doubled forty times, is small
		// in memory and a terabyte of JSON: measured before it is written.
		if at, err := jsonAtLeast(ctx, v, maxQueryOutput-len(out)); err != nil {
			return nil, 0, err
		} else if len(out)+at > maxQueryOutput {
			return nil, 0, fmt.Errorf("%w: the query's results are over %d MiB; narrow it (select fewer items or fields)", ErrBadRequest, maxQueryOutput>>20)
		}
		b, err := gojq.Marshal(v)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: a result of the query cannot be written as JSON: %v", ErrBadRequest, err)
		}
		if len(out)+len(b) > maxQueryOutput {
			return nil, 0, fmt.Errorf("%w: the query's results are over %d MiB; narrow it (select fewer items or fields)", ErrBadRequest, maxQueryOutput>>20)
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
		n++
	}
	return append(out, ']'), n, nil
}

// queryError says where a jq expression fails to parse.
func queryError(expr string, err error) error {
	var pe *gojq.ParseError
	if errors.As(err, &pe) {
		at := min(max(pe.Offset-len(pe.Token), 0), len(expr))
		return fmt.Errorf("%w: the query has a syntax error at byte %d (%s) in %q; fix it (jq syntax: https://jqlang.org/manual/)",
			ErrBadRequest, at, err, shorten(expr, 120))
	}
	return fmt.Errorf("%w: the query does not parse: %v; fix it (jq syntax: https://jqlang.org/manual/)", ErrBadRequest, err)
}
