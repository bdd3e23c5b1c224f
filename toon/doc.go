// Package toon writes JSON as TOON (Token-Oriented Object Notation, spec
// v3.3, https://github.com/toon-format/spec) and reads it back. TOON
// carries the JSON data model in fewer tokens: a uniform array of objects
// becomes a table with one header of field names and one delimited row per
// object, objects lose their braces and most quotes, and arrays of
// primitives fit on one line:
//
//	bookings[2]{id,status,nights}:
//	  BK00001,confirmed,3
//	  BK00002,pending,1
//	owner:
//	  name: Ada
//	  tags[2]: admin,ops
//
// [Encode] works on raw JSON bytes, read with ctxfit's rawjson scanner;
// [Decode] turns TOON back into JSON, for tests, round trips and callers
// that must check what a model was shown.
//
// # What Encode writes
//
// Objects are "key: value" lines, nested objects indented below their key,
// an empty object a bare "key:" (at the root, the empty document). An array
// is "key: []" when empty; "key[N]: v1,v2" when all its elements are
// primitives; a table "key[N]{f1,f2}:" with one row per element when every
// element is an object with at least one member, all with the same keys in
// the same order, every value a primitive; otherwise "key[N]:" and one "- "
// list item per element (spec §9, §10). Strings are quoted only when the
// spec requires it (§7.2), and also when they start with '#' or are a
// number after a '+', which spec v4 added, so that v3 and v4 decoders read
// the output alike, and when they start or end with any white space a
// decoder might trim (JavaScript's String.trim: no-break space, U+2028,
// U+FEFF and the like). Keys are quoted unless they match
// ^[A-Za-z_][A-Za-z0-9_.]*$.
// Key folding (§13.4, optional in v3 and removed in v4) is never done: a
// dotted key is always one literal key. [Options] choose the delimiter
// (comma, tab or pipe) and the indentation.
//
// A table needs the same key order in every object because it has one
// order for all rows; the spec also allows objects that list the same keys
// in other orders to share one, which loses their order. Encode writes
// those as list items instead, so that the order survives.
//
// # When it pays
//
// TOON saves the most on tables. The 500 bookings of the example MCP
// servers, flattened to rows (tags joined), take a third fewer tokens as
// TOON than as compact JSON (exact o200k_base counts: 58 tokens per booking
// against 87), so a page of the same budget holds half as many again.
// Lists of objects that are not uniform are written as list items, one
// indented line per field, which can cost more than compact JSON: the same
// bookings with their tags as a list (so no table) take about a fifth more
// tokens as TOON. A caller that chooses between the two should count both,
// or encode only arrays that are tables. docs/benchmarks.md has the measurements
// and the command that makes them.
//
// # What round-trips
//
// For every input Encode accepts, Decode of its output is the input as a
// JSON value, keys in the same order: the same structure, the same keys
// and strings (the same Unicode text; how the input spelled an escape, such
// as \u00e9 or \/, is not kept), the same numbers as mathematical values,
// exactly. What is not kept is the spelling: white space between tokens,
// string escapes, and the form of numbers, which TOON writes in canonical
// form (spec §2):
//
//   - 1.0 is 1, 1.50 is 1.5, 1e6 and 1E+6 are 1000000, 0.0000010 is
//     0.000001: no exponent from 1e-6 to 1e21, no trailing zeros.
//   - Outside that range the exponent form, with every digit kept:
//     12345678901234567890123 is 1.2345678901234567890123e+22, 1E-7 is
//     1e-7. Numbers are never rounded to a float64.
//   - -0 (and -0.0, -0e5) is 0: the same number, but the sign of a zero is
//     lost, as the spec requires.
//
// So Decode(Encode(x)) is byte for byte the compact form of x with strings
// escaped as rawjson.Escape does and numbers in that canonical form.
//
// # What Encode refuses
//
// Valid JSON that TOON cannot carry losslessly is refused with an error
// wrapping [ErrUnsupported], naming the byte offset; callers send the JSON
// as it is:
//
//   - a string or key that is not Unicode text: bytes that are not UTF-8,
//     or a \u escape of a surrogate that is not half of a pair (\ud800).
//     TOON is UTF-8 text and its decoders reject surrogate escapes.
//   - an object with a repeated key: JSON readers keep one of the values,
//     strict TOON decoders reject the document.
//   - a number beyond float64's range, whose magnitude rounds above
//     1.7976931348623157e308 (1e400, or a 1 followed by 400 zeros):
//     Decode would keep it, but readers that parse numbers as float64,
//     the reference implementation among them, would read a string or
//     infinity. Numbers below float64's smallest are accepted and kept
//     exactly (1e-400 is written 1e-400; a float64 reader reads 0 from it
//     as from the JSON).
//   - a number whose exponent is 10^15 or more in magnitude.
//   - nesting deeper than [Options.MaxDepth] (default 64 levels): every
//     level costs indentation on every line below it.
//
// Input that is not JSON at all is [ErrInvalidJSON].
//
// # Other implementations
//
// The end-to-end tests (e2e/toon_test.go, e2e/ts/toon.test.mjs) check
// Encode and Decode against the reference implementation from npm,
// @toon-format/toon 2.3.1 (spec v3.3), over generated tables and trees,
// the example bookings and edge cases: its decoder reads Encode's output
// as JSON.parse reads the input (values and key order; numbers as float64,
// as JSON.parse reads them, -0 as 0), and so does its spec v4 release
// (4.4.0); Decode reads its encoder's output as JSON.parse read the input,
// except that the reference encoder writes objects with the same keys in
// other orders as one table, in the first object's order.
//
// Decode reads spec v3 TOON in strict mode; it does not read spec v4's
// additions (comment lines, keyed tables, nested field groups) nor expand
// dotted keys.
package toon
